// The scheduled slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type ScheduledContent = {
  ciphertext: string;
  send_at: string;
  thread_root_id: string | null;
  mentions: string[];
  file_ids: string[];
};

type Base = { scheduled_message_id: string; channel_id: string; sender_id: string; at: string };

export type ScheduledEvent =
  | DomainEvent<'ScheduledMessageCreated', Base & ScheduledContent>
  /** The whole content after the edit, and which fields changed. */
  | DomainEvent<'ScheduledMessageEdited', Base & ScheduledContent & { changed: (keyof ScheduledContent)[] }>
  | DomainEvent<'ScheduledMessageCancelled', Base>
  | DomainEvent<'ScheduledMessageHoldPlaced', Base & { reason: 'held_key_rotated' }>
  | DomainEvent<'ScheduledMessageFailed', Base & { reason: string }>
  /** The content delivered, and when: `late` when delivered after `scheduled_for` (the service was down). */
  | DomainEvent<'ScheduledMessageDelivered', Base & ScheduledContent & { scheduled_for: string; late: boolean }>;

export const SCHEDULED_EVENT_TYPES = eventTypes<ScheduledEvent>()([
  'ScheduledMessageCreated',
  'ScheduledMessageEdited',
  'ScheduledMessageCancelled',
  'ScheduledMessageHoldPlaced',
  'ScheduledMessageFailed',
  'ScheduledMessageDelivered',
]);
