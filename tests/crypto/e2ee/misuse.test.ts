// Misuse and attack: every failure is a typed E2eeError, and a failed decrypt leaves the state as
// it was, so the next genuine message still decrypts.

import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createResponderSession,
  createSenderKey,
  createSenderKeyReceiver,
  decryptDm,
  decryptGroup,
  deserializeSession,
  encryptDm,
  encryptGroup,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  senderKeyDistribution,
  serializeSession,
  type DmMessage,
  type E2eeErrorCode,
  type KeyBundle,
  type SenderKeyMessage,
  type SenderKeyReceiver,
  type Session,
} from '../../../crypto/e2ee/index.ts';
import { bundleOf, bytes, copy, handshake, text, throwsCode, wire } from './helpers.ts';

const test = suite('crypto/e2ee/misuse');

const hexBytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
// X25519 public keys of small order (RFC 7748 §6.1 / libsodium's blocklist): 0, 1, an order-8 point.
const SMALL_ORDER_X25519 = [
  new Uint8Array(32),
  hexBytes('0100000000000000000000000000000000000000000000000000000000000000'),
  hexBytes('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800'),
];
// Ed25519: the identity point, and a point of order 8.
const SMALL_ORDER_ED25519 = [
  hexBytes('0100000000000000000000000000000000000000000000000000000000000000'),
  hexBytes('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'),
];

type Tamper = (message: DmMessage) => void;

