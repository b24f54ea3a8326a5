// The lexemes of estate text: what the search index stores for a chunk and what a search looks
// up for a query, by one function, so the two always agree. Pure.
//
// The rule (English, in the manner of PostgreSQL's `english` text search configuration):
// 1. Words. A word is a maximal run of letters, digits and combining marks (Unicode \p{L},
//    \p{N}, \p{M}); everything else separates words. So `well-known` is `well` and `known`,
//    `user@example.com` is `user`, `example` and `com`, and `don't` is `don` and `t`.
// 2. Positions. Words are numbered from 1 in order, stop words included (as PostgreSQL does), so
//    ranking sees how near the query's words stand; a position above 16,383 counts as 16,383,
//    and a lexeme keeps its first 256 positions (PostgreSQL's tsvector limits).
// 3. Lexemes. A word is lowercased. One of PostgreSQL's English stop words (its `english.stop`
//    list, below) gives no lexeme. A word with a digit is its own lexeme (as PostgreSQL's
//    `simple` dictionary does for numbers); any other word is reduced by the Snowball English
//    (Porter2) stemmer, which is what PostgreSQL's `english_stem` dictionary runs. A word whose
//    UTF-8 form is over 2,047 bytes gives no lexeme (PostgreSQL's limit for one).
//
// Why not to_tsvector in PostgreSQL: its parser costs about 200 µs of database CPU per
// 1,500-character chunk, more than the rest of an ingest together; this costs 40-100 µs.

import stem from 'wink-porter2-stemmer';

