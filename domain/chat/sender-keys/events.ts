// The sender-keys slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type SenderKeyEvent = DomainEvent<
  'SenderKeyDistributed',
  { channel_id: string; user_id: string; chain_id: number; distribution_sealed: string; at: string }
>;

export const SENDER_KEY_EVENT_TYPES = eventTypes<SenderKeyEvent>()(['SenderKeyDistributed']);
