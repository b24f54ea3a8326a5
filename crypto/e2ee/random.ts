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

/** `length` random bytes from the current source. */
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
