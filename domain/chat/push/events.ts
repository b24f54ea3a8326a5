// The push slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type PushRemovalReason = 'unsubscribed' | 'replaced' | 'gone';

export type PushSubscriptionEvent =
  | DomainEvent<
      'PushSubscriptionAdded',
      {
        subscription_id: string;
        user_id: string;
        origin: string;
        endpoint_sealed: string;
        keys_sealed: string;
        keys_hash: string;
        at: string;
      }
    >
  | DomainEvent<
      'PushSubscriptionRemoved',
      { subscription_id: string; user_id: string; reason: PushRemovalReason; status: number | null; at: string }
    >;

export const PUSH_SUBSCRIPTION_EVENT_TYPES = eventTypes<PushSubscriptionEvent>()([
  'PushSubscriptionAdded',
  'PushSubscriptionRemoved',
]);
