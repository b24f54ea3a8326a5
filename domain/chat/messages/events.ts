// The messages slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import { upcasters } from '../../shared/event-contract.ts';

/** `text` today; later kinds (files, polls, system notices) extend this. */
export type MessageKind = 'text';

/** Who a webhook post shows as (its `username`, default the webhook's name, and avatar); `sender_id` is the webhook's id. */
export type WebhookAuthor = { webhook_id: string; username: string; avatar_url: string | null };

type Base = { message_id: string; channel_id: string; at: string };

export type MessageEvent =
  | DomainEvent<
      'MessagePosted',
      Base & {
        sender_id: string;
        ciphertext: string;
        kind: MessageKind;
        thread_root_id: string | null;
        mentions: string[];
        via_webhook: boolean;
        has_file: boolean;
        webhook?: WebhookAuthor | null;
        file_ids?: string[];
        scheduled_for?: string | null;
      }
    >
  | DomainEvent<'MessageEdited', Base & { ciphertext: string }>
  /** Version 2. `sender_id`: whose message it was, so a deletion by someone else reads as moderation (the audit log) without another read model; null only on version 1 events (see `messageDeletedFromV1`). */
  | DomainEvent<'MessageDeleted', Base & { by: string; sender_id: string | null }>
  // Instance administration: a quarantined message is hidden from every reader until released.
  | DomainEvent<'MessageQuarantined', Base & { by: string; reason: string | null }>
  | DomainEvent<'MessageUnquarantined', Base & { by: string }>;

export type ReadCursorEvent = DomainEvent<
  'ReadCursorMoved',
  { channel_id: string; user_id: string; message_id: string; at: string }
>;

export const MESSAGE_EVENT_TYPES = eventTypes<MessageEvent>()(
  ['MessagePosted', 'MessageEdited', 'MessageDeleted', 'MessageQuarantined', 'MessageUnquarantined'],
  { MessageDeleted: 2 },
);

/** `MessageDeleted` as written before version 2: without `sender_id`. */
export type MessageDeletedV1 = Base & { by: string };

/**
 * Version 1 → 2. A version 1 event does not say whose message it was, and an upcaster sees the
 * event alone, so `sender_id` is null: unknown, not "nobody". The one consumer that needs it,
 * the chat admin audit log (projections/chat/admin-audit.ts), cannot tell a moderator's
 * deletion from the sender's own on such an event and leaves it out.
 */
export const messageDeletedFromV1 = (
  v1: MessageDeletedV1,
): Extract<MessageEvent, { type: 'MessageDeleted' }>['data'] => ({ ...v1, sender_id: null });

export const MESSAGE_UPCASTERS = upcasters<MessageEvent>()({
  MessageDeleted: { 1: (data) => messageDeletedFromV1(data as MessageDeletedV1) },
});

export const READ_CURSOR_EVENT_TYPES = eventTypes<ReadCursorEvent>()(['ReadCursorMoved']);
