import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createResponderSession,
  decryptDm,
  deserializeSession,
  encryptDm,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  serializeSession,
  type DmMessage,
} from '../../../crypto/e2ee/index.ts';
import { bundleOf, bytes, copy, handshake, text, throwsCode } from './helpers.ts';

const test = suite('crypto/e2ee/session-json');

test('serialised sessions resume mid-conversation, skipped keys and all', () => {
  const { a, b } = handshake();
  const pending: DmMessage[] = [];
  for (let turn = 0; turn < 4; turn++) {
    assert.is(text(decryptDm(a, copy(encryptDm(b, bytes(`b${turn}`))))), `b${turn}`);
    pending.push(copy(encryptDm(a, bytes(`late ${turn}`)))); // delivered after the restart
    assert.is(text(decryptDm(b, copy(encryptDm(a, bytes(`a${turn}`))))), `a${turn}`);
  }
  assert.is(b.skippedKeys.size, 4);

  // Both sides go through storage, in the middle of everything.
  const a2 = deserializeSession(serializeSession(a));
  const b2 = deserializeSession(serializeSession(b));
  assert.is(serializeSession(a2), serializeSession(a));
  assert.is(serializeSession(b2), serializeSession(b));
  for (const [i, message] of pending.entries()) assert.is(text(decryptDm(b2, message)), `late ${i}`);
  for (let turn = 0; turn < 4; turn++) {
    assert.is(text(decryptDm(b2, copy(encryptDm(a2, bytes(`after ${turn}`))))), `after ${turn}`);
    assert.is(text(decryptDm(a2, copy(encryptDm(b2, bytes(`reply ${turn}`))))), `reply ${turn}`);
  }
});

test('an initiator stored before its first message still sends x3dh, once', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 5);
  const [opk] = generateOneTimePrekeys(9, 1);
  const stored = serializeSession(createInitiatorSession(alice, bundleOf(bob, spk, opk!)));
  assert.equal(Object.keys(JSON.parse(stored).pending_x3dh), [
    'identity_key',
    'ephemeral_key',
    'signed_prekey_id',
    'one_time_prekey_id',
  ]);
  const a = deserializeSession(stored);
  const first = copy(encryptDm(a, bytes('first')));
  const second = copy(encryptDm(a, bytes('second')));
  assert.equal(first.x3dh?.one_time_prekey_id, 9);
  assert.not.ok('x3dh' in second);
  const { session: b, plaintext } = createResponderSession(bob, spk, opk!, first);
  assert.is(text(plaintext), 'first');
  assert.is(text(decryptDm(b, second)), 'second');
  assert.is(JSON.parse(serializeSession(a)).pending_x3dh, null);
});

test('the documented shape: version 1, snake_case fields, byte strings as arrays of numbers', () => {
  const { a } = handshake();
  const json = JSON.parse(serializeSession(a));
  assert.equal(Object.keys(json), [
    'version',
    'local_identity_key',
    'remote_identity_key',
    'associated_data',
    'root_key',
    'ratchet_key_pair',
    'remote_ratchet_key',
    'sending_chain',
    'receiving_chain',
    'previous_chain_length',
    'skipped_keys',
    'pending_x3dh',
  ]);
  assert.is(json.version, 1);
  assert.is(json.associated_data.length, 64);
  assert.ok(json.root_key.every((byte: unknown) => Number.isInteger(byte)));
  assert.equal(Object.keys(json.sending_chain), ['chain_key', 'message_number']);
  assert.is(json.pending_x3dh, null);
});

test('malformed or foreign JSON is rejected with invalid_session or unsupported_version', () => {
  const { b } = handshake();
  const good = JSON.parse(serializeSession(b));
  const variant = (change: (json: Record<string, any>) => void) => {
    const json = structuredClone(good);
    change(json);
    return JSON.stringify(json);
  };
  throwsCode(() => deserializeSession('not json'), 'invalid_session');
  throwsCode(() => deserializeSession('[]'), 'invalid_session');
  throwsCode(() => deserializeSession(variant((j) => void (j.version = 2))), 'unsupported_version');
  throwsCode(() => deserializeSession(variant((j) => void delete j.version)), 'unsupported_version');
  throwsCode(() => deserializeSession(variant((j) => void j.root_key.pop())), 'invalid_session');
  throwsCode(() => deserializeSession(variant((j) => void (j.root_key[0] = 300))), 'invalid_session');
  throwsCode(() => deserializeSession(variant((j) => void delete j.sending_chain)), 'invalid_session');
  throwsCode(() => deserializeSession(variant((j) => void (j.receiving_chain.message_number = -1))), 'invalid_session');
  throwsCode(
    () =>
      deserializeSession(
        variant((j) => void (j.skipped_keys = [{ ratchet_key: [1], message_number: 0, message_key: [] }])),
      ),
    'invalid_session',
  );
  throwsCode(
    () => deserializeSession(variant((j) => void (j.associated_data = new Array(64).fill(0)))),
    'invalid_session',
  );
  throwsCode(() => deserializeSession(variant((j) => void (j.pending_x3dh = { identity_key: [] }))), 'invalid_session');
  throwsCode(() => deserializeSession(42 as unknown as string), 'invalid_session');
});

test.run();
