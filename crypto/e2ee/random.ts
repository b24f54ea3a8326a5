// Where every random byte of the e2ee library comes from.
//
// Production reads `crypto.getRandomValues` (the Web Crypto global, present in node ≥ 19 and in
// browsers), so the library needs no node import and no I/O. Known-answer tests need fixed
// "random" bytes (ephemeral keys, ratchet keys, nonces) to reproduce committed vectors; they
// swap the source with `withRandomSource`, which is deliberately not exported from index.ts:
// the public API has no way to make the library use predictable randomness.

export type RandomSource = (length: number) => Uint8Array;

const systemRandom: RandomSource = (length) => crypto.getRandomValues(new Uint8Array(length));

let source: RandomSource = systemRandom;

/** `length` random bytes from the current source: for keys, and anything secret. */
export function randomBytes(length: number): Uint8Array {
  const bytes = source(length);
  // A test source that hands back the wrong length would silently shift every later draw.
  if (!(bytes instanceof Uint8Array) || bytes.length !== length) {
    throw new Error(`random source returned ${bytes?.length} bytes, expected ${length}`);
  }
  return bytes;
}

/**
 * Runs `work` with `replacement` as the random source, restoring the previous source afterwards
 * even when `work` throws. Tests only (see the header); synchronous work only, because the
 * library itself is synchronous and an await would let other code draw from the replacement.
 */
export function withRandomSource<T>(replacement: RandomSource, work: () => T): T {
  const previous = source;
  source = replacement;
  try {
    return work();
  } finally {
    source = previous;
  }
}

// Nonces are drawn on every message, and each crypto.getRandomValues call costs a few
// microseconds of fixed overhead (the crossing into native code and a fresh buffer), about a
// tenth of a group message's whole cost here. Nonces are public and only need to be unique under
// their key (each message key is used once anyway), so they come from a pool filled 4 KiB at a
// time. Keys never do: pooled bytes waiting in memory would let someone who reads memory once
// predict ratchet keys generated later, delaying the ratchet's recovery from that compromise.
// Bytes handed out are wiped from the pool.
const POOL_BYTES = 4096;
let pool: Uint8Array = new Uint8Array(0);
let poolOffset = 0;

/** `length` (≤ 64) random bytes for a public nonce. */
export function randomNonce(length: number): Uint8Array {
  if (source !== systemRandom || length > 64) return randomBytes(length);
  if (poolOffset + length > pool.length) {
    pool = systemRandom(POOL_BYTES);
    poolOffset = 0;
  }
  const nonce = pool.slice(poolOffset, poolOffset + length);
  pool.fill(0, poolOffset, poolOffset + length);
  poolOffset += length;
  return nonce;
}
