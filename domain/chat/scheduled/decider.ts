// A scheduled message (`chat.scheduled_message-<uuid>`): a sender's ciphertext to be posted in
// a channel at `send_at`. The scheduler delivers it once: `ScheduledMessageDelivered` (appended
// with the revision read, so a concurrent edit or cancel either lands first and is honoured, or
// finds it delivered: 409 `already_delivered`), after which the poster appends the message
// itself to `chat.message-<same id>` with `no_stream` (api/chat/scheduled/fire.ts, api/chat/scheduled/reactor.ts).
//
// Statuses: pending → delivered | failed (the sender can no longer post there) | cancelled;
// pending → held (`held_key_rotated`: a sender-key rotation since it was encrypted) → pending
// again once the client re-encrypts it by PATCH with a new `ciphertext`.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { ScheduledContent, ScheduledEvent } from './events.ts';

/** The furthest ahead a message may be scheduled. */
export const SCHEDULE_MAX_AHEAD_MS = 365 * 24 * 3600 * 1000;

export type ScheduledStatus = 'pending' | 'held' | 'failed' | 'cancelled' | 'delivered';

export type ScheduledCommand =
  | ({ type: 'Schedule'; id: string; channel_id: string; sender_id: string; at: string } & ScheduledContent)
  | { type: 'Edit'; actor_id: string; changes: Partial<ScheduledContent>; at: string }
  | { type: 'Cancel'; actor_id: string; at: string }
  | { type: 'Hold'; at: string }
  | { type: 'Fail'; reason: string; at: string }
  /** `mentions`: the members among the listed ones at delivery. */
  | { type: 'Deliver'; mentions: string[]; at: string };

export interface ScheduledState extends ScheduledContent {
  id: string | null;
  channel_id: string;
  sender_id: string;
  status: ScheduledStatus | null;
  reason: string | null;
}

export const scheduledNotFound = () =>
  new DomainError('not_found', 'scheduled_message_not_found', 'no such scheduled message', {
    code: 'scheduled_message_not_found',
  });

export const scheduledDecider: Decider<ScheduledState, ScheduledCommand, ScheduledEvent> = {
  initialState: () => ({
    id: null,
    channel_id: '',
    sender_id: '',
    status: null,
    reason: null,
    ciphertext: '',
    send_at: '',
    thread_root_id: null,
    mentions: [],
    file_ids: [],
  }),
  evolve(state, event) {
    const d = event.data;
    switch (event.type) {
      case 'ScheduledMessageCreated':
        return {
          id: d.scheduled_message_id,
          channel_id: d.channel_id,
          sender_id: d.sender_id,
          status: 'pending',
          reason: null,
          ciphertext: event.data.ciphertext,
          send_at: event.data.send_at,
          thread_root_id: event.data.thread_root_id,
          mentions: event.data.mentions,
          file_ids: event.data.file_ids,
        };
      case 'ScheduledMessageEdited': {
        const d = event.data;
        // Re-encrypted: a held message is pending again.
        const status = state.status === 'held' && d.changed.includes('ciphertext') ? 'pending' : state.status;
        return {
          ...state,
          ciphertext: d.ciphertext,
          send_at: d.send_at,
          thread_root_id: d.thread_root_id,
          mentions: d.mentions,
          file_ids: d.file_ids,
          status,
          reason: status === 'held' ? state.reason : null,
        };
      }
      case 'ScheduledMessageCancelled':
        return { ...state, status: 'cancelled' };
      case 'ScheduledMessageHoldPlaced':
        return { ...state, status: 'held', reason: event.data.reason };
      case 'ScheduledMessageFailed':
        return { ...state, status: 'failed', reason: event.data.reason };
      case 'ScheduledMessageDelivered':
        return { ...state, status: 'delivered' };
    }
  },
  decide(command, state) {
    if (command.type === 'Schedule') {
      if (state.id) throw new DomainError('conflict', 'scheduled_message_exists', 'scheduled message already exists');
      const { type: _t, id, ...rest } = command;
      return [{ type: 'ScheduledMessageCreated', data: { scheduled_message_id: id, ...rest } }];
    }
    if (!state.id) throw scheduledNotFound();
    const base = {
      scheduled_message_id: state.id,
      channel_id: state.channel_id,
      sender_id: state.sender_id,
      at: command.at,
    };
    switch (command.type) {
      case 'Edit': {
        ownPending(state, command.actor_id, true);
        if (state.status === 'held' && command.changes.ciphertext === undefined) {
          throw new DomainError(
            'conflict',
            'held_key_rotated',
            'a sender key was rotated since this message was encrypted: send it again with a new ciphertext',
            { code: 'held_key_rotated' },
          );
        }
        const changes = Object.fromEntries(
          Object.entries(command.changes).filter(
            ([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(state[k as keyof ScheduledContent]),
          ),
        ) as Partial<ScheduledContent>;
        // An unchanged ciphertext still re-encrypts a held message (the client says it re-encrypted).
        if (state.status === 'held' && changes.ciphertext === undefined)
          changes.ciphertext = command.changes.ciphertext!;
        const changed = Object.keys(changes) as (keyof ScheduledContent)[];
        if (changed.length === 0) return [];
        const content: ScheduledContent = {
          ciphertext: state.ciphertext,
          send_at: state.send_at,
          thread_root_id: state.thread_root_id,
          mentions: state.mentions,
          file_ids: state.file_ids,
          ...changes,
        };
        return [{ type: 'ScheduledMessageEdited', data: { ...base, ...content, changed } }];
      }
      case 'Cancel':
        ownPending(state, command.actor_id, false);
        return [{ type: 'ScheduledMessageCancelled', data: base }];
      case 'Hold':
        return state.status === 'pending'
          ? [{ type: 'ScheduledMessageHoldPlaced', data: { ...base, reason: 'held_key_rotated' } }]
          : [];
      case 'Fail':
        return state.status === 'pending'
          ? [{ type: 'ScheduledMessageFailed', data: { ...base, reason: command.reason } }]
          : [];
      case 'Deliver': {
        if (state.status !== 'pending' || Date.parse(state.send_at) > Date.parse(command.at)) return [];
        const content: ScheduledContent = {
          ciphertext: state.ciphertext,
          send_at: state.send_at,
          thread_root_id: state.thread_root_id,
          mentions: command.mentions,
          file_ids: state.file_ids,
        };
        // Late: more than the scheduler's lease past the time (a restart, not the polling delay).
        const late = Date.parse(command.at) - Date.parse(state.send_at) > LATE_AFTER_MS;
        return [
          { type: 'ScheduledMessageDelivered', data: { ...base, ...content, scheduled_for: state.send_at, late } },
        ];
      }
    }
  },
};

/** A delivery this long after its time counts as late (the service was down or overloaded). */
export const LATE_AFTER_MS = 10_000;

/** Edits and cancels: the sender's own message (another's is 404), not yet delivered. */
function ownPending(state: ScheduledState, actorId: string, edit: boolean): void {
  if (state.sender_id !== actorId || state.status === 'cancelled') throw scheduledNotFound();
  if (state.status === 'delivered')
    throw new DomainError('conflict', 'already_delivered', 'the message was already delivered', {
      code: 'already_delivered',
    });
  if (state.status === 'failed' && edit)
    throw new DomainError('conflict', 'not_pending', 'the message failed: delete it and schedule again', {
      code: 'not_pending',
      reason: state.reason,
    });
}
