// A user's long-term and medium-term keys: the Ed25519 identity, the signed X25519 prekey and the
// one-time X25519 prekeys (Encryption wire contract, "X3DH"), and the checks applied when they
// are handed back to the library. These arguments are the caller's own keys, so a bad one is
// API misuse (`invalid_argument`), not hostile input.

import { E2eeError } from './errors.ts';
import {
  edPublicKey,
  edSign,
  equalBytes,
  generateX25519,
  KEY_BYTES,
  SIGNATURE_BYTES,
  x25519PublicKey,
} from './primitives.ts';
import { randomBytes } from './random.ts';

export interface IdentityKeyPair {
  /** Ed25519 public key, 32 bytes. */
  readonly publicKey: Uint8Array;
  /** The 32-byte Ed25519 seed (RFC 8032 private key). */
  readonly secretKey: Uint8Array;
}

export interface SignedPrekey {
  readonly keyId: number;
  /** X25519 public key, 32 bytes. */
  readonly publicKey: Uint8Array;
  /** X25519 secret, 32 bytes. */
  readonly secretKey: Uint8Array;
  /** Ed25519 signature by the identity key over exactly the 32 public-key bytes. */
  readonly signature: Uint8Array;
}

export interface OneTimePrekey {
  readonly keyId: number;
  readonly publicKey: Uint8Array;
  readonly secretKey: Uint8Array;
}

export function generateIdentityKeyPair(): IdentityKeyPair {
  const secretKey = randomBytes(KEY_BYTES);
  return { publicKey: edPublicKey(secretKey), secretKey };
}

export function generateSignedPrekey(identity: IdentityKeyPair, keyId: number): SignedPrekey {
  checkIdentity(identity);
  checkKeyId(keyId, 'keyId');
  const { publicKey, secretKey } = generateX25519();
  return { keyId, publicKey, secretKey, signature: edSign(publicKey, identity.secretKey) };
}

export function generateOneTimePrekeys(firstKeyId: number, count: number): OneTimePrekey[] {
  checkKeyId(firstKeyId, 'firstKeyId');
  if (!Number.isSafeInteger(count) || count < 0 || !Number.isSafeInteger(firstKeyId + count)) {
    throw new E2eeError('invalid_argument', 'count must be a non-negative integer and the last key id a safe integer');
  }
  return Array.from({ length: count }, (_, i) => ({ keyId: firstKeyId + i, ...generateX25519() }));
}

// --- checks on keys handed back to the library --------------------------------------------------

export function checkBytes(value: unknown, length: number, what: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new E2eeError('invalid_argument', `${what} must be a Uint8Array of ${length} bytes`);
  }
}

export function checkKeyId(value: unknown, what: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new E2eeError('invalid_argument', `${what} must be a non-negative safe integer`);
  }
}

/**
 * The public half must belong to the seed: a mismatched pair would produce sessions that the
 * peer can never decrypt (the AD would name one key while the DHs use another), a failure that
 * otherwise surfaces far away as `decrypt_failed`.
 */
export function checkIdentity(identity: IdentityKeyPair): void {
  if (typeof identity !== 'object' || identity === null)
    throw new E2eeError('invalid_argument', 'identity must be a key pair');
  checkBytes(identity.publicKey, KEY_BYTES, 'identity.publicKey');
  checkBytes(identity.secretKey, KEY_BYTES, 'identity.secretKey');
  if (!equalBytes(edPublicKey(identity.secretKey), identity.publicKey)) {
    throw new E2eeError('invalid_argument', 'identity.publicKey does not belong to identity.secretKey');
  }
}

/** Same reasoning as checkIdentity, for the responder's signed or one-time prekey. */
export function checkPrekey(prekey: OneTimePrekey | SignedPrekey, what: string): void {
  if (typeof prekey !== 'object' || prekey === null)
    throw new E2eeError('invalid_argument', `${what} must be a prekey`);
  checkKeyId(prekey.keyId, `${what}.keyId`);
  checkBytes(prekey.publicKey, KEY_BYTES, `${what}.publicKey`);
  checkBytes(prekey.secretKey, KEY_BYTES, `${what}.secretKey`);
  if ('signature' in prekey) checkBytes(prekey.signature, SIGNATURE_BYTES, `${what}.signature`);
  if (!equalBytes(x25519PublicKey(prekey.secretKey), prekey.publicKey)) {
    throw new E2eeError('invalid_argument', `${what}.publicKey does not belong to ${what}.secretKey`);
  }
}
