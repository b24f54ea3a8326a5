// Sealing secrets at rest (DESIGN.md, "Events": no secret reaches the log in plaintext).
//
// Used for values that must be shown or used again later (an API key on /api/v1/me, a bot
// token), where a one-way hash is not enough. The 32-byte server key comes in as an argument:
// this module does no I/O and never sees configuration.
//
// XChaCha20-Poly1305 because its 24-byte nonce is large enough to pick at random for every seal
// with no counter to persist and no realistic chance of reuse under one key.
//
// The `context` (e.g. `api_key:<user id>`) is authenticated associated data: it is not stored in
// the sealed string, but opening requires the same context, so a ciphertext copied into another
// user's record (or another field) fails to open instead of revealing its secret there.
//
// Text form: `v1.<base64url(nonce || ciphertext || tag)>`. The version prefix lets the scheme
// change later while old values still open; it is also bound into the associated data so a
// value can never be opened under a different version's rules.
//
// Error messages never include the key, the plaintext or the sealed value.

import { Buffer } from 'node:buffer';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { bytesToHex, bytesToUtf8, randomBytes, utf8ToBytes } from '@noble/ciphers/utils.js';

const VERSION = 'v1';
const KEY_BYTES = 32;
const NONCE_BYTES = 24;
const TAG_BYTES = 16;

/** Raised for every failure to seal or open; the message says which kind, never the secret. */
export class SealError extends Error {
  override name = 'SealError';
}

/** Seals `plaintext` under `key`, bound to `context`. Each call uses a fresh random nonce. */
export function sealSecret(key: Uint8Array, plaintext: string, context: string): string {
  assertKey(key);
  const nonce = randomBytes(NONCE_BYTES);
  const ciphertext = xchacha20poly1305(key, nonce, associatedData(VERSION, context)).encrypt(utf8ToBytes(plaintext));
  const payload = new Uint8Array(NONCE_BYTES + ciphertext.length);
  payload.set(nonce, 0);
  payload.set(ciphertext, NONCE_BYTES);
  return `${VERSION}.${Buffer.from(payload).toString('base64url')}`;
}

/**
 * Opens a value made by `sealSecret`. Throws a SealError on an unknown version, a malformed
 * value, or a failed authentication (tampered value, wrong key or wrong context: AEAD cannot
 * tell these apart, and saying which would only help an attacker).
 */
export function openSecret(key: Uint8Array, sealed: string, context: string): string {
  assertKey(key);
  const dot = sealed.indexOf('.');
  if (dot < 0) throw new SealError('malformed sealed secret: missing version prefix');
  const version = sealed.slice(0, dot);
  if (version !== VERSION) {
    // The prefix is not secret, but cap what we echo so a garbage value cannot flood the logs.
    throw new SealError(`unsupported sealed secret version ${JSON.stringify(version.slice(0, 16))}`);
  }
  const payload = decodeBase64UrlStrict(sealed.slice(dot + 1));
  if (!payload || payload.length < NONCE_BYTES + TAG_BYTES) {
    throw new SealError('malformed sealed secret: bad encoding or too short');
  }
  const nonce = payload.subarray(0, NONCE_BYTES);
  const ciphertext = payload.subarray(NONCE_BYTES);
  let plaintext: Uint8Array;
  try {
    plaintext = xchacha20poly1305(key, nonce, associatedData(version, context)).decrypt(ciphertext);
  } catch {
    throw new SealError(
      'cannot open sealed secret: authentication failed (tampered value, wrong key or wrong context)',
    );
  }
  return bytesToUtf8(plaintext);
}

/** Parses a server key given as exactly 64 hex characters (32 bytes), e.g. from the environment. */
export function parseKeyHex(hex: string): Uint8Array {
  if (typeof hex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hex)) {
    // Report only the length: the rejected string may still be (most of) a real key.
    const length = typeof hex === 'string' ? hex.length : 0;
    throw new SealError(`invalid sealing key: expected exactly 64 hex characters (32 bytes), got ${length} characters`);
  }
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** A fresh random server key as 64 lowercase hex characters (for setup and key rotation). */
export function generateKeyHex(): string {
  return bytesToHex(randomBytes(KEY_BYTES));
}

function assertKey(key: Uint8Array): void {
  if (!(key instanceof Uint8Array) || key.length !== KEY_BYTES) {
    throw new SealError(`invalid sealing key: expected ${KEY_BYTES} bytes`);
  }
}

// The version is part of the authenticated data (see the header). The NUL separator keeps the
// fixed-length prefix and the free-form context unambiguous.
function associatedData(version: string, context: string): Uint8Array {
  return utf8ToBytes(`orchard-seal:${version}\u0000${context}`);
}

// Buffer's base64url decoder silently skips characters outside the alphabet and ignores
// non-zero trailing bits, so several strings would open to the same bytes. Accept only the
// canonical encoding: a sealed value has exactly one valid spelling.
function decodeBase64UrlStrict(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) return null;
  return Uint8Array.from(bytes);
}
