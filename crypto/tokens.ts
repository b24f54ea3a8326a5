// Bearer tokens, their lookup hashes, and random identifiers.
//
// A token is shown to its owner once; the log and the read models keep only `hashToken(token)`
// (DESIGN.md, "Events"), and a presented token is found by hashing it and looking the hash up.
// A plain SHA-256 suffices here, unlike for passwords: tokens carry at least 128 random bits,
// so there is nothing to brute-force, and a fast hash keeps the lookup an index hit.

import { Buffer } from 'node:buffer';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';

// Below 16 bytes (128 bits) a token or id could be guessed or collide; refuse rather than
// silently hand out something weak.
const MIN_RANDOM_BYTES = 16;
const MAX_RANDOM_BYTES = 1024;

/**
 * `prefix` followed by `bytes` random bytes in base64url without padding (RFC 4648 §5:
 * `A-Z a-z 0-9 - _`), e.g. `generateToken('orch_')` → `orch_` + 43 characters. The prefix lets
 * people and secret scanners recognise the token's kind; base64url keeps it URL- and
 * header-safe and shorter than hex.
 */
export function generateToken(prefix: string, bytes = 32): string {
  return prefix + randomBase64Url(bytes);
}

/** Lowercase hex SHA-256 (64 characters) of the token's UTF-8 bytes: what gets stored and looked up. */
export function hashToken(token: string): string {
  return bytesToHex(sha256(utf8ToBytes(token)));
}

/**
 * Compares two secrets without an early exit on the first differing byte, so response timing
 * does not reveal how much of a guess was right. Different lengths return false at once: a
 * secret's length is public (tokens have a fixed shape), only its content is not.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = utf8ToBytes(a);
  const y = utf8ToBytes(b);
  if (x.length !== y.length) return false;
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

/** A random identifier in base64url without padding (16 bytes → 22 characters): session ids, CSRF tokens. */
export function randomId(bytes = 16): string {
  return randomBase64Url(bytes);
}

function randomBase64Url(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < MIN_RANDOM_BYTES || bytes > MAX_RANDOM_BYTES) {
    throw new RangeError(
      `random byte count must be an integer from ${MIN_RANDOM_BYTES} to ${MAX_RANDOM_BYTES}, got ${bytes}`,
    );
  }
  return Buffer.from(randomBytes(bytes)).toString('base64url');
}
