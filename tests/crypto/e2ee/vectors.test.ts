// Known answers: with the "random" bytes fixed (through the internal seam in random.ts, not the
// public API), the library must reproduce vectors.json byte for byte. The vectors come from
// make-vectors.ts, which uses node's own crypto (OpenSSL) and none of this library or noble.

import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createResponderSession,
  createSenderKey,
  createSenderKeyReceiver,
  decryptDm,
  decryptGroup,
  encryptDm,
  encryptGroup,
  fingerprint,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  safetyNumber,
  senderKeyDistribution,
  type DmMessage,
  type IdentityKeyPair,
  type OneTimePrekey,
  type SenderKeyMessage,
  type SignedPrekey,
} from '../../../crypto/e2ee/index.ts';
import { chainStep, dh, edPublicToX25519, edSecretToX25519, utf8 } from '../../../crypto/e2ee/primitives.ts';
import { withRandomSource, type RandomSource } from '../../../crypto/e2ee/random.ts';
import { headerJson, parseDmMessage, parseKeyBundle } from '../../../crypto/e2ee/wire.ts';
import { x3dhInitiator } from '../../../crypto/e2ee/x3dh.ts';
import { bundleOf, text } from './helpers.ts';

interface Vectors {
  inputs: Record<string, string> & { signed_prekey_id: number; one_time_prekey_id: number; sender_id: string };
  keys: Record<string, string>;
  x3dh: Record<string, string>;
  ratchet: Record<string, string>;
  sender_key: Record<string, string> & { chain_id: number };
  safety: { alice_fingerprint: string; safety_number: string };
  messages: Record<'first' | 'first_without_one_time_prekey' | 'reply', DmMessage> &
    Record<'group_0' | 'group_1', SenderKeyMessage>;
}

const vectors = JSON.parse(readFileSync(new URL('./vectors.json', import.meta.url), 'utf8')) as Vectors;
const input = (name: string) => Uint8Array.from(Buffer.from(vectors.inputs[name]!, 'hex'));
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Runs `work` with the random source handing out exactly `draws`, in order, and all of them. */
function drawing<T>(draws: string[], work: () => T): T {
  let next = 0;
  const source: RandomSource = (length) => {
    const name = draws[next++];
    if (name === undefined) throw new Error(`unexpected random draw #${next} of ${length} bytes`);
    const bytes = input(name);
    if (bytes.length !== length)
      throw new Error(`random draw #${next} wants ${length} bytes, ${name} has ${bytes.length}`);
    return bytes;
  };
  const result = withRandomSource(source, work);
  assert.is(next, draws.length, 'every fixed random draw was used');
  return result;
}

const test = suite('crypto/e2ee/vectors');

let alice: IdentityKeyPair;
let bob: IdentityKeyPair;
let spk: SignedPrekey;
let opk: OneTimePrekey;

test('keys from fixed seeds: identity keys, their X25519 forms, the signed prekey and its signature', () => {
  alice = drawing(['alice_identity_seed'], generateIdentityKeyPair);
  bob = drawing(['bob_identity_seed'], generateIdentityKeyPair);
  assert.is(hex(alice.publicKey), vectors.keys.alice_identity_public);
  assert.is(hex(bob.publicKey), vectors.keys.bob_identity_public);
  assert.is(hex(edSecretToX25519(alice.secretKey)), vectors.keys.alice_identity_x25519_secret);
  assert.is(hex(edPublicToX25519(alice.publicKey, 'alice')), vectors.keys.alice_identity_x25519_public);
  assert.is(hex(edPublicToX25519(bob.publicKey, 'bob')), vectors.keys.bob_identity_x25519_public);
  spk = drawing(['bob_signed_prekey_secret'], () => generateSignedPrekey(bob, vectors.inputs.signed_prekey_id));
  assert.is(hex(spk.publicKey), vectors.keys.bob_signed_prekey_public);
  assert.is(hex(spk.signature), vectors.keys.bob_signed_prekey_signature);
  [opk] = drawing(['bob_one_time_prekey_secret'], () =>
    generateOneTimePrekeys(vectors.inputs.one_time_prekey_id, 1),
  ) as [OneTimePrekey];
  assert.is(hex(opk.publicKey), vectors.keys.bob_one_time_prekey_public);
});

test('X3DH: the four DHs, SK with and without a one-time prekey, AD', () => {
  const ephemeral = {
    secretKey: input('alice_ephemeral_secret'),
    publicKey: Uint8Array.from(Buffer.from(vectors.keys.alice_ephemeral_public!, 'hex')),
  };
  assert.is(hex(dh(edSecretToX25519(alice.secretKey), spk.publicKey)), vectors.x3dh.dh1);
  assert.is(hex(dh(ephemeral.secretKey, edPublicToX25519(bob.publicKey, 'bob'))), vectors.x3dh.dh2);
  assert.is(hex(dh(ephemeral.secretKey, spk.publicKey)), vectors.x3dh.dh3);
  assert.is(hex(dh(ephemeral.secretKey, opk.publicKey)), vectors.x3dh.dh4);
  const withOpk = x3dhInitiator(alice, parseKeyBundle(bundleOf(bob, spk, opk)), ephemeral);
  assert.is(hex(withOpk.sharedSecret), vectors.x3dh.shared_secret);
  assert.is(hex(withOpk.associatedData), vectors.x3dh.associated_data);
  const withoutOpk = x3dhInitiator(alice, parseKeyBundle(bundleOf(bob, spk, null)), ephemeral);
  assert.is(hex(withoutOpk.sharedSecret), vectors.x3dh.shared_secret_without_one_time_prekey);
});