/** PostgreSQL's `english.stop` (tsearch_data), as its snowball dictionary applies it. */
const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over under again further then once here
there when where why how all any both each few more most other some such no nor not only own same so than too very s t can
will just don should now`.split(/\s+/),
);

export const MAX_POSITION = 16_383;
export const MAX_POSITIONS_PER_LEXEME = 256;
export const MAX_LEXEME_BYTES = 2047;

/** The lexemes of a text, each with its ascending positions. */
export type Lexemes = Map<string, number[]>;

// Word characters: a table for ASCII, the Unicode classes beyond.
const ASCII_WORD = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_WORD[c] = 1;
for (let c = 65; c <= 90; c++) ASCII_WORD[c] = 1;
for (let c = 97; c <= 122; c++) ASCII_WORD[c] = 1;
const UNICODE_WORD = /^[\p{L}\p{N}\p{M}]$/u;
const HAS_DIGIT = /\p{N}/u;

/**
 * The lexemes of one text, as ids of the Lexicon that scanned it: `ids[i]` with its ascending
 * positions `positions[offsets[i]] ... positions[offsets[i + 1] - 1]`, in order of first
 * appearance.
 */
export interface TextLexemes {
  ids: Int32Array;
  offsets: Int32Array;
  positions: Int32Array;
}

/** The lexeme of a word (rule 3), or null. */
function wordLexeme(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower) || Buffer.byteLength(lower, 'utf8') > MAX_LEXEME_BYTES) return null;
  const lexeme = HAS_DIGIT.test(lower) ? lower : stem(lower);
  return lexeme === '' ? null : lexeme;
}

const NO_LEXEME = -1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Words a Lexicon holds before `trim` starts it over. */
const WORD_LIMIT = 1 << 20;

const grown = <T extends Int32Array | Uint16Array | Uint8Array>(array: T, size: number): T => {
  if (array.length >= size) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(size, array.length * 2));
  next.set(array);
  return next;
};

/**
 * Words seen before, each with its lexeme, and the lexemes by id: text repeats its words (Zipf's
 * law), and stemming a word costs a hundred times what looking it up does. A word is found by a
 * hash (FNV-1a) of its characters computed while scanning, compared with the text in place, so a
 * known word is never copied out of the text. What belongs together is stored together (a slot
 * holds the hash beside the word; a word its characters' place, length and lexeme), so a lookup
 * touches few cache lines. Ids stay valid until `trim` starts the Lexicon over (only when it is
 * large); what it holds never changes a text's lexemes.
 */
export class Lexicon {
  // Open addressing: slot i is (hash, word + 1) at [2i, 2i + 1]; 0 marks an empty slot.
  private slots = new Int32Array(1 << 17);
  // Word w at [3w, 3w + 2]: where its characters start in `pool`, how many, its lexeme id.
  private wordTable = new Int32Array(3 << 15);
  private pool = new Uint16Array(1 << 18);
  private poolUsed = 0;
  private words = 0;
  private lexemeIds = new Map<string, number>();
  private lexemes: string[] = [];
  // Lexeme l's UTF-8 bytes are utf8Pool[utf8At[2l], + utf8At[2l + 1]); its FNV-1a hash utf8Hash[l].
  private utf8Pool = new Uint8Array(1 << 18);
  private utf8Used = 0;
  private utf8At = new Int32Array(1 << 16);
  private utf8Hashes = new Int32Array(1 << 15);
  // Scratch of one scan: the lexeme id of each word in text order (NO_LEXEME for a stop word);
  // per lexeme id at [2id, 2id + 1], the scan that last saw it and its index in that scan.
  private sequence = new Int32Array(2048);
  private seen = new Int32Array(1 << 16);
  private scans = 0;

  /** Lexeme ids: 0 .. size - 1. */
  get size(): number {
    return this.lexemes.length;
  }

  lexeme(id: number): string {
    return this.lexemes[id]!;
  }

  /** A lexeme's UTF-8 bytes (a view, valid until `trim`). */
  utf8(id: number): Uint8Array {
    return this.utf8Pool.subarray(this.utf8At[2 * id]!, this.utf8At[2 * id]! + this.utf8At[2 * id + 1]!);
  }

  utf8Length(id: number): number {
    return this.utf8At[2 * id + 1]!;
  }

  /** Copy a lexeme's UTF-8 bytes into `out` at `at`; the offset after them. */
  copyUtf8(id: number, out: Uint8Array, at: number): number {
    const from = this.utf8At[2 * id]!;
    const to = from + this.utf8At[2 * id + 1]!;
    const pool = this.utf8Pool;
    for (let i = from; i < to; i++) out[at++] = pool[i]!;
    return at;
  }

  /** fnv1a of the lexeme's UTF-8 bytes, computed once. */
  utf8Hash(id: number): number {
    return this.utf8Hashes[id]!;
  }

  /** Start over when large: every id given before is void; whether it did. */
  trim(): boolean {
    if (this.words < WORD_LIMIT) return false;
    this.slots = new Int32Array(1 << 17);
    this.words = 0;
    this.poolUsed = 0;
    this.lexemeIds.clear();
    this.lexemes = [];
    this.utf8Used = 0;
    this.seen.fill(0);
    this.scans = 0;
    return true;
  }

  /** The distinct lexemes of `text`, in order of first appearance (what the search index needs). */
  distinct(text: string): Int32Array {
    const words = this.wordSequence(text);
    const { sequence, seen } = this;
    const scan = this.scans;
    const out = new Int32Array(words);
    let count = 0;
    for (let k = 0; k < words; k++) {
      const id = sequence[k]!;
      if (id === NO_LEXEME || seen[2 * id] === scan) continue;
      seen[2 * id] = scan;
      out[count++] = id;
    }
    return out.subarray(0, count);
  }

  /** The lexemes of `text` with their positions (what ranking needs). */
  scan(text: string): TextLexemes {
    const words = this.wordSequence(text);
    const { sequence, seen } = this;
    const scan = this.scans;
    const found: number[] = [];
    const counts: number[] = [];
    // Words are numbered from 1, stop words included; a lexeme keeps its first 256 positions.
    // Words past MAX_POSITION all stand at MAX_POSITION, once per lexeme.
    const late = words > MAX_POSITION ? new Set<number>() : null;
    for (let k = 0; k < words; k++) {
      const id = sequence[k]!;
      if (id === NO_LEXEME) continue;
      if (seen[2 * id] !== scan) {
        seen[2 * id] = scan;
        seen[2 * id + 1] = found.length;
        found.push(id);
        counts.push(0);
      }
      const index = seen[2 * id + 1]!;
      const repeated = late !== null && k >= MAX_POSITION && late.has(id);
      if (late !== null && k >= MAX_POSITION) late.add(id);
      if (!repeated && counts[index]! < MAX_POSITIONS_PER_LEXEME) counts[index]!++;
      else sequence[k] = NO_LEXEME;
    }
    const offsets = new Int32Array(found.length + 1);
    for (let k = 0; k < found.length; k++) offsets[k + 1] = offsets[k]! + counts[k]!;
    const positions = new Int32Array(offsets[found.length]!);
    const fill = offsets.slice(0, found.length);
    for (let k = 0; k < words; k++) {
      const id = sequence[k]!;
      if (id !== NO_LEXEME) positions[fill[seen[2 * id + 1]!]!++] = Math.min(k + 1, MAX_POSITION);
    }
    return { ids: Int32Array.from(found), offsets, positions };
  }

  /** Fill `sequence` with the lexeme id of each word of `text`; the number of words. */
  private wordSequence(text: string): number {
    const n = text.length;
    // Room for every word of this text to be new.
    let slotCount = this.slots.length;
    while (slotCount < (this.words + n) * 4) slotCount *= 2;
    if (slotCount !== this.slots.length) this.rehash(slotCount);
    this.pool = grown(this.pool, this.poolUsed + n);
    this.wordTable = grown(this.wordTable, 3 * (this.words + n));
    this.seen = grown(this.seen, 2 * (this.lexemes.length + n));
    this.sequence = grown(this.sequence, n + 1);
    this.scans++;
    const units = codeUnits(text);
    const { slots, pool, wordTable, sequence } = this;
    const mask = (slots.length >> 1) - 1;
    let words = 0;
    let start = -1;
    let hash = 0;
    // One pass; i = n closes a last word.
    for (let i = 0; i <= n; i++) {
      const c = i < n ? units[i]! : 32;
      if (c < 128 ? ASCII_WORD[c] !== 0 : isWordAt(text, i, c)) {
        if (start < 0) {
          start = i;
          hash = FNV_OFFSET;
        }
        hash = Math.imul(hash ^ c, FNV_PRIME);
        continue;
      }
      if (start < 0) continue;
      // The word text[start, i): its lexeme id, from the words seen before or learnt now.
      const length = i - start;
      let id = NO_LEXEME;
      for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
        const entry = slots[2 * slot + 1]!;
        if (entry === 0) {
          id = this.learn(text, units, start, i);
          slots[2 * slot] = hash;
          slots[2 * slot + 1] = this.words;
          break;
        }
        if (slots[2 * slot] !== hash) continue;
        const w = 3 * (entry - 1);
        if (wordTable[w + 1] !== length) continue;
        const offset = wordTable[w]! - start;
        let k = start;
        while (k < i && pool[offset + k] === units[k]) k++;
        if (k === i) {
          id = wordTable[w + 2]!;
          break;
        }
      }
      sequence[words++] = id;
      start = -1;
    }
    return words;
  }

  /** Record the word text[start, end) and its lexeme; its lexeme id. */
  private learn(text: string, units: Uint16Array, start: number, end: number): number {
    const word = text.slice(start, end);
    const lexeme = wordLexeme(word);
    let id = NO_LEXEME;
    if (lexeme !== null) {
      id = this.lexemeIds.get(lexeme) ?? NO_LEXEME;
      if (id === NO_LEXEME) {
        id = this.lexemes.length;
        this.lexemes.push(lexeme);
        const bytes = Buffer.from(lexeme, 'utf8');
        this.utf8Pool = grown(this.utf8Pool, this.utf8Used + bytes.length);
        this.utf8Pool.set(bytes, this.utf8Used);
        this.utf8At = grown(this.utf8At, 2 * id + 2);
        this.utf8At[2 * id] = this.utf8Used;
        this.utf8At[2 * id + 1] = bytes.length;
        this.utf8Used += bytes.length;
        this.utf8Hashes = grown(this.utf8Hashes, id + 1);
        this.utf8Hashes[id] = fnv1a(bytes);
        this.lexemeIds.set(lexeme, id);
      }
    }
    const w = 3 * this.words++;
    this.wordTable[w] = this.poolUsed;
    this.wordTable[w + 1] = end - start;
    this.wordTable[w + 2] = id;
    this.pool.set(units.subarray(start, end), this.poolUsed);
    this.poolUsed += end - start;
    return id;
  }

  private rehash(size: number): void {
    const slots = new Int32Array(size);
    const mask = (size >> 1) - 1;
    for (let i = 0; i < this.slots.length; i += 2) {
      if (this.slots[i + 1] === 0) continue;
      let slot = this.slots[i]! & mask;
      while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      slots[2 * slot] = this.slots[i]!;
      slots[2 * slot + 1] = this.slots[i + 1]!;
    }
    this.slots = slots;
  }
}

/** The 32-bit FNV-1a hash of bytes. */
export function fnv1a(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
  return hash;
}

/**
 * The UTF-16 code units of a string as a typed array. Reading a typed array is one fast path;
 * `charCodeAt` on strings of several representations (flat, sliced out of a larger one, one or
 * two bytes per character) made the scan's hot loop fall back to generic property lookups.
 */
function codeUnits(text: string): Uint16Array {
  if (LITTLE_ENDIAN) {
    const bytes = Buffer.from(text, 'utf16le');
    if (bytes.byteOffset % 2 === 0) return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  }
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return units;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Whether the character beyond ASCII at i is a word character (a surrogate pair whole). */
function isWordAt(text: string, i: number, c: number): boolean {
  if (c >= 0xd800 && c <= 0xdbff) return UNICODE_WORD.test(text.slice(i, i + 2));
  // The low half of a pair: a word character when the pair is.
  if (c >= 0xdc00 && c <= 0xdfff) return i > 0 && UNICODE_WORD.test(text.slice(i - 1, i + 1));
  return UNICODE_WORD.test(text[i]!);
}

/** Only the lexemes `keep` accepts, with their positions. */
export function restrict(found: TextLexemes, keep: (id: number) => boolean): TextLexemes {
  const ids: number[] = [];
  const offsets = [0];
  const positions: number[] = [];
  found.ids.forEach((id, i) => {
    if (!keep(id)) return;
    ids.push(id);
    for (let p = found.offsets[i]!; p < found.offsets[i + 1]!; p++) positions.push(found.positions[p]!);
    offsets.push(positions.length);
  });
  return { ids: Int32Array.from(ids), offsets: Int32Array.from(offsets), positions: Int32Array.from(positions) };
}

const shared = new Lexicon();

/** The lexemes of `text` with their positions (the rule above). */
export function lexemesOf(text: string): Lexemes {
  shared.trim();
  const { ids, offsets, positions } = shared.scan(text);
  return new Map(
    Array.from(ids, (id, i) => [shared.lexeme(id), Array.from(positions.subarray(offsets[i]!, offsets[i + 1]!))]),
  );
}

/**
 * A search's lexemes in groups: a chunk matches a group when it holds every lexeme of it.
 * `all`: one group, every lexeme of the query. `any`: a group per whitespace-separated part of
 * the query (so `well-known` must match whole). Empty groups (stop words only) are left out.
 */
export function queryGroups(q: string, match: 'any' | 'all'): string[][] {
  const parts = match === 'all' ? [q] : q.split(/\s+/);
  const groups: string[][] = [];
  for (const part of parts) {
    const lexemes = [...lexemesOf(part).keys()];
    if (lexemes.length > 0) groups.push(lexemes);
  }
  return groups;
}
