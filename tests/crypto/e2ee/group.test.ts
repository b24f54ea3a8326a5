import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createSenderKey,
  createSenderKeyReceiver,
  decryptGroup,
  encryptGroup,
  SENDER_KEY_MAX_SKIP,
  senderKeyDistribution,
  type SenderKeyMessage,
  type SenderKeyReceiver,
  type SenderKeyState,
} from '../../../crypto/e2ee/index.ts';
import { bytes, copy, text, throwsCode } from './helpers.ts';

const test = suite('crypto/e2ee/group');

const send = (state: SenderKeyState, message: string): SenderKeyMessage => copy(encryptGroup(state, bytes(message)));
const receive = (receiver: SenderKeyReceiver, message: SenderKeyMessage): string =>
  text(decryptGroup(receiver, message));
const receiverOf = (state: SenderKeyState) => createSenderKeyReceiver(copy(senderKeyDistribution(state)));

test('sender key: a random u32 chain id, a 32-byte chain key, iteration 0; the distribution is the wire shape', () => {
  const state = createSenderKey('alice');
  assert.ok(Number.isInteger(state.chainId) && state.chainId >= 0 && state.chainId <= 0xffff_ffff);
  assert.is(state.chainKey.length, 32);
  assert.is(state.iteration, 0);
  const distribution = senderKeyDistribution(state);
  assert.equal(Object.keys(distribution), ['chain_id', 'iteration', 'chain_key', 'sender_id']);
  assert.equal(distribution, {
    chain_id: state.chainId,
    iteration: 0,
    chain_key: Array.from(state.chainKey),
    sender_id: 'alice',
  });
  assert.not.equal(createSenderKey('alice').chainKey, state.chainKey);
  throwsCode(() => createSenderKey(''), 'invalid_argument');
});

test('round trip to three receivers; messages carry the iteration of the key used', () => {
  const alice = createSenderKey('alice');
  const receivers = [receiverOf(alice), receiverOf(alice), receiverOf(alice)];
  for (let i = 0; i < 20; i++) {
    const message = send(alice, `message ${i}`);
    assert.equal(Object.keys(message), ['v', 'sk', 'message']);
    assert.is(message.v, 1);
    assert.is(message.sk, true);
    assert.is(message.message.chain_id, alice.chainId);
    assert.is(message.message.iteration, i);
    assert.is(message.message.nonce.length, 12);
    for (const receiver of receivers) assert.is(receive(receiver, message), `message ${i}`);
  }
  assert.is(alice.iteration, 20);
  for (const receiver of receivers) assert.is(receiver.iteration, 20);
});

test('every member has a chain of their own', () => {
  const states = ['alice', 'bob', 'carol', 'dave'].map((id) => createSenderKey(id));
  const views = new Map(
    states.map((state) => [
      state.senderId,
      new Map(states.filter((s) => s !== state).map((s) => [s.senderId, receiverOf(s)])),
    ]),
  );
  for (let round = 0; round < 3; round++) {
    for (const sender of states) {
      const message = send(sender, `${sender.senderId} ${round}`);
      for (const [member, view] of views) {
        if (member !== sender.senderId)
          assert.is(receive(view.get(sender.senderId)!, message), `${sender.senderId} ${round}`);
      }
    }
  }
});

test('out of order, and a duplicate decrypts again from the cache', () => {
  const alice = createSenderKey('alice');
  const bob = receiverOf(alice);
  const messages = [0, 1, 2, 3, 4].map((i) => send(alice, `m${i}`));
  for (const i of [4, 1, 0, 3, 2]) assert.is(receive(bob, messages[i]!), `m${i}`);
  for (const i of [0, 1, 2, 3, 4]) assert.is(receive(bob, messages[i]!), `m${i}`); // duplicates
  assert.is(receive(bob, messages[4]!), 'm4');
  assert.is(bob.skippedKeys.size, 0);
  assert.is(bob.usedKeys.size, 5);
  assert.is(receive(bob, send(alice, 'm5')), 'm5');
});

test('a mismatched chain_id is rejected and the receiver is unchanged', () => {
  const alice = createSenderKey('alice');
  const bob = receiverOf(alice);
  const rotated = createSenderKey('alice'); // e.g. after a member left
  const foreign = send(rotated, 'new chain');
  if (foreign.message.chain_id === alice.chainId) foreign.message.chain_id ^= 1;
  throwsCode(() => decryptGroup(bob, foreign), 'chain_mismatch');
  const message = send(alice, 'old chain');
  throwsCode(
    () => decryptGroup(bob, { ...message, message: { ...message.message, chain_id: (alice.chainId + 1) >>> 0 } }),
    'chain_mismatch',
  );
  assert.is(bob.iteration, 0);
  assert.is(receive(bob, message), 'old chain');
});

test(`exactly MAX_SKIP (${SENDER_KEY_MAX_SKIP}) skipped keys succeeds, MAX_SKIP + 1 is rejected`, () => {
  const alice = createSenderKey('alice');
  const tooFar = receiverOf(alice);
  const justFar = receiverOf(alice);
  const messages = Array.from({ length: SENDER_KEY_MAX_SKIP + 2 }, (_, i) => send(alice, `m${i}`));
  throwsCode(() => decryptGroup(tooFar, messages[SENDER_KEY_MAX_SKIP + 1]!), 'too_many_skipped');
  assert.is(tooFar.iteration, 0);
  assert.is(tooFar.skippedKeys.size, 0);
  assert.is(receive(justFar, messages[SENDER_KEY_MAX_SKIP]!), `m${SENDER_KEY_MAX_SKIP}`);
  assert.is(justFar.skippedKeys.size, SENDER_KEY_MAX_SKIP);
  // Every skipped message decrypts; the cache never grows past MAX_SKIP.
  for (const i of [0, 1999, 1000]) assert.is(receive(justFar, messages[i]!), `m${i}`);
  assert.ok(justFar.skippedKeys.size + justFar.usedKeys.size <= SENDER_KEY_MAX_SKIP);
  assert.is(receive(justFar, messages[SENDER_KEY_MAX_SKIP + 1]!), `m${SENDER_KEY_MAX_SKIP + 1}`);
});

test('a receiver joining mid-chain cannot read earlier iterations', () => {
  const alice = createSenderKey('alice');
  const early = [0, 1, 2].map((i) => send(alice, `early ${i}`));
  const eve = receiverOf(alice); // distribution at iteration 3
  assert.is(eve.iteration, 3);
  for (const message of early) throwsCode(() => decryptGroup(eve, message), 'stale_iteration');
  assert.is(receive(eve, send(alice, 'late')), 'late');
});

test('an iteration behind the chain whose key was never cached or was evicted is rejected', () => {
  const alice = createSenderKey('alice');
  const bob = receiverOf(alice);
  const messages = Array.from({ length: SENDER_KEY_MAX_SKIP + 10 }, (_, i) => send(alice, `m${i}`));
  for (const message of messages) receive(bob, message);
  // Only the last MAX_SKIP used keys are kept for duplicates.
  assert.is(bob.usedKeys.size, SENDER_KEY_MAX_SKIP);
  throwsCode(() => decryptGroup(bob, messages[5]!), 'stale_iteration');
  assert.is(receive(bob, messages[SENDER_KEY_MAX_SKIP + 9]!), `m${SENDER_KEY_MAX_SKIP + 9}`);
});

test.run();
