import { Buffer } from 'node:buffer';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyHex, openSecret, parseKeyHex, sealSecret, SealError } from '../../crypto/seal.ts';

const test = suite('crypto/seal');

const key = parseKeyHex(generateKeyHex());
const otherKey = parseKeyHex(generateKeyHex());
const context = 'api_key:7d3c1c52-5b0e-4a37-9d7e-1f1b2b7f0c11';
const secret = 'orch_SuperSecretApiKeyValue-1234567890';

function throwsSealError(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, SealError);
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable('expected a SealError');
}

test('round trip, including empty and non-ASCII plaintexts', () => {
  for (const plaintext of [secret, '', 'pässwörd ✓ 🔑', 'x'.repeat(10_000)]) {
    assert.is(openSecret(key, sealSecret(key, plaintext, context), context), plaintext);
  }
});

test('sealed form is v1.<base64url> and never contains the plaintext', () => {
  const sealed = sealSecret(key, secret, context);
  assert.match(sealed, /^v1\.[A-Za-z0-9_-]+$/);
  assert.not.ok(sealed.includes(secret));
  assert.not.ok(sealed.includes(context));
  // 24-byte nonce + ciphertext (same length as the plaintext) + 16-byte tag.
  assert.is(Buffer.from(sealed.slice(3), 'base64url').length, 24 + Buffer.byteLength(secret) + 16);
});

test('two seals of the same plaintext use different nonces', () => {
  const a = Buffer.from(sealSecret(key, secret, context).slice(3), 'base64url');
  const b = Buffer.from(sealSecret(key, secret, context).slice(3), 'base64url');
  assert.is.not(a.subarray(0, 24).toString('hex'), b.subarray(0, 24).toString('hex'));
  assert.is.not(a.toString('hex'), b.toString('hex'));
});

test('changing any single byte of the payload fails to open', () => {
  const sealed = sealSecret(key, secret, context);
  const payload = Buffer.from(sealed.slice(3), 'base64url');
  for (let i = 0; i < payload.length; i++) {
    const tampered = Buffer.from(payload);
    tampered[i] = tampered[i]! ^ 0x01;
    throwsSealError(() => openSecret(key, `v1.${tampered.toString('base64url')}`, context), /authentication failed/);
  }
});

test('truncated, extended or re-spelled payloads fail', () => {
  const sealed = sealSecret(key, secret, context);
  throwsSealError(() => openSecret(key, sealed.slice(0, -4), context), /malformed|authentication failed/);
  throwsSealError(() => openSecret(key, `${sealed}AAAA`, context), /authentication failed/);
  throwsSealError(() => openSecret(key, `${sealed}=`, context), /malformed/);
  throwsSealError(() => openSecret(key, `${sealed.slice(0, 10)}!${sealed.slice(10)}`, context), /malformed/);
  throwsSealError(() => openSecret(key, 'v1.', context), /malformed/);
  throwsSealError(() => openSecret(key, 'v1.AAAA', context), /malformed/);
});

test('wrong key fails', () => {
  const sealed = sealSecret(key, secret, context);
  throwsSealError(() => openSecret(otherKey, sealed, context), /authentication failed/);
});

test('wrong context fails: a ciphertext cannot be moved to another record', () => {
  const sealed = sealSecret(key, secret, context);
  throwsSealError(
    () => openSecret(key, sealed, 'api_key:00000000-0000-0000-0000-000000000000'),
    /authentication failed/,
  );
  throwsSealError(
    () => openSecret(key, sealed, 'bot_token:7d3c1c52-5b0e-4a37-9d7e-1f1b2b7f0c11'),
    /authentication failed/,
  );
  throwsSealError(() => openSecret(key, sealed, ''), /authentication failed/);
});

test('unknown version or missing prefix is refused clearly', () => {
  const sealed = sealSecret(key, secret, context);
  throwsSealError(() => openSecret(key, `v2${sealed.slice(2)}`, context), /unsupported sealed secret version "v2"/);
  throwsSealError(() => openSecret(key, sealed.slice(3), context), /malformed.*version/);
});

test('error messages never reveal the plaintext or the key', () => {
  const sealed = sealSecret(key, secret, context);
  const keyHex = Buffer.from(key).toString('hex');
  for (const attempt of [
    () => openSecret(otherKey, sealed, context),
    () => openSecret(key, sealed, 'other'),
    () => parseKeyHex(`${keyHex}0`),
  ]) {
    try {
      attempt();
      assert.unreachable('expected a throw');
    } catch (err) {
      const message = (err as Error).message;
      assert.not.ok(message.includes(secret));
      assert.not.ok(message.includes(keyHex));
    }
  }
});

test('parseKeyHex accepts exactly 64 hex characters', () => {
  const hex = generateKeyHex();
  assert.match(hex, /^[0-9a-f]{64}$/);
  assert.is.not(generateKeyHex(), hex);
  const parsed = parseKeyHex(hex);
  assert.instance(parsed, Uint8Array);
  assert.is(parsed.length, 32);
  assert.is(Buffer.from(parsed).toString('hex'), hex);
  assert.equal(parseKeyHex(hex.toUpperCase()), parsed);
  for (const bad of ['', hex.slice(0, 62), `${hex}00`, `${hex.slice(0, 63)}g`, ` ${hex.slice(1)}`, `${hex}\n`]) {
    throwsSealError(() => parseKeyHex(bad), /exactly 64 hex characters/);
  }
});

test('a key of the wrong length is refused when sealing and opening', () => {
  throwsSealError(() => sealSecret(new Uint8Array(16), secret, context), /32 bytes/);
  throwsSealError(() => openSecret(new Uint8Array(31), sealSecret(key, secret, context), context), /32 bytes/);
});

test.run();