/** Each tampered copy of `genuine` fails with `code`, the session does not change, and then `genuine` decrypts. */
function rejectsEach(
  session: Session,
  genuine: DmMessage,
  cases: [string, Tamper, E2eeErrorCode][],
  expected: string,
): void {
  const before = serializeSession(session);
  for (const [name, tamper, code] of cases) {
    const message = copy(genuine);
    tamper(message);
    try {
      throwsCode(() => decryptDm(session, message), code);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`);
    }
    assert.is(serializeSession(session), before, `${name} changed the session`);
  }
  assert.is(text(decryptDm(session, genuine)), expected);
}

const flip = (array: number[], index: number) => {
  const i = index < 0 ? array.length + index : index;
  array[i] = array[i]! ^ 0x01;
};

test('a tampered ciphertext, tag, nonce or header field fails authentication and changes nothing', () => {
  const { a, b } = handshake();
  const cases: [string, Tamper, E2eeErrorCode][] = [
    ['ciphertext byte', (m) => flip(m.ciphertext, 0), 'decrypt_failed'],
    ['tag byte', (m) => flip(m.ciphertext, -1), 'decrypt_failed'],
    ['extra ciphertext byte', (m) => m.ciphertext.push(0), 'decrypt_failed'],
    ['one byte dropped', (m) => m.ciphertext.pop(), 'decrypt_failed'],
    ['nonce', (m) => flip(m.nonce, 5), 'decrypt_failed'],
    ['header.message_number', (m) => void (m.header.message_number += 1), 'decrypt_failed'],
    ['header.previous_chain_length', (m) => void (m.header.previous_chain_length += 1), 'decrypt_failed'],
    ['header.ratchet_key', (m) => flip(m.header.ratchet_key, 3), 'decrypt_failed'],
  ];
  // On the current chain of the receiver...
  rejectsEach(b, copy(encryptDm(a, bytes('same chain'))), cases, 'same chain');
  // ...and on a message that starts a new chain (the receiver's DH ratchet step path).
  encryptDm(a, bytes('skipped, decrypted later'));
  assert.is(text(decryptDm(a, copy(encryptDm(b, bytes('reply'))))), 'reply');
  rejectsEach(b, copy(encryptDm(a, bytes('new chain'))), cases, 'new chain');
  assert.is(text(decryptDm(a, copy(encryptDm(b, bytes('still fine'))))), 'still fine');
});

test('a different AD fails authentication', () => {
  const { a, b } = handshake();
  const message = copy(encryptDm(a, bytes('bound to AD')));
  // The same session state with the AD halves swapped (responder ‖ initiator).
  const state = JSON.parse(serializeSession(b));
  state.associated_data = [...state.associated_data.slice(32), ...state.associated_data.slice(0, 32)];
  throwsCode(() => decryptDm(deserializeSession(JSON.stringify(state)), message), 'decrypt_failed');
  assert.is(text(decryptDm(b, message)), 'bound to AD');
});

test('a first message with a substituted identity key is rejected', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const mallory = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 1);
  const first = copy(encryptDm(createInitiatorSession(alice, bundleOf(bob, spk, null)), bytes('hi')));
  first.x3dh!.identity_key = wire(mallory.publicKey);
  throwsCode(() => createResponderSession(bob, spk, null, first), 'decrypt_failed');
});

test('a small-order ratchet key in a header is rejected and changes nothing', () => {
  const { a, b } = handshake();
  const genuine = copy(encryptDm(a, bytes('genuine')));
  rejectsEach(
    b,
    genuine,
    SMALL_ORDER_X25519.map((key, i) => [
      `small order ${i}`,
      (m) => void (m.header.ratchet_key = wire(key)),
      'small_order_key',
    ]),
    'genuine',
  );
});

test('malformed DM messages: truncated or oversized fields, wrong types, wrong v', () => {
  const { a, b } = handshake();
  const genuine = copy(encryptDm(a, bytes('genuine')));
  const invalid = 'invalid_message';
  rejectsEach(
    b,
    genuine,
    [
      ['v 2', (m) => void ((m as { v: number }).v = 2), 'unsupported_version'],
      ['v "1"', (m) => void ((m as { v: unknown }).v = '1'), 'unsupported_version'],
      ['v missing', (m) => void delete (m as { v?: number }).v, 'unsupported_version'],
      ['nonce 11 bytes', (m) => void m.nonce.pop(), invalid],
      ['nonce 13 bytes', (m) => void m.nonce.push(0), invalid],
      ['ratchet_key 31 bytes', (m) => void m.header.ratchet_key.pop(), invalid],
      ['ratchet_key 33 bytes', (m) => void m.header.ratchet_key.push(0), invalid],
      ['ciphertext shorter than a tag', (m) => void (m.ciphertext = m.ciphertext.slice(0, 15)), invalid],
      ['byte 256', (m) => void (m.nonce[0] = 256), invalid],
      ['byte -1', (m) => void (m.nonce[0] = -1), invalid],
      ['byte 1.5', (m) => void (m.ciphertext[0] = 1.5), invalid],
      ['byte as string', (m) => void ((m.ciphertext as unknown[])[0] = '7'), invalid],
      [
        'bytes as base64',
        (m) => void ((m as { nonce: unknown }).nonce = Buffer.from(m.nonce).toString('base64')),
        invalid,
      ],
      ['message_number -1', (m) => void (m.header.message_number = -1), invalid],
      ['message_number 1.5', (m) => void (m.header.message_number = 1.5), invalid],
      ['message_number "1"', (m) => void ((m.header as { message_number: unknown }).message_number = '1'), invalid],
      [
        'previous_chain_length missing',
        (m) => void delete (m.header as { previous_chain_length?: number }).previous_chain_length,
        invalid,
      ],
      ['header missing', (m) => void delete (m as { header?: unknown }).header, invalid],
      ['header an array', (m) => void ((m as { header: unknown }).header = []), invalid],
      ['x3dh malformed', (m) => void ((m as { x3dh: unknown }).x3dh = { identity_key: [1] }), invalid],
    ],
    'genuine',
  );
  for (const value of [null, 'message', [], 42]) throwsCode(() => decryptDm(b, value as unknown as DmMessage), invalid);
});

test('bundles: a bad signature, small-order keys, malformed fields', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 1);
  const [opk] = generateOneTimePrekeys(1, 1);
  const good = bundleOf(bob, spk, opk!);
  const variant = (change: (bundle: KeyBundle) => void): KeyBundle => {
    const bundle = copy(good);
    change(bundle);
    return bundle;
  };
  const cases: [string, KeyBundle, E2eeErrorCode][] = [
    ['signature byte flipped', variant((b) => flip(b.signed_prekey.signature, 10)), 'bad_signature'],
    [
      'signed by another identity',
      variant((b) => void (b.signed_prekey.signature = wire(generateSignedPrekey(alice, 1).signature))),
      'bad_signature',
    ],
    [
      'signature over other bytes',
      variant(
        (b) => void (b.signed_prekey.signature = wire(ed25519.sign(Uint8Array.of(...spk.publicKey, 0), bob.secretKey))),
      ),
      'bad_signature',
    ],
    [
      'other signed prekey',
      variant((b) => void (b.signed_prekey.public_key = wire(generateSignedPrekey(bob, 1).publicKey))),
      'bad_signature',
    ],
    [
      'identity key not on the curve',
      variant((b) => void (b.identity_key = wire(hexBytes('02'.padEnd(64, '0'))))),
      'invalid_key',
    ],
    ['identity key 31 bytes', variant((b) => void b.identity_key.pop()), 'invalid_message'],
    ['signature 65 bytes', variant((b) => void b.signed_prekey.signature.push(0)), 'invalid_message'],
    ['one-time prekey 33 bytes', variant((b) => void b.one_time_prekey!.public_key.push(0)), 'invalid_message'],
    ['key_id negative', variant((b) => void (b.signed_prekey.key_id = -1)), 'invalid_message'],
    [
      'signed_prekey missing',
      variant((b) => void delete (b as { signed_prekey?: unknown }).signed_prekey),
      'invalid_message',
    ],
  ];
  for (const key of SMALL_ORDER_ED25519) {
    cases.push(['small-order identity key', variant((b) => void (b.identity_key = wire(key))), 'small_order_key']);
  }
  for (const key of SMALL_ORDER_X25519) {
    // Validly signed, so only the small-order check can refuse them.
    const signature = wire(ed25519.sign(key, bob.secretKey));
    cases.push([
      'small-order signed prekey',
      variant((b) => void (b.signed_prekey = { key_id: 1, public_key: wire(key), signature })),
      'small_order_key',
    ]);
    cases.push([
      'small-order one-time prekey',
      variant((b) => void (b.one_time_prekey = { key_id: 1, public_key: wire(key) })),
      'small_order_key',
    ]);
  }
  for (const [name, bundle, code] of cases) {
    try {
      throwsCode(() => createInitiatorSession(alice, bundle), code);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`);
    }
  }
  // Without a one-time prekey (null or absent) the bundle is fine.
  createInitiatorSession(
    alice,
    variant((b) => void (b.one_time_prekey = null)),
  );
  createInitiatorSession(
    alice,
    variant((b) => void delete b.one_time_prekey),
  );
});

