// A generated estate corpus for the search figures: a million chunks of text whose words follow
// Zipf's law (rank r has probability ∝ 1/r), loaded in bulk into the tables the
// `estate_documents` projection writes (estate_documents, estate_chunks).
//
// Words: the first ranks are common English words (stop words among them, as in real text),
// then 50,000 generated words. A chunk is three "paragraphs" of about 75 words drawn from a pool
// of 100,000 generated ones, plus one word from a long tail of 200,000 (each of those appears
// in about 5 chunks: the rare terms of the figures). So that the bulk load costs a minute rather
// than lexing 1.5 GB, a chunk's lexemes are the union of its paragraphs' lexemes, computed once
// per paragraph (domain/orchestration/estate/lexemes.ts, as the projection does); no word spans
// two paragraphs, so the union is exactly the lexemes of the chunk's content. The bench checks
// on a sample that the search index agrees.
//
// The newest chunks' postings are left pending, as a live projection leaves them: in rows of a
// projection batch (ESTATE_BATCH_CHUNKS chunks) each, one fewer per bucket than starts a fold
// (FOLD_ROWS), so the searches read the most pending rows a live index holds.

import { Lexicon } from '../domain/orchestration/estate/lexemes.ts';
import { textArray } from '../infra/db/binary-params.ts';
import type { Pool } from '../infra/db/pool.ts';
import { chunkIdSql, ESTATE_BATCH_CHUNKS } from '../projections/orchestration/estate.ts';
import { appendPending, FOLD_ROWS } from '../projections/orchestration/estate-index.ts';
import { pendingRows } from '../projections/orchestration/estate-pending.ts';
import { CONTAINER_SIZE, encodeSorted } from '../projections/orchestration/estate-postings.ts';
import { mulberry32 } from '../tests/support/prng.ts';

/** Common English words, most frequent first (stop words included, as in real text). */
const COMMON =
  `the of and to a in is it you that he was for on are with as i his they be at one have this from or had by not
word but what some we can out other were all there when up use your how said an each she which do their time if will way about
many then them write would like so these her long make thing see him two has look more day could go come did number sound no
most people my over know water than call first who may down side been now find any new work part take get place made live where
after back little only round man year came show every good me give our under name very through just form sentence great think
say help low line differ turn cause much mean before move right boy old too same tell does set three want air well also play
small end put home read hand port large spell add even land here must big high such follow act why ask men change went light
kind off need house picture try us again animal point mother world near build self earth father head stand own page should
country found answer school grow study still learn plant cover food sun four between state keep eye never last let thought
city tree cross farm hard start might story saw far sea draw left late run while press close night real life few north`.split(
    /\s+/,
  );

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ru',
  'te',
  'zan',
  'vor',
  'pel',
  'dri',
  'sko',
  'tam',
  'bex',
  'ni',
  'qua',
  'fen',
  'gol',
  'hur',
  'jix',
  'mo',
  'nap',
  'orv',
  'pim',
  'rak',
  'sul',
  'tov',
  'ulm',
  'vek',
  'wan',
  'yor',
  'zid',
  'bra',
  'cli',
  'dov',
  'eth',
  'fro',
  'gim',
];

/** Deterministic pseudo-random numbers. */
export const random = mulberry32;

function generatedWord(n: number, prefix = ''): string {
  let word = prefix;
  let x = n;
  do {
    word += SYLLABLES[x % SYLLABLES.length];
    x = Math.floor(x / SYLLABLES.length);
  } while (x > 0);
  // A closing consonant keeps the stemmer from folding generated words into each other.
  return word + 'x';
}

export const VOCABULARY: string[] = [
  ...COMMON,
  ...Array.from({ length: 50_000 }, (_, i) => generatedWord(i + SYLLABLES.length)),
];

/** The long tail: each such word lands in about 5 chunks of a million. */
export const tailWord = (n: number) => generatedWord(n, 'zq');

