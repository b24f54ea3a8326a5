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
// 1,500-character chunk, more than the rest of an ingest together; this costs a few µs.

import stem from 'wink-porter2-stemmer';

/** PostgreSQL's `english.stop` (tsearch_data), as its snowball dictionary applies it. */
const STOP_WORDS = new Set(`i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her
hers herself it its itself they them their theirs themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over under again further then once here
there when where why how all any both each few more most other some such no nor not only own same so than too very s t can
will just don should now`.split(/\s+/));

export const MAX_POSITION = 16_383;
export const MAX_POSITIONS_PER_LEXEME = 256;
export const MAX_LEXEME_BYTES = 2047;

/** The lexemes of a text, each with its ascending positions. */
export type Lexemes = Map<string, number[]>;

// Word characters: a table for ASCII, the Unicode classes beyond.
const ASCII_WORD = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_WORD[c] = 2; // digit
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

const grown = <T extends Int32Array | Uint16Array>(array: T, size: number): T => {
  if (array.length >= size) return array;
  const next = new (array.constructor as new (n: number) => T)(Math.max(size, array.length * 2));
  next.set(array);
  return next;
};

/**
 * Words seen before, each with its lexeme, and the lexemes by id: text repeats its words (Zipf's
 * law), and stemming a word costs a hundred times what looking it up does. A word is found by a
 * hash (FNV-1a) of its characters computed while scanning, compared with the text in place, so a
 * known word is never copied out of the text. Ids stay valid until `trim` starts the Lexicon
 * over (only when it is large); what it holds never changes a text's lexemes.
 */
export class Lexicon {
  private slots = new Int32Array(1 << 16);
  // Word w: its characters pool[start[w], start[w] + length[w]), its hash, its lexeme id.
  private pool = new Uint16Array(1 << 18);
  private poolUsed = 0;
  private start = new Int32Array(1 << 15);
  private length = new Int32Array(1 << 15);
  private hash = new Int32Array(1 << 15);
  private wordLexeme = new Int32Array(1 << 15);
  private words = 0;
  private lexemeIds = new Map<string, number>();
  private lexemes: string[] = [];
  private bytes: Buffer[] = [];
  // Scratch of one scan: per lexeme id, the scan that last saw it and its index in that scan;
  // the (index, position) pairs in text order.
  private seenIn = new Int32Array(1 << 15);
  private indexIn = new Int32Array(1 << 15);
  private scans = 0;
  private pairs = new Int32Array(4096);

  /** Lexeme ids: 0 .. size - 1. */
  get size(): number {
    return this.lexemes.length;
  }

  lexeme(id: number): string {
    return this.lexemes[id]!;
  }

  /** A lexeme's UTF-8 bytes. */
  utf8(id: number): Buffer {
    return this.bytes[id]!;
  }

  /** Start over when large: every id given before is void. */
  trim(): void {
    if (this.words < WORD_LIMIT) return;
    this.slots = new Int32Array(1 << 16);
    this.words = 0;
    this.poolUsed = 0;
    this.lexemeIds.clear();
    this.lexemes = [];
    this.bytes = [];
    this.seenIn.fill(0);
    this.scans = 0;
  }

