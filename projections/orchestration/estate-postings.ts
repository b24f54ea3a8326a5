// Posting sets of the estate search index: which chunks (by ordinal) hold a lexeme, or belong to
// a partition (the estate, the vault, a category). Stored in PostgreSQL as containers in the
// manner of Roaring bitmaps: ordinals split by their high bits into containers of 65,536; a
// container is a sorted array of 16-bit offsets while it holds at most 4,096 of them, and a
// 65,536-bit bitmap beyond. The encoding is canonical (a function of the set alone), so a
// rebuild writes byte-identical rows.
//
// Why not count matches with the GIN index: an exact count(*) visits one heap tuple per match,
// which for a term in a third of a million chunks is hundreds of thousands of visits (far over
// 50 ms). Intersecting and counting these sets costs the same for common and rare terms: a few
// dozen containers, each at most 8 kB.
//
// Encoding (bytea): byte 0 is 0 for an array (then 2 bytes per offset, little-endian,
// ascending) or 1 for a bitmap (then 8,192 bytes, bit i of byte j is offset 8j + i).

export const CONTAINER_BITS = 16;
export const CONTAINER_SIZE = 1 << CONTAINER_BITS;
const ARRAY_MAX = 4096;
const WORDS = CONTAINER_SIZE / 32;

export const hiOf = (ordinal: number) => Math.floor(ordinal / CONTAINER_SIZE);
export const loOf = (ordinal: number) => ordinal % CONTAINER_SIZE;

/** A container as a fresh bitmap (2,048 32-bit words); an absent container is empty. */
export function toBits(data: Uint8Array | null): Uint32Array {
  const bits = new Uint32Array(WORDS);
  if (!data || data.length === 0) return bits;
  if (data[0] === 1) {
    const view = new DataView(data.buffer, data.byteOffset + 1, data.length - 1);
    for (let w = 0; w < WORDS; w++) bits[w] = view.getUint32(w * 4, true);
    return bits;
  }
  for (let i = 1; i + 1 < data.length; i += 2) {
    const v = data[i]! | (data[i + 1]! << 8);
    bits[v >>> 5]! |= 1 << (v & 31);
  }
  return bits;
}

export function cardinality(bits: Uint32Array): number {
  let n = 0;
  for (let w = 0; w < bits.length; w++) {
    let x = bits[w]!;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    n += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return n;
}

/** The canonical encoding of a bitmap; null when it is empty (the row is dropped). */
export function fromBits(bits: Uint32Array): Buffer | null {
  const n = cardinality(bits);
  if (n === 0) return null;
  if (n > ARRAY_MAX) {
    const out = Buffer.alloc(1 + WORDS * 4);
    out[0] = 1;
    for (let w = 0; w < WORDS; w++) out.writeUInt32LE(bits[w]!, 1 + w * 4);
    return out;
  }
  const out = Buffer.alloc(1 + n * 2);
  let at = 1;
  for (let w = 0; w < WORDS; w++) {
    let x = bits[w]!;
    while (x !== 0) {
      const bit = 31 - Math.clz32(x & -x);
      out.writeUInt16LE(w * 32 + bit, at);
      at += 2;
      x &= x - 1;
    }
  }
  return out;
}

/** The canonical encoding of ascending, distinct offsets (a bulk load's fast path); null when none. */
export function encodeSorted(offsets: ArrayLike<number>): Buffer | null {
  const n = offsets.length;
  if (n === 0) return null;
  if (n > ARRAY_MAX) {
    const bits = new Uint32Array(WORDS);
    for (let i = 0; i < n; i++) bits[offsets[i]! >>> 5]! |= 1 << (offsets[i]! & 31);
    return fromBits(bits);
  }
  const out = Buffer.alloc(1 + n * 2);
  for (let i = 0; i < n; i++) out.writeUInt16LE(offsets[i]!, 1 + i * 2);
  return out;
}

/** Add and remove offsets (within one container) and re-encode; removals apply after additions. */
export function changed(data: Uint8Array | null, add: number[], remove: number[] = []): Buffer | null {
  const count = data && data.length > 0 && data[0] === 0 ? (data.length - 1) >> 1 : data && data.length > 0 ? -1 : 0;
  // Most containers are small arrays gaining a few offsets (a fold's additions): merge the two
  // sorted lists in one pass, without decoding into a set.
  if (count >= 0 && remove.length === 0 && count + add.length <= ARRAY_MAX) {
    const adds = Uint16Array.from(add).sort();
    const out = Buffer.allocUnsafe(1 + (count + adds.length) * 2);
    out[0] = 0;
    let i = 0,
      j = 0,
      at = 1,
      last = -1;
    while (i < count || j < adds.length) {
      const a = i < count ? data![1 + 2 * i]! | (data![2 + 2 * i]! << 8) : 0x10000;
      const b = j < adds.length ? adds[j]! : 0x10000;
      const v = a <= b ? a : b;
      if (a <= b) i++;
      if (b <= a) j++;
      if (v === last) continue;
      out[at] = v & 0xff;
      out[at + 1] = v >>> 8;
      at += 2;
      last = v;
    }
    return at === 1 ? null : out.subarray(0, at);
  }
  const bits = toBits(data);
  for (const v of add) bits[v >>> 5]! |= 1 << (v & 31);
  for (const v of remove) bits[v >>> 5]! &= ~(1 << (v & 31));
  return fromBits(bits);
}

/** A set of ordinals as containers by high part. */
export type PostingSet = Map<number, Uint32Array>;

export function and(a: PostingSet, b: PostingSet): PostingSet {
  const out: PostingSet = new Map();
  for (const [hi, x] of a) {
    const y = b.get(hi);
    if (!y) continue;
    const z = new Uint32Array(WORDS);
    for (let w = 0; w < WORDS; w++) z[w] = x[w]! & y[w]!;
    out.set(hi, z);
  }
  return out;
}

export function or(a: PostingSet, b: PostingSet): PostingSet {
  const out: PostingSet = new Map(a);
  for (const [hi, y] of b) {
    const x = out.get(hi);
    if (!x) {
      out.set(hi, y);
      continue;
    }
    const z = new Uint32Array(WORDS);
    for (let w = 0; w < WORDS; w++) z[w] = x[w]! | y[w]!;
    out.set(hi, z);
  }
  return out;
}

export function andNot(a: PostingSet, b: PostingSet): PostingSet {
  const out: PostingSet = new Map();
  for (const [hi, x] of a) {
    const y = b.get(hi);
    if (!y) {
      out.set(hi, x);
      continue;
    }
    const z = new Uint32Array(WORDS);
    for (let w = 0; w < WORDS; w++) z[w] = x[w]! & ~y[w]!;
    out.set(hi, z);
  }
  return out;
}

export function size(set: PostingSet): number {
  let n = 0;
  for (const bits of set.values()) n += cardinality(bits);
  return n;
}

/** Up to `limit` ordinals of the set, highest (newest) first. */
export function highest(set: PostingSet, limit: number): number[] {
  const out: number[] = [];
  for (const hi of [...set.keys()].sort((a, b) => b - a)) {
    const bits = set.get(hi)!;
    for (let w = WORDS - 1; w >= 0 && out.length < limit; w--) {
      let x = bits[w]!;
      while (x !== 0 && out.length < limit) {
        const bit = 31 - Math.clz32(x);
        out.push(hi * CONTAINER_SIZE + w * 32 + bit);
        x &= ~(1 << bit);
      }
    }
    if (out.length >= limit) break;
  }
  return out;
}
