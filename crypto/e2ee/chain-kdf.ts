// The spec's chain step, the one KDF on every message's path:
//
//   message key    = HKDF-SHA256(salt = chain key, ikm = 0x01, info, 32)
//   next chain key = HKDF-SHA256(salt = chain key, ikm = 0x02, info, 32)
//
// Computed as RFC 5869 spells it (extract: PRK = HMAC(salt, ikm); expand with one block:
// OKM = HMAC(PRK, info ‖ 0x01)), but without noble's general `hkdf`, for speed: noble allocates
// four fresh SHA-256 instances (each with a DataView) per HKDF, which costs more than the hashing
// itself for inputs this small. Here a handful of SHA-256 instances live for the module's
// lifetime and are reset by cloning a blank one into them (`_cloneInto`, part of noble's Hash
// interface), and the two HKDFs share the HMAC key schedule of the chain key: 14 SHA-256
// compressions per step instead of 16, and no per-step hash allocations. Output is identical
// to `hkdf(sha256, ikm, chainKey, info, 32)` (the known-answer tests check it against OpenSSL).
//
// The scratch instances hold key-derived state only between calls of this synchronous function;
// they are wiped (destroy) before it returns.

import { sha256 } from '@noble/hashes/sha2.js';

type Sha256 = ReturnType<typeof sha256.create>;

const BLOCK = 64;
const HALF = BLOCK / 2;
const ONE = Uint8Array.of(0x01);
const TWO = Uint8Array.of(0x02);

const blank = sha256.create();
const keyInner = sha256.create();
const keyOuter = sha256.create();
const workInner = sha256.create();
const workOuter = sha256.create();
const pad = new Uint8Array(BLOCK);

/** Loads HMAC's inner and outer states for a key of at most one block. */
function setKey(key: Uint8Array, inner: Sha256, outer: Sha256): void {
  loadPadded(key, 0x36, inner);
  loadPadded(key, 0x5c, outer);
  pad.fill(0);
}

function loadPadded(key: Uint8Array, byte: number, state: Sha256): void {
  pad.fill(byte);
  for (let i = 0; i < key.length; i++) pad[i] = key[i]! ^ byte;
  // Two half-block updates: noble builds a DataView for a whole-block update, not for these.
  blank._cloneInto(state).update(pad.subarray(0, HALF)).update(pad.subarray(HALF));
}

/** HMAC(key loaded in inner/outer, a ‖ b). */
function mac(inner: Sha256, outer: Sha256, a: Uint8Array, b?: Uint8Array): Uint8Array {
  const running = inner._cloneInto(workInner).update(a);
  if (b) running.update(b);
  return outer._cloneInto(workOuter).update(running.digest()).digest();
}

export function chainStep(
  chainKey: Uint8Array,
  info: Uint8Array,
): { messageKey: Uint8Array; nextChainKey: Uint8Array } {
  try {
    setKey(chainKey, keyInner, keyOuter);
    const prkMessage = mac(keyInner, keyOuter, ONE);
    const prkChain = mac(keyInner, keyOuter, TWO);
    setKey(prkMessage, keyInner, keyOuter);
    const messageKey = mac(keyInner, keyOuter, info, ONE);
    setKey(prkChain, keyInner, keyOuter);
    const nextChainKey = mac(keyInner, keyOuter, info, ONE);
    prkMessage.fill(0);
    prkChain.fill(0);
    return { messageKey, nextChainKey };
  } finally {
    // destroy() zeroes state and buffer; the next setKey/mac revives an instance by cloning into it.
    for (const state of [keyInner, keyOuter, workInner, workOuter]) state.destroy();
  }
}
