// A message (`chat.message-<uuid>`): posted once, edited by its sender (each version kept),
// deleted by its sender or a moderator. The body is opaque: ciphertext from an E2EE client, or
// plaintext for a webhook message (`via_webhook`). A channel's messages are separate streams, so
// posting never folds a channel's history; who may post is decided first from the read models
// (./policy.ts). Read cursors (`chat.read_cursor-<channel>_<user>`) are facts without a decision.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { MessageKind, WebhookAuthor, MessageEvent } from './events.ts';

/** The spec leaves the size open; 64 Ki characters holds a long message with its envelope. */
export const CIPHERTEXT_MAX = 65_536;
/** Mention notifications per post (the webhook rule, applied to every post). */
export const MENTIONS_MAX = 50;
/** Files one message carries. */
export const FILES_PER_MESSAGE_MAX = 10;

export type MessageCommand =
  /** `file_ids`: uploaded files the message carries (checked readable by the route); `has_file` follows them. */
  | {
      type: 'Post';
      message_id: string;
      channel_id: string;
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
      at: string;
    }
  | { type: 'Quarantine'; by: string; reason: string | null; at: string }
  | { type: 'Unquarantine'; by: string; at: string }
  | { type: 'Edit'; actor_id: string; ciphertext: string; at: string }
  /** `moderator`: the actor moderates the channel (rank computed from the read models). */
  | { type: 'Delete'; actor_id: string; moderator: boolean; at: string };

export interface MessageState {
  id: string | null;
  channel_id: string | null;
  sender_id: string | null;
  via_webhook: boolean;
  deleted: boolean;
  quarantined?: boolean;
}

export const messageNotFound = () => new DomainError('not_found', 'message_not_found', 'no such message');

export const messageDecider: Decider<MessageState, MessageCommand, MessageEvent> = {
  initialState: () => ({ id: null, channel_id: null, sender_id: null, via_webhook: false, deleted: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'MessagePosted':
        return {
          id: event.data.message_id,
          channel_id: event.data.channel_id,
          sender_id: event.data.sender_id,
          via_webhook: event.data.via_webhook,
          deleted: false,
        };
      case 'MessageDeleted':
        return { ...state, deleted: true };
      case 'MessageQuarantined':
        return { ...state, quarantined: true };
      case 'MessageUnquarantined':
        return { ...state, quarantined: false };
      default:
        return state;
    }
  },
  decide(command, state) {
    if (command.type === 'Post') {
      if (state.id) throw new DomainError('conflict', 'message_exists', 'message already exists');
      if (command.ciphertext.length > CIPHERTEXT_MAX)
        throw new DomainError('invalid', 'too_long', `ciphertext is at most ${CIPHERTEXT_MAX} characters`);
      if ((command.file_ids?.length ?? 0) > FILES_PER_MESSAGE_MAX)
        throw new DomainError('invalid', 'too_many_files', `a message carries at most ${FILES_PER_MESSAGE_MAX} files`);
      const { type: _type, file_ids, ...data } = command;
      const files = [...new Set(file_ids ?? [])];
      return [
        {
          type: 'MessagePosted',
          data: {
            ...data,
            has_file: data.has_file || files.length > 0,
            file_ids: files,
            mentions: [...new Set(command.mentions)].slice(0, MENTIONS_MAX),
          },
        },
      ];
    }
    if (!state.id || state.deleted) throw messageNotFound();
    const base = { message_id: state.id, channel_id: state.channel_id!, at: command.at };
    if (command.type === 'Quarantine')
      return state.quarantined
        ? []
        : [{ type: 'MessageQuarantined', data: { ...base, by: command.by, reason: command.reason } }];
    if (command.type === 'Unquarantine')
      return state.quarantined ? [{ type: 'MessageUnquarantined', data: { ...base, by: command.by } }] : [];
    if (command.type === 'Edit') {
      if (command.actor_id !== state.sender_id || state.via_webhook)
        throw new DomainError('forbidden', 'not_sender', 'only the sender edits a message');
      if (command.ciphertext.length > CIPHERTEXT_MAX)
        throw new DomainError('invalid', 'too_long', `ciphertext is at most ${CIPHERTEXT_MAX} characters`);
      return [{ type: 'MessageEdited', data: { ...base, ciphertext: command.ciphertext } }];
    }
    if (command.actor_id !== state.sender_id && !command.moderator)
      throw new DomainError('forbidden', 'insufficient_role', 'only the sender or a moderator deletes a message');
    return [{ type: 'MessageDeleted', data: { ...base, by: command.actor_id, sender_id: state.sender_id } }];
  },
};
