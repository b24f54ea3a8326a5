import { createHash } from 'node:crypto';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  fingerprint,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  safetyNumber,
} from '../../../crypto/e2ee/index.ts';
import { throwsCode } from './helpers.ts';

const test = suite('crypto/e2ee/keys');

test('identity: a 32-byte Ed25519 seed and its public key; fresh every time', () => {
  const identity = generateIdentityKeyPair();
  assert.is(identity.publicKey.length, 32);
  assert.is(identity.secretKey.length, 32);
  assert.equal(ed25519.getPublicKey(identity.secretKey), identity.publicKey);
  assert.not.equal(generateIdentityKeyPair().secretKey, identity.secretKey);
});

test('signed prekey: an X25519 pair signed (strictly verifiable) over exactly its 32 public-key bytes', () => {
  const identity = generateIdentityKeyPair();
  const spk = generateSignedPrekey(identity, 42);
  assert.is(spk.keyId, 42);
  assert.equal(x25519.getPublicKey(spk.secretKey), spk.publicKey);
  assert.is(spk.signature.length, 64);
  assert.ok(ed25519.verify(spk.signature, spk.publicKey, identity.publicKey, { zip215: false }));
  assert.not.ok(
    ed25519.verify(spk.signature, Uint8Array.of(...spk.publicKey, 0), identity.publicKey, { zip215: false }),
  );
  assert.not.ok(ed25519.verify(spk.signature, spk.publicKey, generateIdentityKeyPair().publicKey, { zip215: false }));
});

test('one-time prekeys: consecutive ids from firstKeyId, distinct X25519 pairs', () => {
  const keys = generateOneTimePrekeys(100, 5);
  assert.equal(
    keys.map((k) => k.keyId),
    [100, 101, 102, 103, 104],
  );
  for (const key of keys) assert.equal(x25519.getPublicKey(key.secretKey), key.publicKey);
  assert.is(new Set(keys.map((k) => Buffer.from(k.publicKey).toString('hex'))).size, 5);
  assert.equal(generateOneTimePrekeys(0, 0), []);
});

test('fingerprint: lowercase hex SHA-256 of the Ed25519 public key', () => {
  const { publicKey } = generateIdentityKeyPair();
  assert.is(fingerprint(publicKey), createHash('sha256').update(publicKey).digest('hex'));
  assert.match(fingerprint(publicKey), /^[0-9a-f]{64}$/);
  throwsCode(() => fingerprint(publicKey.slice(1)), 'invalid_argument');
});

test('safety number: 6 groups of 5 digits, symmetric, from SHA-256 of the sorted keys', () => {
  const a = generateIdentityKeyPair().publicKey;
  const b = generateIdentityKeyPair().publicKey;
  const number = safetyNumber(a, b);
  assert.match(number, /^\d{5}( \d{5}){5}$/);
  assert.is(safetyNumber(b, a), number);
  assert.is.not(safetyNumber(a, generateIdentityKeyPair().publicKey), number);
  // Recomputed here from the definition, with node's SHA-256.
  const [low, high] = Buffer.compare(a, b) <= 0 ? [a, b] : [b, a];
  const digest = createHash('sha256').update(low).update(high).digest();
  const groups = [0, 1, 2, 3, 4, 5].map((g) => String(digest.readUIntBE(g * 5, 5) % 100_000).padStart(5, '0'));
  assert.is(number, groups.join(' '));
  // Leading zeros are kept: all-zero and all-0xff keys give a fixed answer.
  const zeros = new Uint8Array(32);
  const ones = new Uint8Array(32).fill(0xff);
  assert.is(safetyNumber(ones, zeros), safetyNumber(zeros, ones));
  throwsCode(() => safetyNumber(a, b.slice(1)), 'invalid_argument');
});

test('argument checks', () => {
  const identity = generateIdentityKeyPair();
  throwsCode(() => generateSignedPrekey(identity, Number.NaN), 'invalid_argument');
  throwsCode(() => generateSignedPrekey({ ...identity, secretKey: new Uint8Array(32) }, 1), 'invalid_argument');
  throwsCode(() => generateOneTimePrekeys(-1, 1), 'invalid_argument');
});

test.run();
