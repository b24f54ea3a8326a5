// The scheduled-message decider (`chat.scheduled_message-<uuid>`), given/when/then: schedule,
// the sender's edits and cancel while pending, the hold after a key rotation and its release by
// re-encryption, and the scheduler's delivery (once, not before its time) and failure.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LATE_AFTER_MS, scheduledDecider } from '../../../domain/chat/scheduled/decider.ts';
import type { ScheduledContent, ScheduledEvent } from '../../../domain/chat/scheduled/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const sendAt = '2026-01-01T12:00:00.000Z';
const content: ScheduledContent = {
  ciphertext: 'c1',
  send_at: sendAt,
  thread_root_id: null,
  mentions: ['u2'],
  file_ids: [],
};
const base = { scheduled_message_id: 's1', channel_id: 'ch1', sender_id: 'u1' };
const created: ScheduledEvent = { type: 'ScheduledMessageCreated', data: { ...base, at, ...content } };
const held: ScheduledEvent = { type: 'ScheduledMessageHoldPlaced', data: { ...base, at, reason: 'held_key_rotated' } };
const cancelled: ScheduledEvent = { type: 'ScheduledMessageCancelled', data: { ...base, at } };
const failed: ScheduledEvent = { type: 'ScheduledMessageFailed', data: { ...base, at, reason: 'not_a_member' } };
const scheduled = spec(scheduledDecider);
const test = suite('domain: chat scheduled messages');

test('Schedule creates; scheduled_message_exists on an existing stream; commands on no message are 404', () => {
  scheduled([])
    .when({ type: 'Schedule', id: 's1', channel_id: 'ch1', sender_id: 'u1', at, ...content })
    .then([created]);
  scheduled([created])
    .when({ type: 'Schedule', id: 's1', channel_id: 'ch1', sender_id: 'u1', at, ...content })
    .thenError('scheduled_message_exists');
  scheduled([]).when({ type: 'Cancel', actor_id: 'u1', at }).thenError('scheduled_message_not_found');
});

test("Edit: the sender's pending message, the whole content after it and what changed; nothing when nothing changes", () => {
  scheduled([created])
    .when({ type: 'Edit', actor_id: 'u1', changes: { ciphertext: 'c2', mentions: ['u2'] }, at })
    .then([
      { type: 'ScheduledMessageEdited', data: { ...base, at, ...content, ciphertext: 'c2', changed: ['ciphertext'] } },
    ]);
  scheduled([created])
    .when({ type: 'Edit', actor_id: 'u1', changes: { ciphertext: 'c1' }, at })
    .then([]);
  scheduled([created])
    .when({ type: 'Edit', actor_id: 'u3', changes: { ciphertext: 'c2' }, at })
    .thenError('scheduled_message_not_found');
  scheduled([created, cancelled])
    .when({ type: 'Edit', actor_id: 'u1', changes: { ciphertext: 'c2' }, at })
    .thenError('scheduled_message_not_found');
  scheduled([created, failed])
    .when({ type: 'Edit', actor_id: 'u1', changes: { ciphertext: 'c2' }, at })
    .thenError('not_pending');
});

test('a held message needs a new ciphertext (held_key_rotated); re-encrypted, it is pending again', () => {
  scheduled([created, held])
    .when({ type: 'Edit', actor_id: 'u1', changes: { send_at: '2026-01-02T00:00:00.000Z' }, at })
    .thenError('held_key_rotated');
  const reencrypted: ScheduledEvent = {
    type: 'ScheduledMessageEdited',
    data: { ...base, at, ...content, changed: ['ciphertext'] },
  };
  // The same ciphertext still counts: the client says it re-encrypted.
  scheduled([created, held])
    .when({ type: 'Edit', actor_id: 'u1', changes: { ciphertext: 'c1' }, at })
    .then([reencrypted]);
  scheduled([created, held, reencrypted])
    .when({ type: 'Deliver', mentions: [], at: sendAt })
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['ScheduledMessageDelivered'],
      ),
    );
  // Hold and Fail act on pending messages only.
  scheduled([created]).when({ type: 'Hold', at }).then([held]);
  scheduled([created, held]).when({ type: 'Hold', at }).then([]);
  scheduled([created]).when({ type: 'Fail', reason: 'not_a_member', at }).then([failed]);
  scheduled([created, cancelled]).when({ type: 'Fail', reason: 'not_a_member', at }).then([]);
});

test("Cancel: the sender's message before delivery; already_delivered after it", () => {
  scheduled([created]).when({ type: 'Cancel', actor_id: 'u1', at }).then([cancelled]);
  scheduled([created]).when({ type: 'Cancel', actor_id: 'u3', at }).thenError('scheduled_message_not_found');
  const delivered: ScheduledEvent = {
    type: 'ScheduledMessageDelivered',
    data: { ...base, at: sendAt, ...content, scheduled_for: sendAt, late: false },
  };
  scheduled([created, delivered]).when({ type: 'Cancel', actor_id: 'u1', at }).thenError('already_delivered');
  scheduled([created, delivered])
    .when({ type: 'Edit', actor_id: 'u1', changes: { ciphertext: 'c2' }, at })
    .thenError('already_delivered');
});

test('Deliver: once, not before send_at, with the members mentioned at delivery; late past the lease', () => {
  scheduled([created]).when({ type: 'Deliver', mentions: [], at }).then([]);
  const onTime = {
    type: 'ScheduledMessageDelivered' as const,
    data: { ...base, at: sendAt, ...content, mentions: [], scheduled_for: sendAt, late: false },
  };
  scheduled([created]).when({ type: 'Deliver', mentions: [], at: sendAt }).then([onTime]);
  scheduled([created, onTime]).when({ type: 'Deliver', mentions: [], at: sendAt }).then([]);
  const lateAt = new Date(Date.parse(sendAt) + LATE_AFTER_MS + 1).toISOString();
  scheduled([created])
    .when({ type: 'Deliver', mentions: ['u2'], at: lateAt })
    .then([
      {
        type: 'ScheduledMessageDelivered',
        data: { ...base, at: lateAt, ...content, scheduled_for: sendAt, late: true },
      },
    ]);
  scheduled([created, cancelled]).when({ type: 'Deliver', mentions: [], at: sendAt }).then([]);
});

test.run();
