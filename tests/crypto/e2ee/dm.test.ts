import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createResponderSession,
  decryptDm,
  deserializeSession,
  encryptDm,
  generateIdentityKeyPair,
  generateSignedPrekey,
  MAX_SKIP,
  serializeSession,
  type DmMessage,
  type Session,
} from '../../../crypto/e2ee/index.ts';
import { bundleOf, bytes, copy, handshake, text, throwsCode } from './helpers.ts';

const test = suite('crypto/e2ee/dm');

const send = (from: Session, message: string): DmMessage => copy(encryptDm(from, bytes(message)));
const receive = (to: Session, message: DmMessage): string => text(decryptDm(to, message));

test('round trip both ways over many turns, with a DH ratchet step at every change of speaker', () => {
  for (const withOneTimePrekey of [true, false]) {
    const { a, b, first } = handshake(withOneTimePrekey);
    assert.is(first.x3dh?.one_time_prekey_id ?? null, withOneTimePrekey ? 40 : null);
    const ratchetKeys = new Set<string>();
    for (let turn = 0; turn < 30; turn++) {
      const [from, to] = turn % 2 === 0 ? [b, a] : [a, b];
      // Varying burst lengths: several messages on one chain, then the other side answers.
      for (let i = 0; i <= turn % 4; i++) {
        const message = send(from, `turn ${turn} message ${i} ✓`);
        ratchetKeys.add(message.header.ratchet_key.join(','));
        assert.is(message.header.message_number, i);
        assert.is(receive(to, message), `turn ${turn} message ${i} ✓`);
      }
    }
    // Every turn used a fresh ratchet key.
    assert.is(ratchetKeys.size, 30);
  }
});

test('only the first message carries x3dh; it names the prekeys of the bundle', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 3);
  const a = createInitiatorSession(alice, bundleOf(bob, spk, null));
  const first = send(a, 'one');
  const second = send(a, 'two');
  assert.equal(first.x3dh, {
    identity_key: Array.from(alice.publicKey),
    ephemeral_key: first.x3dh!.ephemeral_key,
    signed_prekey_id: 3,
    one_time_prekey_id: null,
  });
  assert.is(first.x3dh!.ephemeral_key.length, 32);
  assert.not.ok('x3dh' in second);
  assert.equal(Object.keys(first), ['v', 'x3dh', 'header', 'ciphertext', 'nonce']);
  assert.equal(Object.keys(second), ['v', 'header', 'ciphertext', 'nonce']);
  assert.is(first.nonce.length, 12);
  assert.is(first.ciphertext.length, bytes('one').length + 16);
  const { session: b, plaintext } = createResponderSession(bob, spk, null, first);
  assert.is(text(plaintext), 'one');
  assert.is(receive(b, { ...second, x3dh: null } as unknown as DmMessage), 'two'); // null reads as absent
  assert.equal(b.remoteIdentityKey, alice.publicKey);
  assert.equal(a.remoteIdentityKey, bob.publicKey);
});

test('empty and large plaintexts', () => {
  const { a, b } = handshake();
  assert.is(receive(b, send(a, '')), '');
  const big = 'x'.repeat(100_000);
  assert.is(receive(a, send(b, big)), big);
});

test('out of order within one chain', () => {
  const { a, b } = handshake();
  const messages = [0, 1, 2, 3, 4].map((i) => send(a, `m${i}`));
  for (const i of [3, 0, 4, 2, 1]) assert.is(receive(b, messages[i]!), `m${i}`);
  assert.is(b.skippedKeys.size, 0);
});

test('out of order across ratchet steps', () => {
  const { a, b } = handshake();
  const a1 = [1, 2, 3].map((i) => send(a, `a1.${i}`));
  assert.is(receive(b, a1[0]!), 'a1.1');
  assert.is(receive(a, send(b, 'b1')), 'b1'); // Alice steps; her next chain is new
  const a2 = [1, 2].map((i) => send(a, `a2.${i}`));
  assert.is(a2[0]!.header.previous_chain_length, 4); // "hello" and a1.1-3
  // Bob sees the new chain first: he caches a1.2, a1.3 (old chain, up to PN) and a2.1.
  assert.is(receive(b, a2[1]!), 'a2.2');
  assert.is(b.skippedKeys.size, 3);
  assert.is(receive(b, a1[2]!), 'a1.3');
  assert.is(receive(b, a2[0]!), 'a2.1');
  assert.is(receive(b, a1[1]!), 'a1.2');
  assert.is(b.skippedKeys.size, 0);
  // And the conversation carries on both ways.
  assert.is(receive(a, send(b, 'b2')), 'b2');
  assert.is(receive(b, send(a, 'a3')), 'a3');
});

