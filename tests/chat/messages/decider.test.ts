// The message decider (`chat.message-<uuid>`), given/when/then: post once (size and file
// limits, files de-duplicated), the sender's edit, delete by the sender or a moderator, the
// admin's quarantine, and nothing on a deleted message. (Mention capping and the role checks
// beside channels are in tests/chat/communities/decider.test.ts.)

import { suite } from 'uvu';
import { CIPHERTEXT_MAX, FILES_PER_MESSAGE_MAX, messageDecider } from '../../../domain/chat/messages/decider.ts';
import type { MessageEvent } from '../../../domain/chat/messages/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const post = {
  type: 'Post' as const,
  message_id: 'm1',
  channel_id: 'c1',
  sender_id: 'u1',
  ciphertext: 'x',
  kind: 'text' as const,
  thread_root_id: null,
  mentions: [],
  via_webhook: false,
  has_file: false,
  at,
};
const { type: _type, ...postData } = post;
const posted: MessageEvent = { type: 'MessagePosted', data: { ...postData, file_ids: [] } };
const base = { message_id: 'm1', channel_id: 'c1', at };
const deleted: MessageEvent = { type: 'MessageDeleted', data: { ...base, by: 'u1', sender_id: 'u1' } };
const message = spec(messageDecider);
const test = suite('domain: chat messages');

test('Post: once (message_exists again); too_long and too_many_files refused; files de-duplicated and marked', () => {
  message([]).when(post).then([posted]);
  message([posted]).when(post).thenError('message_exists');
  message([])
    .when({ ...post, ciphertext: 'x'.repeat(CIPHERTEXT_MAX + 1) })
    .thenError('too_long');
  message([])
    .when({ ...post, file_ids: Array.from({ length: FILES_PER_MESSAGE_MAX + 1 }, (_, i) => `f${i}`) })
    .thenError('too_many_files');
  message([])
    .when({ ...post, file_ids: ['f1', 'f1'] })
    .then([{ type: 'MessagePosted', data: { ...postData, has_file: true, file_ids: ['f1'] } }]);
});

test('Edit: by the sender only (not_sender for others and for webhook messages), within the size limit', () => {
  message([posted])
    .when({ type: 'Edit', actor_id: 'u1', ciphertext: 'y', at })
    .then([{ type: 'MessageEdited', data: { ...base, ciphertext: 'y' } }]);
  message([posted])
    .when({ type: 'Edit', actor_id: 'u1', ciphertext: 'y'.repeat(CIPHERTEXT_MAX + 1), at })
    .thenError('too_long');
  message([posted]).when({ type: 'Edit', actor_id: 'u2', ciphertext: 'y', at }).thenError('not_sender');
  const hook: MessageEvent = { type: 'MessagePosted', data: { ...postData, via_webhook: true, file_ids: [] } };
  message([hook]).when({ type: 'Edit', actor_id: 'u1', ciphertext: 'y', at }).thenError('not_sender');
});

test('Delete: by the sender or a moderator; afterwards every command is message_not_found', () => {
  message([posted]).when({ type: 'Delete', actor_id: 'u1', moderator: false, at }).then([deleted]);
  message([posted]).when({ type: 'Delete', actor_id: 'u2', moderator: false, at }).thenError('insufficient_role');
  message([posted, deleted])
    .when({ type: 'Delete', actor_id: 'u1', moderator: false, at })
    .thenError('message_not_found');
  message([posted, deleted]).when({ type: 'Edit', actor_id: 'u1', ciphertext: 'y', at }).thenError('message_not_found');
  message([]).when({ type: 'Quarantine', by: 'admin', reason: null, at }).thenError('message_not_found');
});

test('Quarantine and Unquarantine change the flag once each', () => {
  const quarantined: MessageEvent = { type: 'MessageQuarantined', data: { ...base, by: 'admin', reason: 'spam' } };
  message([posted]).when({ type: 'Quarantine', by: 'admin', reason: 'spam', at }).then([quarantined]);
  message([posted, quarantined]).when({ type: 'Quarantine', by: 'admin', reason: 'spam', at }).then([]);
  message([posted, quarantined])
    .when({ type: 'Unquarantine', by: 'admin', at })
    .then([{ type: 'MessageUnquarantined', data: { ...base, by: 'admin' } }]);
  message([posted]).when({ type: 'Unquarantine', by: 'admin', at }).then([]);
});

test.run();