test('identity keys and signatures are checked strictly (RFC 8032), not with ZIP-215 leniency', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 1);
  // A non-canonical encoding (y = 3 + p) of a large-order point: ZIP-215 decodes it, RFC 8032 does not.
  const nonCanonical = hexBytes('f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f');
  assert.ok(ed25519.utils.isValidPublicKey(nonCanonical, true));
  throwsCode(
    () => createInitiatorSession(alice, { ...bundleOf(bob, spk, null), identity_key: wire(nonCanonical) }),
    'invalid_key',
  );

  // A signature whose R is a non-canonical encoding (y = 1 + p) of the identity point, with
  // S = k·a so that the cofactored equation holds: ZIP-215 accepts it, RFC 8032 must not.
  const { Point } = ed25519;
  const L = Point.Fn.ORDER;
  const a = ed25519.utils.getExtendedPublicKey(bob.secretKey).scalar;
  const R = hexBytes('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f');
  const le = (data: Uint8Array) => BigInt(`0x${Buffer.from(data).reverse().toString('hex')}`);
  const k = le(sha512(Uint8Array.of(...R, ...bob.publicKey, ...spk.publicKey))) % L;
  const S = (k * a) % L;
  const signature = Uint8Array.of(...R, ...Buffer.from(S.toString(16).padStart(64, '0'), 'hex').reverse());
  assert.ok(ed25519.verify(signature, spk.publicKey, bob.publicKey, { zip215: true }));
  assert.not.ok(ed25519.verify(signature, spk.publicKey, bob.publicKey, { zip215: false }));
  const bundle = {
    ...bundleOf(bob, spk, null),
    signed_prekey: { key_id: 1, public_key: wire(spk.publicKey), signature: wire(signature) },
  };
  throwsCode(() => createInitiatorSession(alice, bundle), 'bad_signature');
});