test(`exactly MAX_SKIP (${MAX_SKIP}) skipped keys succeeds, MAX_SKIP + 1 is rejected`, () => {
  const { a, b } = handshake();
  const messages = Array.from({ length: MAX_SKIP + 2 }, (_, i) => send(a, `m${i}`));
  const saved = serializeSession(b);

  // Bob has read message 0 ("hello"); messages[i] is message number i + 1.
  const tooFar = deserializeSession(saved);
  throwsCode(() => decryptDm(tooFar, messages[MAX_SKIP + 1]!), 'too_many_skipped');
  assert.is(serializeSession(tooFar), saved);

  const justFar = deserializeSession(saved);
  assert.is(receive(justFar, messages[MAX_SKIP]!), `m${MAX_SKIP}`);
  assert.is(justFar.skippedKeys.size, MAX_SKIP);
  // Every skipped message still decrypts, in any order.
  assert.is(receive(justFar, messages[0]!), 'm0');
  assert.is(receive(justFar, messages[MAX_SKIP - 1]!), `m${MAX_SKIP - 1}`);
  assert.is(receive(justFar, messages[MAX_SKIP + 1]!), `m${MAX_SKIP + 1}`);
});

test('MAX_SKIP also bounds the keys skipped at the end of the previous chain', () => {
  const { a, b } = handshake();
  const oldChain = Array.from({ length: MAX_SKIP + 1 }, (_, i) => send(a, `old ${i}`));
  assert.is(receive(a, send(b, 'reply')), 'reply');
  const newChain = send(a, 'new');
  assert.is(newChain.header.previous_chain_length, MAX_SKIP + 2);
  const saved = serializeSession(b);
  throwsCode(() => decryptDm(b, newChain), 'too_many_skipped');
  assert.is(serializeSession(b), saved);
  assert.is(receive(b, oldChain[0]!), 'old 0'); // one fewer to skip: now it fits
  assert.is(receive(b, newChain), 'new');
  assert.is(receive(b, oldChain[MAX_SKIP]!), `old ${MAX_SKIP}`);
});

test('a replayed message is rejected, in order or after out-of-order delivery', () => {
  const { a, b, first } = handshake();
  throwsCode(() => decryptDm(b, first), 'replay');
  const m1 = send(a, 'one');
  const m2 = send(a, 'two');
  assert.is(receive(b, m2), 'two');
  throwsCode(() => decryptDm(b, m2), 'replay');
  assert.is(receive(b, m1), 'one'); // from the skipped keys, which then forget it
  throwsCode(() => decryptDm(b, m1), 'replay');
  // Still a working session.
  assert.is(receive(a, send(b, 'ok')), 'ok');
  assert.is(receive(b, send(a, 'next chain')), 'next chain');
  // A replay from a chain that has since been replaced fails authentication.
  const saved = serializeSession(b);
  throwsCode(() => decryptDm(b, m1), 'decrypt_failed');
  assert.is(serializeSession(b), saved);
});

test('the oldest skipped keys are dropped beyond 2 × MAX_SKIP', () => {
  const { a, b } = handshake();
  const chains: DmMessage[][] = [];
  for (let round = 0; round < 3; round++) {
    chains.push(Array.from({ length: MAX_SKIP }, (_, i) => send(a, `${round}.${i}`)));
    const last = send(a, `${round}.last`);
    assert.is(receive(b, last), `${round}.last`);
    assert.is(receive(a, send(b, `reply ${round}`)), `reply ${round}`);
  }
  assert.is(b.skippedKeys.size, 2 * MAX_SKIP);
  throwsCode(() => decryptDm(b, chains[0]![5]!), 'decrypt_failed'); // dropped
  assert.is(receive(b, chains[1]![5]!), '1.5');
  assert.is(receive(b, chains[2]![999]!), '2.999');
});

test.run();
