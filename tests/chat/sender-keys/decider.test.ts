// The sender-key decider (`chat.sender_keys-<channel>_<user>`), given/when/then: every
// distribution is recorded (membership is checked before, from the read model), sealed as sent.

import { suite } from 'uvu';
import { senderKeyDecider } from '../../../domain/chat/sender-keys/decider.ts';
import type { SenderKeyEvent } from '../../../domain/chat/sender-keys/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const distribute = {
  type: 'Distribute' as const,
  channel_id: 'c1',
  user_id: 'u1',
  chain_id: 1,
  distribution_sealed: 'sealed-1',
  at,
};
const distributed: SenderKeyEvent = {
  type: 'SenderKeyDistributed',
  data: { channel_id: 'c1', user_id: 'u1', chain_id: 1, distribution_sealed: 'sealed-1', at },
};
const test = suite('domain: chat sender keys');

test('Distribute records the distribution, first or a rotation', () => {
  spec(senderKeyDecider)([]).when(distribute).then([distributed]);
  spec(senderKeyDecider)([distributed])
    .when({ ...distribute, chain_id: 2, distribution_sealed: 'sealed-2' })
    .then([
      {
        type: 'SenderKeyDistributed',
        data: { channel_id: 'c1', user_id: 'u1', chain_id: 2, distribution_sealed: 'sealed-2', at },
      },
    ]);
});

test.run();
