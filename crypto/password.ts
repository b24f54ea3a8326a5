// Password hashing (DESIGN.md, "Events": the log stores a password hash, never the password).
//
// This file uses node's built-in `crypto.scrypt` rather than @noble/hashes on purpose: node's
// scrypt is native (OpenSSL) and runs on the libuv threadpool, so a login never blocks the event
// loop, whereas noble's scrypt is pure JS on the main thread and would stall every other request
// for hundreds of milliseconds per hash at these parameters.
//
// Parameters follow OWASP's password storage cheat sheet for scrypt: N=2^17, r=8, p=1, which
// needs 128 MiB of memory per hash (so up to 512 MiB with libuv's default 4 threads hashing at
// once). Every encoded hash names its own parameters:
//
//   scrypt$<logN>$<r>$<p>$<salt base64url>$<hash base64url>
//
// so the parameters can be raised later: old hashes still verify with the parameters they were
// made with, and `needsRehash` tells the login path to re-hash with the current ones.
//
// Passwords are NFKC-normalised first (NIST SP 800-63B §5.1.1.2), so the same password typed on
// systems that compose accents differently still matches.

import { Buffer } from 'node:buffer';
import { scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { randomBytes } from '@noble/hashes/utils.js';

export const PASSWORD_PARAMS = Object.freeze({
  /** log2 of the CPU/memory cost N. */
  logN: 17,
  /** Block size. */
  r: 8,
  /** Parallelisation. */
  p: 1,
  saltBytes: 16,
  hashBytes: 32,
});

// Bounds for parameters read back from a stored string. Stored hashes are ours, but a corrupt or
// planted value must not make a login allocate gigabytes or spin for minutes.
const MAX_LOG_N = 20;
const MAX_R = 32;
const MAX_P = 16;
const MAX_MEMORY_BYTES = 1024 * 1024 * 1024;

interface Decoded {
  logN: number;
  r: number;
  p: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

/** Hashes a password with a fresh random salt and the current PASSWORD_PARAMS. */
export async function hashPassword(password: string): Promise<string> {
  const { logN, r, p, saltBytes, hashBytes } = PASSWORD_PARAMS;
  const salt = randomBytes(saltBytes);
  const hash = await derive(password, salt, hashBytes, logN, r, p);
  return encode({ logN, r, p, salt, hash });
}

/**
 * True when `password` matches `encoded`, using the parameters recorded in `encoded`. A
 * malformed or out-of-bounds encoding returns false rather than throwing: to the login path it
 * is simply not a match.
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const decoded = decode(encoded);
  if (!decoded) return false;
  const { logN, r, p, salt, hash } = decoded;
  const candidate = await derive(password, salt, hash.length, logN, r, p);
  // Same length by construction (derived to hash.length); the comparison itself has no early exit.
  return timingSafeEqual(candidate, hash);
}

/**
 * True when `encoded` was not made with the current PASSWORD_PARAMS (or cannot be read), so a
 * successful login should store a fresh `hashPassword` of the password it just verified.
 */
export function needsRehash(encoded: string): boolean {
  const decoded = decode(encoded);
  if (!decoded) return true;
  const current = PASSWORD_PARAMS;
  return (
    decoded.logN !== current.logN ||
    decoded.r !== current.r ||
    decoded.p !== current.p ||
    decoded.salt.length !== current.saltBytes ||
    decoded.hash.length !== current.hashBytes
  );
}

function derive(
  password: string,
  salt: Uint8Array,
  keylen: number,
  logN: number,
  r: number,
  p: number,
): Promise<Buffer> {
  const N = 2 ** logN;
  const options: ScryptOptions = {
    N,
    r,
    p,
    // Node's default cap is 32 MiB, below what N=2^17, r=8 needs. OpenSSL's check counts
    // 128·r·(N + p + 2) bytes; allow exactly that plus slack for rounding.
    maxmem: scryptMemory(logN, r, p) + 1024 * 1024,
  };
  const input = Buffer.from(password.normalize('NFKC'), 'utf8');
  return new Promise((resolve, reject) => {
    scrypt(input, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

function scryptMemory(logN: number, r: number, p: number): number {
  return 128 * r * (2 ** logN + p + 2);
}

function encode({ logN, r, p, salt, hash }: Decoded): string {
  return ['scrypt', logN, r, p, b64url(salt), b64url(hash)].join('$');
}

function decode(encoded: string): Decoded | null {
  if (typeof encoded !== 'string') return null;
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const logN = smallInt(parts[1]);
  const r = smallInt(parts[2]);
  const p = smallInt(parts[3]);
  const salt = fromB64urlStrict(parts[4]);
  const hash = fromB64urlStrict(parts[5]);
  if (logN === null || r === null || p === null || !salt || !hash) return null;
  if (logN < 1 || logN > MAX_LOG_N || r < 1 || r > MAX_R || p < 1 || p > MAX_P) return null;
  if (scryptMemory(logN, r, p) > MAX_MEMORY_BYTES) return null;
  if (salt.length < 8 || salt.length > 64 || hash.length < 16 || hash.length > 64) return null;
  return { logN, r, p, salt, hash };
}

// Decimal without sign, leading zeros or exponent, so each parameter has one spelling.
function smallInt(text: string | undefined): number | null {
  if (text === undefined || !/^(0|[1-9][0-9]{0,5})$/.test(text)) return null;
  return Number(text);
}

function b64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

// Buffer's decoder skips foreign characters and stray trailing bits; accept only the canonical
// spelling so a damaged string is reported as malformed rather than half-decoded.
function fromB64urlStrict(text: string | undefined): Buffer | null {
  if (text === undefined || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}