test('the first message: root key, sending chain, message key, header bytes and the whole wire object', () => {
  const a = drawing(['alice_ephemeral_secret', 'alice_ratchet_secret_1'], () =>
    createInitiatorSession(alice, bundleOf(bob, spk, opk)),
  );
  assert.is(hex(a.ratchetKeyPair.publicKey), vectors.keys.alice_ratchet_public_1);
  assert.is(hex(a.rootKey), vectors.ratchet.alice_root_key_1);
  assert.is(hex(a.sendingChain!.chainKey), vectors.ratchet.alice_sending_chain_key_1);
  assert.is(
    hex(chainStep(a.sendingChain!.chainKey, utf8('chatsvc-msg-key')).messageKey),
    vectors.ratchet.first_message_key,
  );
  const first = drawing(['nonce_1'], () => encryptDm(a, input('plaintext_1')));
  assert.equal(first, vectors.messages.first);
  assert.is(headerJson(parseDmMessage(first).header), vectors.ratchet.first_header_json);
  assert.is(hex(a.sendingChain!.chainKey), vectors.ratchet.alice_sending_chain_key_after_first);

  const noOpk = drawing(['alice_ephemeral_secret', 'alice_ratchet_secret_1'], () =>
    createInitiatorSession(alice, bundleOf(bob, spk, null)),
  );
  assert.is(hex(noOpk.rootKey), vectors.ratchet.alice_root_key_1_without_one_time_prekey);
  assert.equal(
    drawing(['nonce_1'], () => encryptDm(noOpk, input('plaintext_1'))),
    vectors.messages.first_without_one_time_prekey,
  );
});

test("the responder decrypts the vectors' first messages and replies with the vectors' bytes; Alice steps", () => {
  const withoutOpk = createResponderSession(bob, spk, null, vectors.messages.first_without_one_time_prekey);
  assert.equal(withoutOpk.plaintext, input('plaintext_1'));

  const { session: b, plaintext } = drawing(['bob_ratchet_secret_1'], () =>
    createResponderSession(bob, spk, opk, vectors.messages.first),
  );
  assert.equal(plaintext, input('plaintext_1'));
  assert.is(hex(b.ratchetKeyPair.publicKey), vectors.keys.bob_ratchet_public_1);
  assert.is(hex(b.rootKey), vectors.ratchet.bob_root_key_1);
  assert.is(hex(b.sendingChain!.chainKey), vectors.ratchet.bob_sending_chain_key_1);
  const reply = drawing(['nonce_2'], () => encryptDm(b, input('plaintext_2')));
  assert.equal(reply, vectors.messages.reply);
  assert.is(headerJson(parseDmMessage(reply).header), vectors.ratchet.reply_header_json);

  const a = drawing(['alice_ephemeral_secret', 'alice_ratchet_secret_1'], () =>
    createInitiatorSession(alice, bundleOf(bob, spk, opk)),
  );
  drawing(['nonce_1'], () => encryptDm(a, input('plaintext_1')));
  const received = drawing(['alice_ratchet_secret_2'], () => decryptDm(a, vectors.messages.reply));
  assert.is(text(received), text(input('plaintext_2')));
  assert.is(hex(a.ratchetKeyPair.publicKey), vectors.keys.alice_ratchet_public_2);
  assert.is(hex(a.rootKey), vectors.ratchet.alice_root_key_2);
  assert.is(hex(a.sendingChain!.chainKey), vectors.ratchet.alice_sending_chain_key_2);
});

test('sender keys: chain id, chain steps and the wire messages', () => {
  const state = drawing(['sender_chain_id_bytes', 'sender_chain_key'], () => createSenderKey(vectors.inputs.sender_id));
  assert.is(state.chainId, vectors.sender_key.chain_id);
  const receiver = createSenderKeyReceiver(senderKeyDistribution(state));
  assert.equal(
    drawing(['group_nonce_0'], () => encryptGroup(state, input('group_plaintext_0'))),
    vectors.messages.group_0,
  );
  assert.is(hex(state.chainKey), vectors.sender_key.chain_key_1);
  assert.equal(
    drawing(['group_nonce_1'], () => encryptGroup(state, input('group_plaintext_1'))),
    vectors.messages.group_1,
  );
  assert.is(hex(state.chainKey), vectors.sender_key.chain_key_2);
  assert.is(
    hex(chainStep(input('sender_chain_key'), utf8('chatsvc-sender-key-chain')).messageKey),
    vectors.sender_key.message_key_0,
  );
  assert.equal(decryptGroup(receiver, vectors.messages.group_1), input('group_plaintext_1'));
  assert.equal(decryptGroup(receiver, vectors.messages.group_0), input('group_plaintext_0'));
});

test('fingerprint and safety number', () => {
  assert.is(fingerprint(alice.publicKey), vectors.safety.alice_fingerprint);
  assert.is(safetyNumber(alice.publicKey, bob.publicKey), vectors.safety.safety_number);
  assert.is(safetyNumber(bob.publicKey, alice.publicKey), vectors.safety.safety_number);
});

test('the random seam is restored after use, even after a throw', () => {
  assert.throws(
    () => withRandomSource(() => new Uint8Array(1), generateIdentityKeyPair),
    /random source returned 1 bytes/,
  );
  const one = generateIdentityKeyPair();
  const two = generateIdentityKeyPair();
  assert.not.equal(one.secretKey, two.secretKey);
  assert.not.equal(hex(one.secretKey), vectors.inputs.alice_identity_seed);
});

test.run();
