// The spec's primitives (Encryption wire contract, "Primitives"), each wrapped once so the rest of
// the library never calls noble directly and every failure becomes a typed E2eeError.

import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { E2eeError } from './errors.ts';
import { randomBytes } from './random.ts';

export const KEY_BYTES = 32;
export const SIGNATURE_BYTES = 64;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;

export interface X25519KeyPair {
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

/** A fresh X25519 key pair: 32 random bytes as the secret (clamped inside X25519, as RFC 7748). */
export function generateX25519(): X25519KeyPair {
  const secretKey = randomBytes(KEY_BYTES);
  return { publicKey: x25519.getPublicKey(secretKey), secretKey };
}

export function x25519PublicKey(secretKey: Uint8Array): Uint8Array {
  return x25519.getPublicKey(secretKey);
}

/**
 * X25519(secret, public). noble refuses low-order public inputs before running the ladder (so a
 * small-order key never costs a full multiplication against a long-term secret); the all-zero
 * check below is the spec's rule restated, in case a future noble returned zeros instead.
 */
export function dh(secretKey: Uint8Array, publicKey: Uint8Array): Uint8Array {
  let shared: Uint8Array;
  try {
    shared = x25519.getSharedSecret(secretKey, publicKey);
  } catch {
    throw new E2eeError('small_order_key', 'X25519 public key has small order (the shared secret would be all zeros)');
  }
  let any = 0;
  for (const byte of shared) any |= byte;
  if (any === 0) throw new E2eeError('small_order_key', 'X25519 shared secret is all zeros');
  return shared;
}

/**
 * Checks an Ed25519 public key the strict way (canonical RFC 8032 encoding, on the curve, not of
 * small order). Returns its X25519 (Montgomery) form, the spec's "public: Montgomery form of the
 * verifying key".
 */
export function edPublicToX25519(publicKey: Uint8Array, what: string): Uint8Array {
  let point;
  try {
    point = ed25519.Point.fromBytes(publicKey, false);
  } catch {
    throw new E2eeError('invalid_key', `${what} is not a valid Ed25519 public key`);
  }
  if (point.isSmallOrder()) throw new E2eeError('small_order_key', `${what} has small order`);
  return ed25519.utils.toMontgomery(publicKey);
}

/** The spec's "private: first 32 bytes of SHA-512 of the signing key, clamped". */
export function edSecretToX25519(seed: Uint8Array): Uint8Array {
  return ed25519.utils.toMontgomerySecret(seed);
}

export function edPublicKey(seed: Uint8Array): Uint8Array {
  return ed25519.getPublicKey(seed);
}

export function edSign(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed25519.sign(message, seed);
}

/** Strict RFC 8032 verification: no ZIP-215 leniency for non-canonical encodings. */
export function edVerify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  return hkdf(sha256, ikm, salt, info, length);
}

export function sha256Digest(data: Uint8Array): Uint8Array {
  return sha256(data);
}

/**
 * The spec's chain step, shared by the Double Ratchet (info `chatsvc-msg-key`) and Sender Keys
 * (info `chatsvc-sender-key-chain`): message key from input 0x01, next chain key from 0x02.
 */
export { chainStep } from './chain-kdf.ts';

/** ChaCha20-Poly1305 (IETF, 12-byte nonce); the result is ciphertext ‖ 16-byte tag. */
export function seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array, aad?: Uint8Array): Uint8Array {
  return chacha20poly1305(key, nonce, aad).encrypt(plaintext);
}

/** Opens `seal`'s output; any failure (too short, wrong tag) is one `decrypt_failed`. */
export function open(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad?: Uint8Array): Uint8Array {
  try {
    return chacha20poly1305(key, nonce, aad).decrypt(sealed);
  } catch {
    throw new E2eeError('decrypt_failed', 'message authentication failed');
  }
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX[byte];
  return out;
}

const encoder = new TextEncoder();
export const utf8 = (text: string): Uint8Array => encoder.encode(text);
