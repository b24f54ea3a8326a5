// What two people compare to check they hold each other's real identity keys.

import { checkBytes } from './keys.ts';
import { concat, KEY_BYTES, sha256Digest, toHex } from './primitives.ts';

/** Lowercase hex SHA-256 of the Ed25519 identity public key (64 characters). */
export function fingerprint(identityPublicKey: Uint8Array): string {
  checkBytes(identityPublicKey, KEY_BYTES, 'identityPublicKey');
  return toHex(sha256Digest(identityPublicKey));
}

/**
 * 30 digits in 6 groups of 5, the same whichever side computes it: SHA-256 of the two 32-byte
 * keys sorted bytewise and concatenated; each group is 5 digest bytes read as a big-endian
 * integer, modulo 100000, with leading zeros.
 */
export function safetyNumber(a: Uint8Array, b: Uint8Array): string {
  checkBytes(a, KEY_BYTES, 'a');
  checkBytes(b, KEY_BYTES, 'b');
  const digest = sha256Digest(compareBytes(a, b) <= 0 ? concat(a, b) : concat(b, a));
  const groups: string[] = [];
  for (let group = 0; group < 6; group++) {
    let value = 0;
    // 5 bytes = 40 bits, well inside a double's exact integer range.
    for (let i = 0; i < 5; i++) value = value * 256 + digest[group * 5 + i]!;
    groups.push(String(value % 100_000).padStart(5, '0'));
  }
  return groups.join(' ');
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return 0;
}