/** Vose's alias method: O(1) draws from Zipf's law over the vocabulary's ranks. */
export function zipfSampler(size: number, rand: () => number): () => number {
  const p = Float64Array.from({ length: size }, (_, i) => 1 / (i + 1));
  const sum = p.reduce((a, b) => a + b, 0);
  const prob = new Float64Array(size);
  const alias = new Uint32Array(size);
  const scaled = p.map((x) => (x / sum) * size);
  const small: number[] = [],
    large: number[] = [];
  scaled.forEach((x, i) => (x < 1 ? small : large).push(i));
  while (small.length && large.length) {
    const s = small.pop()!,
      l = large.pop()!;
    prob[s] = scaled[s]!;
    alias[s] = l;
    scaled[l] = scaled[l]! + scaled[s]! - 1;
    (scaled[l]! < 1 ? small : large).push(l);
  }
  for (const i of [...small, ...large]) prob[i] = 1;
  return () => {
    const i = Math.floor(rand() * size);
    return rand() < prob[i]! ? i : alias[i]!;
  };
}

export const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves what which who whom this that these those am is are was were be been being
have has had having do does did doing a an the and but if or because as until while of at by for with about against between into
through during before after above below to from up down in out on off over under again further then once here there when where why
how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now`.split(
    /\s+/,
  ),
);

/** A paragraph of about `words` Zipfian words, ending with a word that is not a stop word. */
export function paragraph(draw: () => number, rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    out.push(VOCABULARY[draw()]!);
    if (rand() < 0.07) out[out.length - 1] += '.';
  }
  while (STOP_WORDS.has(out[out.length - 1]!.replace('.', ''))) out[out.length - 1] = VOCABULARY[draw()]!;
  return out.join(' ').replace(/\.$/, '') + '.';
}

export interface CorpusShape {
  chunks: number;
  chunksPerDocument: number;
  paragraphs: number;
  wordsPerParagraph: number;
  tailWords: number;
}

export const MILLION: CorpusShape = {
  chunks: 1_000_000,
  chunksPerDocument: 100,
  paragraphs: 100_000,
  wordsPerParagraph: 75,
  tailWords: 200_000,
};

const CATEGORIES = [
  'runbooks',
  'architecture',
  'services',
  'incidents',
  'onboarding',
  'security',
  'networking',
  'databases',
  'releases',
  'policies',
  'monitoring',
  'decisions',
];
const REPOS = ['platform-docs', 'infra', 'handbook', 'ops-wiki', 'service-catalog', 'adr'];

/** A 32-bit integer hash (a murmur3 finalizer): picks paragraphs and tail words for a chunk. */
function mix(n: number, seed: number): number {
  let h = (n ^ seed) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Load the corpus with `workers` connections in parallel; returns what it loaded. Chunks get
 * ordinals 0..n-1 in order, and the search index (postings, partitions, the ordinal counter) is
 * written with the projection's own container encoding, a container at a time.
 */
export async function loadCorpus(
  pool: Pool,
  shape: CorpusShape,
  workers: number,
  progress: (m: string) => void,
): Promise<{ chunks: number; documents: number; avgChars: number; pendingFrom: number }> {
  // Chunks from this ordinal on have their postings pending (at most half the corpus).
  const pendingFrom =
    shape.chunks - Math.min(Math.floor(shape.chunks / 2 / ESTATE_BATCH_CHUNKS), FOLD_ROWS - 1) * ESTATE_BATCH_CHUNKS;
  const rand = random(42);
  const draw = zipfSampler(VOCABULARY.length, rand);
  const lexicon = new Lexicon();
  const lexemeIds = new Map<string, number>();
  const lexemes: string[] = [];
  const idOf = (lexeme: string) => {
    let id = lexemeIds.get(lexeme);
    if (id === undefined) {
      lexemeIds.set(lexeme, (id = lexemes.length));
      lexemes.push(lexeme);
    }
    return id;
  };

  // Paragraphs and tail words, and (in memory) their lexemes.
  await pool.query('CREATE UNLOGGED TABLE bench_paragraphs (id int PRIMARY KEY, text text NOT NULL)');
  await pool.query('CREATE UNLOGGED TABLE bench_tail (id int PRIMARY KEY, text text NOT NULL)');
  const paragraphLexemes: Int32Array[] = new Array(shape.paragraphs);
  const tailLexemes: Int32Array[] = new Array(shape.tailWords);
  const batch = 2000;
  const inserts: Array<() => Promise<unknown>> = [];
  const addTexts = (table: string, count: number, text: (id: number) => string, into: Int32Array[]) => {
    for (let from = 0; from < count; from += batch) {
      const ids: number[] = [],
        texts: string[] = [];
      for (let id = from; id < Math.min(count, from + batch); id++) {
        ids.push(id);
        texts.push(text(id));
      }
      inserts.push(async () => {
        lexicon.trim();
        const found = texts.map((t) => lexicon.distinct(t));
        ids.forEach((id, i) => (into[id] = Int32Array.from(found[i]!, (l) => idOf(lexicon.lexeme(l)))));
        await pool.query(`INSERT INTO ${table} SELECT * FROM unnest($1::int[], $2::text[])`, [ids, textArray(texts)]);
      });
    }
  };
  addTexts(
    'bench_paragraphs',
    shape.paragraphs,
    () => paragraph(draw, rand, shape.wordsPerParagraph - 10 + Math.floor(rand() * 21)),
    paragraphLexemes,
  );
  addTexts('bench_tail', shape.tailWords, tailWord, tailLexemes);
  await inParallel(inserts, workers);
  progress(`${shape.paragraphs} paragraphs, ${shape.tailWords} tail words, ${lexemes.length} lexemes`);

  const documents = Math.ceil(shape.chunks / shape.chunksPerDocument);
  const categoryOfDocument = (d: number) => CATEGORIES[d % CATEGORIES.length]!;
  await pool.query(
    `INSERT INTO estate_documents (id, source_repo, path, category, is_vault, commit_sha, metadata, content_sha256, content_chars, chunks, run_id, ingested_at)
     SELECT md5('doc' || d)::uuid, ($2::text[])[1 + d % cardinality($2::text[])], c || '/doc-' || d || '.md', c, false, NULL, NULL,
            encode(sha256(('doc' || d)::bytea), 'hex'), 0, least($3::int, $5::int - d * $3::int), md5('run')::uuid, now()
     FROM generate_series(0, $1::int - 1) d, LATERAL (SELECT ($4::text[])[1 + d % cardinality($4::text[])] AS c) cat`,
    [documents, REPOS, shape.chunksPerDocument, CATEGORIES, shape.chunks],
  );

  // Chunks, a container (65,536 ordinals) at a time: rows in slices, then the container's postings.
  const pick = (n: number) => ({
    a: mix(n, 1) % shape.paragraphs,
    b: mix(n, 2) % shape.paragraphs,
    c: mix(n, 3) % shape.paragraphs,
    w: mix(n, 4) % shape.tailWords,
  });
  const slice = 16_384;
  for (let hi = 0; hi * CONTAINER_SIZE < shape.chunks; hi++) {
    const first = hi * CONTAINER_SIZE;
    const last = Math.min(shape.chunks, first + CONTAINER_SIZE);
    const loads: Array<() => Promise<unknown>> = [];
    for (let from = first; from < last; from += slice) {
      const ordinals: number[] = [],
        a: number[] = [],
        b: number[] = [],
        c: number[] = [],
        w: number[] = [];
      for (let n = from; n < Math.min(last, from + slice); n++) {
        const p = pick(n);
        ordinals.push(n);
        a.push(p.a);
        b.push(p.b);
        c.push(p.c);
        w.push(p.w);
      }
      loads.push(() =>
        pool.query(
          `INSERT INTO estate_chunks (chunk_id, document_id, chunk_index, ordinal, is_vault, category, content)
         SELECT ${chunkIdSql('d.id', 'd.content_sha256', 'x.n % $6::int')}, d.id, x.n % $6::int, x.n, false, d.category,
                p1.text || ' ' || p2.text || ' ' || p3.text || ' ' || t.text
         FROM unnest($1::int[], $2::int[], $3::int[], $4::int[], $5::int[]) AS x(n, a, b, c, w)
         JOIN estate_documents d ON d.id = md5('doc' || (x.n / $6::int))::uuid
         JOIN bench_paragraphs p1 ON p1.id = x.a JOIN bench_paragraphs p2 ON p2.id = x.b JOIN bench_paragraphs p3 ON p3.id = x.c
         JOIN bench_tail t ON t.id = x.w`,
          [ordinals, a, b, c, w, shape.chunksPerDocument],
        ),
      );
    }
    const loadStart = performance.now();
    await inParallel(loads, workers);
    const inserted = performance.now();

    // Postings of the container in two passes over the chunks' lexeme ids (count, then fill),
    // deduplicating with the last chunk each lexeme was seen in.
    const lexemeCount = lexemes.length;
    const counts = new Uint32Array(lexemeCount + 1);
    const lastSeen = new Int32Array(lexemeCount).fill(-1);
    const picks = Array.from({ length: Math.max(0, Math.min(last, pendingFrom) - first) }, (_, i) => pick(first + i));
    const lists = (p: ReturnType<typeof pick>) => [
      paragraphLexemes[p.a]!,
      paragraphLexemes[p.b]!,
      paragraphLexemes[p.c]!,
      tailLexemes[p.w]!,
    ];
    picks.forEach((p, i) => {
      for (const list of lists(p))
        for (const id of list)
          if (lastSeen[id] !== i) {
            lastSeen[id] = i;
            counts[id + 1]!++;
          }
    });
    for (let id = 0; id < lexemeCount; id++) counts[id + 1]! += counts[id]!;
    const fill = counts.slice(0, lexemeCount);
    const flat = new Uint16Array(counts[lexemeCount]!);
    lastSeen.fill(-1);
    picks.forEach((p, i) => {
      for (const list of lists(p))
        for (const id of list)
          if (lastSeen[id] !== i) {
            lastSeen[id] = i;
            flat[fill[id]!++] = i;
          }
    });
    const rows: Array<[string, Buffer]> = [];
    for (let id = 0; id < lexemeCount; id++) {
      if (counts[id + 1]! > counts[id]!)
        rows.push([lexemes[id]!, encodeSorted(flat.subarray(counts[id]!, counts[id + 1]!))!]);
    }
    const categories = new Map<string, number[]>();
    for (let n = first; n < last; n++) {
      const category = categoryOfDocument(Math.floor(n / shape.chunksPerDocument));
      const members = categories.get(category);
      if (members) members.push(n - first);
      else categories.set(category, [n - first]);
    }
    const writes: Array<() => Promise<unknown>> = [];
    for (let i = 0; i < rows.length; i += 10_000) {
      const part = rows.slice(i, i + 10_000);
      writes.push(() =>
        pool.query(
          'INSERT INTO estate_postings (lexeme, hi, data) SELECT l, $2::int, d FROM unnest($1::text[], $3::bytea[]) AS u(l, d)',
          [part.map((r) => r[0]), hi, part.map((r) => r[1])],
        ),
      );
    }
    const all = Array.from({ length: last - first }, (_, i) => i);
    const partitions: Array<[string, number[]]> = [
      ['estate', all],
      ...[...categories].map(([c, members]): [string, number[]] => [`c:${c}`, members]),
    ];
    writes.push(() =>
      pool.query(
        'INSERT INTO estate_partitions (partition, hi, data) SELECT p, $2::int, d FROM unnest($1::text[], $3::bytea[]) AS u(p, d)',
        [partitions.map((p) => p[0]), hi, partitions.map((p) => encodeSorted(p[1])!)],
      ),
    );
    const computed = performance.now();
    await inParallel(writes, workers);
    progress(
      `${last} chunks (rows ${Math.round(inserted - loadStart)} ms, index ${Math.round(computed - inserted)} + ${Math.round(performance.now() - computed)} ms)`,
    );
  }
  // The newest chunks' postings, pending: lexed from their content as the projection does.
  for (let from = pendingFrom; from < shape.chunks; from += ESTATE_BATCH_CHUNKS) {
    const { rows } = await pool.query<{ ordinal: number; content: string }>(
      'SELECT ordinal, content FROM estate_chunks WHERE ordinal >= $1 AND ordinal < $2 ORDER BY ordinal',
      [from, from + ESTATE_BATCH_CHUNKS],
    );
    lexicon.trim();
    await appendPending(
      pool,
      pendingRows(
        lexicon,
        rows.map((r) => lexicon.distinct(r.content)),
        rows.map((r) => r.ordinal),
      ),
    );
  }
  progress(
    `postings of chunks ${pendingFrom}-${shape.chunks - 1} pending, ${(shape.chunks - pendingFrom) / ESTATE_BATCH_CHUNKS} rows per bucket`,
  );
  await pool.query(`INSERT INTO estate_counters (name, value) VALUES ('chunk_ordinal', $1)`, [shape.chunks]);
  const stats = (
    await pool.query<{ avg: string }>('SELECT avg(length(content)) AS avg FROM estate_chunks TABLESAMPLE SYSTEM (1)')
  ).rows[0]!;
  return { chunks: shape.chunks, documents, avgChars: Math.round(Number(stats.avg)), pendingFrom };
}

async function inParallel(tasks: Array<() => Promise<unknown>>, workers: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}
