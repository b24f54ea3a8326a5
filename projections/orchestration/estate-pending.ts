// Pending postings of the estate search index (estate_postings_pending): the encoding of the
// rows a projection batch appends, and their reading (folds and searches, estate-index.ts). Pure.

import type { Lexicon } from '../../domain/orchestration/estate/lexemes.ts';
import { fnv1a } from '../../domain/orchestration/estate/lexemes.ts';

/**
 * Pending postings (estate_postings_pending) are grouped in buckets by a hash of the lexeme
 * (FNV-1a of its UTF-8 bytes, low 8 bits), so a search reads only the buckets of its lexemes.
 */
export const PENDING_BUCKETS = 256;

const bucketOfHash = (hash: number) => hash & (PENDING_BUCKETS - 1);
export const bucketOf = (utf8: Uint8Array) => bucketOfHash(fnv1a(utf8));

/**
 * The postings of these chunks (`items[i]` is the distinct lexemes of the chunk numbered `ordinals[i]`,
 * ascending) as pending rows: per bucket, the entries of its lexemes, each the lexeme's length
 * in UTF-8 bytes (uint16), those bytes, the number of chunks (uint32) and their ordinals
 * (uint32, ascending); all big-endian.
 */
export function pendingRows(
  lexicon: Lexicon,
  items: Int32Array[],
  ordinals: number[],
): { buckets: number[]; rows: Buffer[] } {
  // Invert by a counting sort over the lexeme ids the chunks use.
  const count = new Int32Array(lexicon.size);
  const used: number[] = [];
  for (const ids of items) {
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      if (count[id] === 0) used.push(id);
      count[id]!++;
    }
  }
  const end = new Int32Array(lexicon.size); // after the fill below: the end of each lexeme's run
  const sizes = new Int32Array(PENDING_BUCKETS);
  const bucket = new Int32Array(used.length);
  let total = 0;
  used.forEach((id, u) => {
    end[id] = total;
    total += count[id]!;
    bucket[u] = bucketOfHash(lexicon.utf8Hash(id));
    sizes[bucket[u]!]! += 6 + lexicon.utf8Length(id) + 4 * count[id]!;
  });
  const chunks = new Int32Array(total);
  items.forEach((ids, i) => {
    const ordinal = ordinals[i]!;
    for (let k = 0; k < ids.length; k++) chunks[end[ids[k]!]!++] = ordinal;
  });
  // Encode, one buffer per bucket (big-endian by hand: these are most of a batch's bytes).
  const rows = new Map<number, { out: Buffer; at: number }>();
  used.forEach((id, u) => {
    let row = rows.get(bucket[u]!);
    if (!row) rows.set(bucket[u]!, (row = { out: Buffer.allocUnsafeSlow(sizes[bucket[u]!]!), at: 0 }));
    const { out } = row;
    const n = count[id]!;
    const length = lexicon.utf8Length(id);
    let at = row.at;
    out[at++] = length >>> 8;
    out[at++] = length & 0xff;
    at = lexicon.copyUtf8(id, out, at);
    at = writeUint32(out, at, n);
    for (let c = end[id]! - n; c < end[id]!; c++) at = writeUint32(out, at, chunks[c]!);
    row.at = at;
  });
  const buckets = [...rows.keys()].sort((x, y) => x - y);
  return { buckets, rows: buckets.map((b) => rows.get(b)!.out) };
}

/** One pending row of these lexemes' postings (each list of ordinals distinct, in any order). */
export function pendingRow(entries: [lexeme: string, ordinals: number[]][]): Buffer {
  const encoded = entries.map(([lexeme, ordinals]) => ({
    utf8: Buffer.from(lexeme, 'utf8'),
    ordinals: [...ordinals].sort((a, b) => a - b),
  }));
  const out = Buffer.allocUnsafe(encoded.reduce((n, e) => n + 6 + e.utf8.length + 4 * e.ordinals.length, 0));
  let at = 0;
  for (const { utf8, ordinals } of encoded) {
    out[at++] = utf8.length >>> 8;
    out[at++] = utf8.length & 0xff;
    at += utf8.copy(out, at);
    at = writeUint32(out, at, ordinals.length);
    for (const o of ordinals) at = writeUint32(out, at, o);
  }
  return out;
}

function writeUint32(out: Buffer, at: number, v: number): number {
  out[at] = v >>> 24;
  out[at + 1] = (v >>> 16) & 0xff;
  out[at + 2] = (v >>> 8) & 0xff;
  out[at + 3] = v & 0xff;
  return at + 4;
}

/**
 * Visit each entry of a pending row: its lexeme, and its `count` ordinals at `row[at...]` (read
 * them with `ordinalAt`). Plain loops, no allocation per ordinal: a fold reads every pending
 * posting once.
 */
export function forEachPending(row: Buffer, visit: (lexeme: string, at: number, count: number) => void): void {
  let at = 0;
  while (at < row.length) {
    const length = (row[at]! << 8) | row[at + 1]!;
    const lexeme = row.toString('utf8', at + 2, at + 2 + length);
    at += 2 + length;
    const count = ordinalAt(row, at);
    if (count < 0 || at + 4 + 4 * count > row.length)
      throw new Error(`estate: a pending row is malformed at byte ${at}`);
    visit(lexeme, at + 4, count);
    at += 4 + 4 * count;
  }
}

/** The big-endian uint32 at `at` (ordinals stay below 2^31). */
export const ordinalAt = (row: Buffer, at: number) =>
  (row[at]! << 24) | (row[at + 1]! << 16) | (row[at + 2]! << 8) | row[at + 3]!;