test('responder: prekey mismatches, a missing x3dh, small-order ephemeral keys, a tampered first message', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 1);
  const otherSpk = generateSignedPrekey(bob, 2);
  const [opk, otherOpk] = generateOneTimePrekeys(10, 2);
  const a = createInitiatorSession(alice, bundleOf(bob, spk, opk!));
  const first = copy(encryptDm(a, bytes('first')));
  const second = copy(encryptDm(a, bytes('second')));
  throwsCode(() => createResponderSession(bob, otherSpk, opk!, first), 'prekey_mismatch');
  throwsCode(() => createResponderSession(bob, spk, otherOpk!, first), 'prekey_mismatch');
  throwsCode(() => createResponderSession(bob, spk, null, first), 'prekey_mismatch');
  throwsCode(() => createResponderSession(bob, spk, opk!, second), 'invalid_message');
  for (const key of SMALL_ORDER_X25519) {
    throwsCode(
      () => createResponderSession(bob, spk, opk!, { ...first, x3dh: { ...first.x3dh!, ephemeral_key: wire(key) } }),
      'small_order_key',
    );
  }
  for (const key of SMALL_ORDER_ED25519) {
    throwsCode(
      () => createResponderSession(bob, spk, opk!, { ...first, x3dh: { ...first.x3dh!, identity_key: wire(key) } }),
      'small_order_key',
    );
  }
  const tampered = copy(first);
  flip(tampered.ciphertext, 0);
  throwsCode(() => createResponderSession(bob, spk, opk!, tampered), 'decrypt_failed');
  // None of the failures used up anything: the genuine first message still opens the session.
  const { session, plaintext } = createResponderSession(bob, spk, opk!, first);
  assert.is(text(plaintext), 'first');
  assert.is(text(decryptDm(session, second)), 'second');
});

test('API misuse: wrong argument types, mismatched key pairs', () => {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const spk = generateSignedPrekey(bob, 1);
  const { a } = handshake();
  throwsCode(() => encryptDm(a, 'text' as unknown as Uint8Array), 'invalid_argument');
  throwsCode(
    () => createInitiatorSession({ publicKey: bob.publicKey, secretKey: alice.secretKey }, bundleOf(bob, spk, null)),
    'invalid_argument',
  );
  throwsCode(
    () =>
      createInitiatorSession(
        { publicKey: alice.publicKey, secretKey: alice.secretKey.slice(1) },
        bundleOf(bob, spk, null),
      ),
    'invalid_argument',
  );
  const first = copy(encryptDm(createInitiatorSession(alice, bundleOf(bob, spk, null)), bytes('x')));
  throwsCode(
    () => createResponderSession(bob, { ...spk, publicKey: generateSignedPrekey(bob, 1).publicKey }, null, first),
    'invalid_argument',
  );
  // The wrong identity (not the one the bundle named): its DH differs, so the first message fails.
  throwsCode(() => createResponderSession(alice, spk, null, first), 'decrypt_failed');
  throwsCode(() => generateSignedPrekey(alice, -1), 'invalid_argument');
  throwsCode(() => generateSignedPrekey(alice, 1.5), 'invalid_argument');
  throwsCode(() => generateOneTimePrekeys(0, -1), 'invalid_argument');
  throwsCode(() => generateOneTimePrekeys(Number.MAX_SAFE_INTEGER, 2), 'invalid_argument');
  throwsCode(() => encryptGroup(createSenderKey('alice'), [1, 2] as unknown as Uint8Array), 'invalid_argument');
});

const snapshot = (receiver: SenderKeyReceiver) =>
  JSON.stringify({
    ...receiver,
    chainKey: [...receiver.chainKey],
    skippedKeys: [...receiver.skippedKeys].map(([i, key]) => [i, [...key]]),
    usedKeys: [...receiver.usedKeys].map(([i, key]) => [i, [...key]]),
  });