  scan(text: string): TextLexemes {
    const n = text.length;
    // Room for every word of this text to be new.
    let slotCount = this.slots.length;
    while (slotCount < (this.words + n) * 2) slotCount *= 2;
    if (slotCount !== this.slots.length) this.rehash(slotCount);
    this.pool = grown(this.pool, this.poolUsed + n);
    const capacity = this.words + n;
    this.start = grown(this.start, capacity);
    this.length = grown(this.length, capacity);
    this.hash = grown(this.hash, capacity);
    this.wordLexeme = grown(this.wordLexeme, capacity);
    this.seenIn = grown(this.seenIn, capacity);
    this.indexIn = grown(this.indexIn, capacity);
    this.pairs = grown(this.pairs, 2 * n + 2);
    const scan = ++this.scans;
    const { slots, pool, start: wordStart, length: wordLength, hash: wordHash, wordLexeme: lexemeOfWord, seenIn, indexIn, pairs } = this;
    const mask = slots.length - 1;
    const found: number[] = [];
    const counts: number[] = [];
    let pairCount = 0;
    let position = 0;
    let start = -1;
    let hash = 0;
    // One pass; i = n closes a last word.
    for (let i = 0; i <= n; i++) {
      const c = i < n ? text.charCodeAt(i) : 32;
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
        const entry = slots[slot]!;
        if (entry === 0) {
          id = this.learn(text, start, i, hash);
          slots[slot] = this.words;
          break;
        }
        const w = entry - 1;
        if (wordHash[w] !== hash || wordLength[w] !== length) continue;
        const offset = wordStart[w]! - start;
        let k = start;
        while (k < i && pool[offset + k] === text.charCodeAt(k)) k++;
        if (k === i) {
          id = lexemeOfWord[w]!;
          break;
        }
      }
      start = -1;
      if (position < MAX_POSITION) position++;
      if (id === NO_LEXEME) continue;
      let index: number;
      if (seenIn[id] === scan) index = indexIn[id]!;
      else {
        seenIn[id] = scan;
        indexIn[id] = index = found.length;
        found.push(id);
        counts.push(0);
      }
      if (counts[index]! >= MAX_POSITIONS_PER_LEXEME) continue;
      counts[index]!++;
      pairs[pairCount * 2] = index;
      pairs[pairCount * 2 + 1] = position;
      pairCount++;
    }
    // Group the positions by lexeme (each group stays in text order, so ascending).
    const offsets = new Int32Array(found.length + 1);
    for (let k = 0; k < found.length; k++) offsets[k + 1] = offsets[k]! + counts[k]!;
    const positions = new Int32Array(pairCount);
    const fill = offsets.slice(0, found.length);
    for (let p = 0; p < pairCount; p++) positions[fill[pairs[p * 2]!]!++] = pairs[p * 2 + 1]!;
    return { ids: Int32Array.from(found), offsets, positions };
  }

  /** Record the word text[start, end) and its lexeme; its lexeme id. */
  private learn(text: string, start: number, end: number, hash: number): number {
    const word = text.slice(start, end);
    const lexeme = wordLexeme(word);
    let id = NO_LEXEME;
    if (lexeme !== null) {
      id = this.lexemeIds.get(lexeme) ?? NO_LEXEME;
      if (id === NO_LEXEME) {
        id = this.lexemes.length;
        this.lexemes.push(lexeme);
        this.bytes.push(Buffer.from(lexeme, 'utf8'));
        this.lexemeIds.set(lexeme, id);
      }
    }
    const w = this.words++;
    this.start[w] = this.poolUsed;
    this.length[w] = end - start;
    this.hash[w] = hash;
    this.wordLexeme[w] = id;
    for (let k = start; k < end; k++) this.pool[this.poolUsed++] = text.charCodeAt(k);
    return id;
  }

  private rehash(size: number): void {
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let w = 0; w < this.words; w++) {
      let slot = this.hash[w]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = w + 1;
    }
    this.slots = slots;
  }
}

/** Whether the character beyond ASCII at i is a word character (a surrogate pair whole). */
function isWordAt(text: string, i: number, c: number): boolean {
  if (c >= 0xd800 && c <= 0xdbff) return UNICODE_WORD.test(text.slice(i, i + 2));
  // The low half of a pair: a word character when the pair is.
  if (c >= 0xdc00 && c <= 0xdfff) return i > 0 && UNICODE_WORD.test(text.slice(i - 1, i + 1));
  return UNICODE_WORD.test(text[i]!);
}

const shared = new Lexicon();

/** The lexemes of `text` with their positions (the rule above). */
export function lexemesOf(text: string): Lexemes {
  shared.trim();
  const { ids, offsets, positions } = shared.scan(text);
  return new Map(Array.from(ids, (id, i) => [shared.lexeme(id), Array.from(positions.subarray(offsets[i]!, offsets[i + 1]!))]));
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
