// The customers slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { Changes, ContactRole, CustomerStatus, Product, TouchpointKind } from '../catalog.ts';

export type CustomerFields = {
  name: string;
  primary_email: string | null;
  status: CustomerStatus;
  notes: string | null;
  pipeline_stage: string | null;
  next_action: string | null;
  /** YYYY-MM-DD */
  next_action_date: string | null;
  source: string | null;
};

export type ContactFields = {
  name: string;
  email: string;
  role: ContactRole;
  last_contacted_at: string | null;
};

export type TouchpointFields = {
  kind: TouchpointKind;
  summary: string;
  occurred_at: string;
  contact_email: string | null;
};

export type AgreementFields = {
  kind: string;
  title: string;
  signed_at: string;
  expires_at: string | null;
  document_url: string | null;
};

export type UsageFields = {
  product: Product;
  metric: string;
  quantity: number;
  period_start: string;
  period_end: string;
};

export type Ref = { customer_id: string; slug: string };

export type CustomerEvent =
  | DomainEvent<'CustomerCreated', Ref & CustomerFields & { via: 'api' | 'lead'; at: string }>
  | DomainEvent<'CustomerUpdated', Ref & { changes: Changes; at: string }>
  | DomainEvent<'CustomerDeleted', Ref & { at: string }>
  | DomainEvent<'ContactAdded', Ref & ContactFields & { contact_id: string; at: string }>
  | DomainEvent<'TouchpointLogged', Ref & TouchpointFields & { touchpoint_id: string; at: string }>
  | DomainEvent<'AgreementRecorded', Ref & AgreementFields & { agreement_id: string; at: string }>
  | DomainEvent<'UsageRecorded', Ref & UsageFields & { usage_id: string; at: string }>;

export const CUSTOMER_EVENT_TYPES = eventTypes<CustomerEvent>()([
  'CustomerCreated',
  'CustomerUpdated',
  'CustomerDeleted',
  'ContactAdded',
  'TouchpointLogged',
  'AgreementRecorded',
  'UsageRecorded',
]);