test('group: tampering and malformed messages change nothing; the genuine message then decrypts', () => {
  const alice = createSenderKey('alice');
  const bob = createSenderKeyReceiver(senderKeyDistribution(alice));
  decryptGroup(bob, encryptGroup(alice, bytes('zero')));
  encryptGroup(alice, bytes('one, skipped'));
  const genuine = copy(encryptGroup(alice, bytes('two')));
  const before = snapshot(bob);
  const cases: [string, (m: SenderKeyMessage) => void, E2eeErrorCode][] = [
    ['ciphertext', (m) => flip(m.message.ciphertext, 0), 'decrypt_failed'],
    ['tag', (m) => flip(m.message.ciphertext, -1), 'decrypt_failed'],
    ['nonce', (m) => flip(m.message.nonce, 0), 'decrypt_failed'],
    ['iteration + 1', (m) => void (m.message.iteration += 1), 'decrypt_failed'],
    ['iteration - 1 (a cached skipped key)', (m) => void (m.message.iteration -= 1), 'decrypt_failed'],
    ['iteration 0 (a cached used key)', (m) => void (m.message.iteration = 0), 'decrypt_failed'],
    ['chain_id', (m) => void (m.message.chain_id = (m.message.chain_id + 1) >>> 0), 'chain_mismatch'],
    ['v 2', (m) => void ((m as { v: number }).v = 2), 'unsupported_version'],
    ['sk false', (m) => void ((m as { sk: boolean }).sk = false), 'invalid_message'],
    ['nonce 13 bytes', (m) => void m.message.nonce.push(1), 'invalid_message'],
    ['ciphertext 15 bytes', (m) => void (m.message.ciphertext = m.message.ciphertext.slice(0, 15)), 'invalid_message'],
    ['chain_id beyond u32', (m) => void (m.message.chain_id = 2 ** 32), 'invalid_message'],
    ['iteration negative', (m) => void (m.message.iteration = -1), 'invalid_message'],
    ['message missing', (m) => void delete (m as { message?: unknown }).message, 'invalid_message'],
  ];
  for (const [name, tamper, code] of cases) {
    const message = copy(genuine);
    tamper(message);
    try {
      throwsCode(() => decryptGroup(bob, message), code);
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`);
    }
    assert.is(snapshot(bob), before, `${name} changed the receiver`);
  }
  assert.is(text(decryptGroup(bob, genuine)), 'two');
});

test('group: malformed distributions are rejected', () => {
  const good = senderKeyDistribution(createSenderKey('alice'));
  const cases: [string, unknown][] = [
    ['chain_key 31 bytes', { ...good, chain_key: good.chain_key.slice(1) }],
    ['chain_key 33 bytes', { ...good, chain_key: [...good.chain_key, 0] }],
    ['chain_id beyond u32', { ...good, chain_id: 2 ** 32 }],
    ['iteration fractional', { ...good, iteration: 0.5 }],
    ['sender_id empty', { ...good, sender_id: '' }],
    ['sender_id missing', { ...good, sender_id: undefined }],
    ['not an object', 'distribution'],
  ];
  for (const [name, distribution] of cases) {
    try {
      throwsCode(() => createSenderKeyReceiver(distribution as never), 'invalid_message');
    } catch (error) {
      throw new Error(`${name}: ${(error as Error).message}`);
    }
  }
});

test('error messages never contain key material or plaintext', () => {
  const { a, b } = handshake();
  const message = copy(encryptDm(a, bytes('a secret plaintext')));
  flip(message.ciphertext, 0);
  const error = throwsCode(() => decryptDm(b, message), 'decrypt_failed');
  for (const secret of [b.rootKey, b.ratchetKeyPair.secretKey, b.receivingChain!.chainKey]) {
    assert.not.ok(error.message.includes(Buffer.from(secret).toString('hex')));
    assert.not.ok(error.message.includes(Array.from(secret).join(',')));
  }
  assert.not.ok(error.message.includes('secret plaintext'));
});

test.run();
