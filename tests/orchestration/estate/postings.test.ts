// The search index's posting containers (projections/orchestration/estate-postings.ts):
// canonical encoding, and set operations checked against plain sets.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  and,
  andNot,
  cardinality,
  changed,
  CONTAINER_SIZE,
  fromBits,
  highest,
  or,
  size,
  toBits,
  type PostingSet,
} from '../../../projections/orchestration/estate-postings.ts';

const test = suite('estate posting containers');

function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a * 1103515245 + 12345) % 2147483648;
    return a / 2147483648;
  };
}

const offsetsOf = (data: Buffer | null) => {
  const bits = toBits(data);
  const out: number[] = [];
  for (let v = 0; v < CONTAINER_SIZE; v++) if (bits[v >>> 5]! & (1 << (v & 31))) out.push(v);
  return out;
};

test('arrays up to 4,096 offsets, bitmaps beyond; the encoding depends on the set alone', () => {
  const small = changed(null, [5, 1, 65535, 1]);
  assert.is(small![0], 0);
  assert.is(small!.length, 1 + 3 * 2);
  assert.equal(offsetsOf(small), [1, 5, 65535]);
  const many = Array.from({ length: 4097 }, (_, i) => i * 3);
  const big = changed(null, many);
  assert.is(big![0], 1);
  assert.is(big!.length, 1 + 8192);
  assert.equal(offsetsOf(big), many);
  // Removing back under the threshold gives the array form again, the same bytes as built directly.
  const back = changed(big, [], [many[4096]!]);
  assert.is(back![0], 0);
  assert.equal(back, changed(null, many.slice(0, 4096)));
  // Built in one go or in steps: identical bytes.
  let stepwise: Buffer | null = null;
  for (let i = 0; i < many.length; i += 500) stepwise = changed(stepwise, many.slice(i, i + 500));
  assert.equal(stepwise, big);
  assert.is(changed(small, [], [1, 5, 65535]), null);
  assert.is(fromBits(new Uint32Array(2048)), null);
});

test('and, or, andNot, size and highest agree with plain sets', () => {
  const rand = rng(7);
  for (let round = 0; round < 20; round++) {
    const make = (density: number) => {
      const set = new Set<number>();
      for (let i = 0; i < 3 * CONTAINER_SIZE; i++) if (rand() < density) set.add(i);
      return set;
    };
    const a = make(rand() * 0.2),
      b = make(rand() * 0.02);
    const encode = (set: Set<number>): PostingSet => {
      const out: PostingSet = new Map();
      for (let hi = 0; hi < 3; hi++) {
        const offsets = [...set].filter((o) => Math.floor(o / CONTAINER_SIZE) === hi).map((o) => o % CONTAINER_SIZE);
        const data = changed(null, offsets);
        if (data) out.set(hi, toBits(data));
      }
      return out;
    };
    const A = encode(a),
      B = encode(b);
    assert.is(size(and(A, B)), [...a].filter((x) => b.has(x)).length);
    assert.is(size(or(A, B)), new Set([...a, ...b]).size);
    assert.is(size(andNot(A, B)), [...a].filter((x) => !b.has(x)).length);
    const top = [...a].sort((x, y) => y - x).slice(0, 25);
    assert.equal(highest(A, 25), top);
  }
});

test('cardinality counts every bit, the high bit of a word included', () => {
  const bits = new Uint32Array(2048);
  bits[0] = 0xffffffff;
  bits[2047] = 0x80000001;
  assert.is(cardinality(bits), 34);
  assert.equal(highest(new Map([[2, bits]]), 3), [
    2 * CONTAINER_SIZE + 65535,
    2 * CONTAINER_SIZE + 65504,
    2 * CONTAINER_SIZE + 31,
  ]);
});

test.run();
