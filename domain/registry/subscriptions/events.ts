// The subscriptions slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { Changes, Product, SubscriptionStatus } from '../catalog.ts';

export type SubscriptionFields = {
  status: SubscriptionStatus;
  mrr_cents: number;
  /** YYYY-MM-DD */
  renewal_date: string | null;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
};

export type Ref = { subscription_id: string; customer_id: string; customer_slug: string; product: Product };

export type SubscriptionEvent =
  | DomainEvent<'SubscriptionCreated', Ref & SubscriptionFields & { at: string }>
  | DomainEvent<'SubscriptionUpdated', Ref & { changes: Changes; at: string }>;

export const SUBSCRIPTION_EVENT_TYPES = eventTypes<SubscriptionEvent>()(['SubscriptionCreated', 'SubscriptionUpdated']);
