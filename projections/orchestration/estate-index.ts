// The estate search index (see estate-postings.ts for the containers): its writes within one
// projection batch (IndexWriter and appendPending, used by the `estate_documents` projection
// in estate.ts; the pending rows' format is estate-pending.ts), the folding of pending postings
// beside it, and the search.

import { Lexicon, queryGroups, restrict, type TextLexemes } from '../../domain/orchestration/estate/lexemes.ts';
import { advisoryKey } from '../../infra/db/advisory-lock.ts';
import { inTransaction, type Pool, type PoolClient } from '../../infra/db/pool.ts';
import type { ProcessorEngine } from '../../infra/processors/engine.ts';
import type { Logger } from '../../infra/logging.ts';
import { byteaArray, textArray } from '../../infra/db/binary-params.ts';
import { bucketOf, forEachPending, ordinalAt, pendingRow } from './estate-pending.ts';
import { tsvectorArray } from './estate-tsvector.ts';
import {
  and,
  andNot,
  changed,
  CONTAINER_SIZE,
  hiOf,
  highest,
  loOf,
  or,
  size,
  toBits,
  type PostingSet,
} from './estate-postings.ts';

const ORDINAL_COUNTER = 'chunk_ordinal';

/**
 * Pending rows a bucket gathers before a fold takes it: a search reads up to this many rows per
 * word, and a fold rewrites every container its rows touch. A projection batch adds a row to
 * nearly every bucket, so all of them fill together, about every FOLD_ROWS batches; at 32 the
 * folds cost about half the CPU they did at 16 (the long-tail containers are rewritten half as
 * often), and the bench measures its searches with 31 rows pending in every bucket.
 */
export const FOLD_ROWS = 32;
/**
 * Buckets folded per transaction: keeps the writes of each one short (they hold back the log's
 * readers; 8 measured a little faster than 16).
 */
const FOLD_BUCKETS = 8;

/** Append pending rows (estate-pending.ts) to the search index, numbered after the last. */
export function appendPending(db: Pool | PoolClient, pending: { buckets: number[]; rows: Buffer[] }) {
  return db.query(
    `INSERT INTO estate_postings_pending (bucket, seq, entries)
     SELECT b, (SELECT coalesce(max(seq), 0) FROM estate_postings_pending) + 1, e FROM unnest($1::int[], $2::bytea[]) AS p(b, e)`,
    [pending.buckets, byteaArray(pending.rows)],
  );
}

/** The partitions a live chunk belongs to (see estate_partitions). */
const partitionsOf = (isVault: boolean, category: string) => (isVault ? ['vault'] : ['estate', `c:${category}`]);

type ContainerChange = { key: string; hi: number; add: number[]; remove: number[] };

/** Lexeme postings as changes to their containers (additions only). */
function postingChanges(postings: Map<string, number[]>): ContainerChange[] {
  const changes: ContainerChange[] = [];
  for (const [lexeme, ordinals] of postings) {
    // Most lexemes' new postings fall in one container.
    let low = Infinity,
      high = -1;
    for (const o of ordinals) {
      const hi = hiOf(o);
      if (hi < low) low = hi;
      if (hi > high) high = hi;
    }
    if (low === high) {
      changes.push({ key: lexeme, hi: high, add: ordinals.map(loOf), remove: [] });
      continue;
    }
    const byHi = new Map<number, number[]>();
    for (const o of ordinals) {
      const hi = hiOf(o);
      const list = byHi.get(hi);
      if (list) list.push(loOf(o));
      else byHi.set(hi, [loOf(o)]);
    }
    for (const [hi, add] of byHi) changes.push({ key: lexeme, hi, add, remove: [] });
  }
  return changes;
}

/**
 * The search index's writes within one projection batch besides the postings (which the chunk
 * insert appends, estate-pending.ts): new chunk ordinals, partition membership (added and
 * removed), held in memory and written at `flush`.
 *
 * Lexeme postings are never written into their containers by the projection: a batch touches
 * tens of thousands of lexemes, and rewriting each one's container (8 kB for a common word)
 * every batch was most of an ingest's cost. They go to pending rows, and `SearchIndexFolder`
 * folds full buckets into the containers in its own short transactions, beside the projection
 * (on another core), so a container is rewritten once per several batches and a search reads a
 * bounded number of pending rows per word. The sets are the same either way;
 * `compactSearchIndex` folds everything (tests, maintenance).
 */
export class IndexWriter {
  private next = 0;
  private live = new Map<string, Map<number, boolean>>();

  constructor(private readonly tx: PoolClient) {}

  async start(): Promise<void> {
    // The counter row is locked for the transaction: the one writer of the search index at a
    // time (the projection, or a compaction).
    this.next = await lockIndex(this.tx);
  }

  take(count: number): number {
    const first = this.next;
    this.next += count;
    return first;
  }

  setLive(ordinal: number, isVault: boolean, category: string, live: boolean): void {
    for (const partition of partitionsOf(isVault, category)) {
      let changes = this.live.get(partition);
      if (!changes) this.live.set(partition, (changes = new Map()));
      changes.set(ordinal, live);
    }
  }

  async flush(): Promise<void> {
    // Partitions: additions and removals, the last change of an ordinal winning.
    const partitionKeys: ContainerChange[] = [];
    for (const [partition, changes] of this.live) {
      const byHi = new Map<number, { add: number[]; remove: number[] }>();
      for (const [o, live] of changes) {
        const hi = hiOf(o);
        let entry = byHi.get(hi);
        if (!entry) byHi.set(hi, (entry = { add: [], remove: [] }));
        (live ? entry.add : entry.remove).push(loOf(o));
      }
      for (const [hi, { add, remove }] of byHi) partitionKeys.push({ key: partition, hi, add, remove });
    }
    await write(this.tx, await rewritten(this.tx, 'estate_partitions', 'partition', partitionKeys));
    await this.tx.query('UPDATE estate_counters SET value = $2 WHERE name = $1', [ORDINAL_COUNTER, this.next]);
    this.live = new Map();
  }
}

/** Lock the search index for this transaction; the next chunk ordinal. */
async function lockIndex(tx: PoolClient): Promise<number> {
  await tx.query('INSERT INTO estate_counters (name, value) VALUES ($1, 0) ON CONFLICT (name) DO NOTHING', [
    ORDINAL_COUNTER,
  ]);
  const { rows } = await tx.query<{ value: string }>('SELECT value FROM estate_counters WHERE name = $1 FOR UPDATE', [
    ORDINAL_COUNTER,
  ]);
  return Number(rows[0]!.value);
}

/**
 * A fold leaves a lexeme's postings pending while it has fewer than this many (the long tail:
 * most lexemes of a fold, and each would cost a container write) ...
 */
const RARE_POSTINGS = 4;
/** ... in one row per bucket of at most this many bytes (a search reads it with the bucket). */
const RARE_ROW_BYTES = 16_384;

/**
 * Plan the fold of these buckets' pending rows into the containers (`applyFold` writes it).
 * `keepRare`: the postings of rare lexemes go back as one pending row per bucket instead (see
 * RARE_POSTINGS), unless that row would outgrow RARE_ROW_BYTES; then the bucket is folded
 * whole. The row takes the smallest number of the bucket's rows the fold deletes, which no other
 * writer can take: the projection numbers its rows after the largest it sees.
 *
 * Everything is read and computed before the first write, and the writes go last, together: a
 * transaction holds back every reader of the log from its first write to its commit
 * (infra/eventstore/postgres.ts reads the events below the oldest open writer), and folds run
 * back to back during an ingest, so a fold that wrote first held the log back most of the time
 * (the ingest waited on it). The caller holds the fold lock: nothing else changes the containers
 * or deletes pending rows meanwhile, and the projection only appends rows, which a fold that did
 * not read them leaves alone.
 */
export async function planFold(tx: PoolClient, buckets: number[] | 'all', keepRare: boolean): Promise<FoldPlan> {
  const { rows } = await tx.query<{ bucket: number; seq: string; entries: Buffer }>(
    buckets === 'all'
      ? 'SELECT bucket, seq, entries FROM estate_postings_pending'
      : 'SELECT bucket, seq, entries FROM estate_postings_pending WHERE bucket = ANY($1::int[])',
    buckets === 'all' ? [] : [buckets],
  );
  const byBucket = new Map<number, { seq: bigint; postings: Map<string, number[]> }>();
  for (const { bucket, seq, entries } of rows) {
    let b = byBucket.get(bucket);
    if (!b) byBucket.set(bucket, (b = { seq: BigInt(seq), postings: new Map() }));
    if (BigInt(seq) < b.seq) b.seq = BigInt(seq);
    forEachPending(entries, (lexeme, at, count) => {
      let list = b.postings.get(lexeme);
      if (!list) b.postings.set(lexeme, (list = []));
      for (let end = at + 4 * count; at < end; at += 4) list.push(ordinalAt(entries, at));
    });
  }
  const folded = new Map<string, number[]>();
  const kept: { bucket: number; seq: bigint; row: Buffer }[] = [];
  for (const [bucket, { seq, postings }] of byBucket) {
    const rare = keepRare ? [...postings].filter(([, ordinals]) => ordinals.length < RARE_POSTINGS) : [];
    const row = rare.length > 0 ? pendingRow(rare) : null;
    if (row && row.length <= RARE_ROW_BYTES) {
      kept.push({ bucket, seq, row });
      for (const [lexeme] of rare) postings.delete(lexeme);
    }
    for (const [lexeme, ordinals] of postings) folded.set(lexeme, ordinals);
  }
  const containers = await rewritten(tx, 'estate_postings', 'lexeme', postingChanges(folded));
  return { read: rows.map(({ bucket, seq }) => ({ bucket, seq })), containers, kept };
}

/** A fold's writes, computed by `planFold`. */
export interface FoldPlan {
  /** The pending rows read (and deleted by the fold). */
  read: { bucket: number; seq: string }[];
  containers: Rewritten;
  /** Rare postings going back, a row per bucket. */
  kept: { bucket: number; seq: bigint; row: Buffer }[];
}

/** Write a fold: the last statements of its transaction. */
export async function applyFold(tx: PoolClient, { read, containers, kept }: FoldPlan): Promise<void> {
  await tx.query(
    'DELETE FROM estate_postings_pending p USING unnest($1::int[], $2::bigint[]) AS d(b, s) WHERE p.bucket = d.b AND p.seq = d.s',
    [read.map((r) => r.bucket), read.map((r) => r.seq)],
  );
  await write(tx, containers);
  if (kept.length > 0) {
    await tx.query(
      'INSERT INTO estate_postings_pending (bucket, seq, entries) SELECT * FROM unnest($1::int[], $2::bigint[], $3::bytea[])',
      [kept.map((k) => k.bucket), kept.map((k) => k.seq.toString()), byteaArray(kept.map((k) => k.row))],
    );
  }
}

/**
 * Fold the fullest buckets (at least `minRows` pending rows each, at most FOLD_BUCKETS of them)
 * into the containers, in one short transaction; the number of buckets folded. Safe beside the
 * projection: it only adds pending rows, which a fold that did not see them leaves pending, and
 * a search's one statement sees a bucket's postings either pending or folded, never neither.
 * One folder at a time (a transaction lock; a second one returns 0). `among`: only these buckets.
 */
export async function foldPending(pool: Pool, minRows = FOLD_ROWS, among: number[] | null = null): Promise<number> {
  return inTransaction(pool, async (tx) => {
    const lock = await tx.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS got', [FOLD_LOCK]);
    if (!lock.rows[0]!.got) return 0;
    const { rows } = await tx.query<{ bucket: number }>(
      `SELECT bucket FROM estate_postings_pending WHERE $3::int[] IS NULL OR bucket = ANY($3::int[])
       GROUP BY bucket HAVING count(*) >= $1 ORDER BY count(*) DESC, bucket LIMIT $2`,
      [minRows, FOLD_BUCKETS, among],
    );
    if (rows.length > 0)
      await applyFold(
        tx,
        await planFold(
          tx,
          rows.map((r) => r.bucket),
          true,
        ),
      );
    return rows.length;
  });
}

const FOLD_LOCK = advisoryKey('estate:fold-postings');

/**
 * Folds pending postings after each batch of the documents projection this process commits,
 * until no bucket is full: the projection's transactions only append postings, and the
 * containers are rewritten here, concurrently, with each rewrite covering several batches.
 */
export class SearchIndexFolder {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly pool: Pool,
    engine: Pick<ProcessorEngine, 'committed'>,
    private readonly log: Logger,
    projection: string,
  ) {
    engine.committed.on('batch', (batch) => {
      if (batch.projection === projection) this.poke();
    });
  }

  private poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          while (!this.stopped && (await foldPending(this.pool)) > 0);
        } catch (error) {
          this.log.warn('estate_fold_failed', { error: (error as Error).message });
        }
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.running = null;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}

/** Fold every pending posting into the containers (the stored sets do not change). */
export async function compactSearchIndex(pool: Pool): Promise<void> {
  const tx = await pool.connect();
  try {
    await tx.query('BEGIN');
    await lockIndex(tx);
    await tx.query('SELECT pg_advisory_xact_lock($1::bigint)', [FOLD_LOCK]);
    await applyFold(tx, await planFold(tx, 'all', false));
    await tx.query('COMMIT');
  } catch (error) {
    await tx.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    tx.release();
  }
}

/** Containers to write back (`data`) or drop (null: emptied), of one table. */
interface Rewritten {
  table: string;
  column: string;
  keys: string[];
  his: number[];
  data: (Buffer | null)[];
}

/** Read the touched containers and apply the changes (written by `write`). */
async function rewritten(
  tx: PoolClient,
  table: string,
  column: string,
  changes: ContainerChange[],
): Promise<Rewritten> {
  const out: Rewritten = { table, column, keys: [], his: [], data: [] };
  if (changes.length === 0) return out;
  // In index order: neighbouring lookups share pages.
  changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.hi - b.hi));
  // One index lookup per key: as a plain join, the planner hashes the whole table instead.
  const { rows } = await tx.query<{ key: string; hi: number; data: Buffer }>(
    `SELECT k.key, k.hi, t.data FROM unnest($1::text[], $2::int[]) AS k(key, hi)
     CROSS JOIN LATERAL (SELECT data FROM ${table} WHERE ${column} = k.key AND hi = k.hi LIMIT 1) t`,
    [textArray(changes.map((c) => c.key)), changes.map((c) => c.hi)],
  );
  const current = new Map(rows.map((r) => [`${r.hi}\u0000${r.key}`, r.data]));
  for (const c of changes) {
    out.keys.push(c.key);
    out.his.push(c.hi);
    out.data.push(changed(current.get(`${c.hi}\u0000${c.key}`) ?? null, c.add, c.remove));
  }
  return out;
}

/** Write back the containers `rewritten` computed, dropping the emptied ones. */
async function write(tx: PoolClient, { table, column, keys, his, data }: Rewritten): Promise<void> {
  const up = data.flatMap((d, i) => (d ? [i] : []));
  const drop = data.flatMap((d, i) => (d ? [] : [i]));
  if (up.length) {
    await tx.query(
      `INSERT INTO ${table} (${column}, hi, data) SELECT * FROM unnest($1::text[], $2::int[], $3::bytea[])
       ON CONFLICT (${column}, hi) DO UPDATE SET data = excluded.data`,
      [textArray(up.map((i) => keys[i]!)), up.map((i) => his[i]!), byteaArray(up.map((i) => data[i]!))],
    );
  }
  if (drop.length) {
    await tx.query(
      `DELETE FROM ${table} t USING unnest($1::text[], $2::int[]) AS k(key, hi) WHERE t.${column} = k.key AND t.hi = k.hi`,
      [drop.map((i) => keys[i]!), drop.map((i) => his[i]!)],
    );
  }
}

// --- search ----------------------------------------------------------------------------------

export type MatchMode = 'any' | 'all';

/**
 * The same query as a tsquery, for ranking and snippets: OR of the groups, AND within one, each
 * lexeme quoted (so it is taken as it is, never parsed or stemmed again).
 */
export function tsquery(groups: string[][]): string {
  const quote = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  return groups.map((group) => `(${group.map(quote).join(' & ')})`).join(' | ');
}

/**
 * How many matches are ranked: ranking lexes each candidate's content (about 100 µs each), which
 * over every match of a common term in a million chunks would take minutes. Candidates are the
 * newest matches holding every word of the query, then (for `any`) the newest holding some:
 * eight per hit asked for, at least 48 and at most 200. The total is counted exactly apart.
 */
export const candidatesFor = (limit: number) => Math.min(200, Math.max(48, 8 * limit));

export interface SearchOptions {
  q: string;
  match: MatchMode;
  /** true: the vault partition; false: estate documents, of `category` when given. */
  vault: boolean;
  category: string | null;
  limit: number;
}

export interface SearchHit {
  document_id: string;
  chunk_id: string;
  source_repo: string;
  path: string;
  category: string;
  chunk_index: number;
  score: number;
  content: string;
  snippet: string;
}

const HEADLINE =
  'StartSel=**, StopSel=**, MaxWords=24, MinWords=10, ShortWord=3, MaxFragments=2, FragmentDelimiter=" … "';

/**
 * The containers of these lexemes and of the partition, and the pending postings of the
 * lexemes' buckets, in one statement (one round trip, one snapshot).
 */
async function postingsOf(pool: Pool, groups: string[][], partition: string) {
  const lexemes = [...new Set(groups.flat())];
  const buckets = [...new Set(lexemes.map((l) => bucketOf(Buffer.from(l, 'utf8'))))];
  const { rows } = await pool.query<{
    kind: 'l' | 'p' | 'q';
    key: string | null;
    hi: number | null;
    data: Buffer | null;
    entries: Buffer | null;
  }>(
    `SELECT 'l' AS kind, lexeme AS key, hi, data, NULL::bytea AS entries FROM estate_postings WHERE lexeme = ANY($1::text[])
     UNION ALL
     SELECT 'q', NULL, NULL, NULL, entries FROM estate_postings_pending WHERE bucket = ANY($2::int[])
     UNION ALL
     SELECT 'p', partition, hi, data, NULL FROM estate_partitions WHERE partition = $3`,
    [lexemes, buckets, partition],
  );
  const sets = new Map<string, PostingSet>(lexemes.map((l) => [l, new Map()]));
  const live: PostingSet = new Map();
  for (const row of rows) {
    if (row.kind === 'l') sets.get(row.key!)!.set(row.hi!, toBits(row.data));
    else if (row.kind === 'p') live.set(row.hi!, toBits(row.data));
  }
  // Pending postings, added to the containers' sets.
  for (const row of rows) {
    if (row.kind !== 'q') continue;
    const entries = row.entries!;
    forEachPending(entries, (lexeme, at, count) => {
      const set = sets.get(lexeme);
      if (!set) return;
      for (let end = at + 4 * count; at < end; at += 4) {
        const ordinal = ordinalAt(entries, at);
        let bits = set.get(hiOf(ordinal));
        if (!bits) set.set(hiOf(ordinal), (bits = new Uint32Array(CONTAINER_SIZE / 32)));
        const lo = loOf(ordinal);
        bits[lo >>> 5]! |= 1 << (lo & 31);
      }
    });
  }
  return { sets, live };
}

/** Searches' lexicon (ranking lexes the candidates). */
const rankLexicon = new Lexicon();
/**
 * Candidates lexed lately, by ordinal, the most recently used last: the newest matches of common
 * words are candidates of search after search. An ordinal always names the same chunk, so an
 * entry never goes stale; they are ids of `rankLexicon`, so its starting over empties this.
 */
const lexedCache = new Map<number, TextLexemes>();
const LEXED_CACHE_SIZE = 4096;

/**
 * The lexemes of these chunks, from the cache or their content. The caller uses them before its
 * next await: ids are valid until `rankLexicon` starts over, which only happens here.
 */
async function lexedCandidates(pool: Pool, ordinals: number[]): Promise<Map<number, TextLexemes>> {
  const out = new Map<number, TextLexemes>();
  for (;;) {
    const missing = ordinals.filter((o) => !lexedCache.has(o));
    const { rows } =
      missing.length === 0
        ? { rows: [] }
        : await pool.query<{ ordinal: number; content: string }>(
            'SELECT ordinal, content FROM estate_chunks WHERE ordinal = ANY($1::int[])',
            [missing],
          );
    // From here to the return, no await: the cache and the lexicon's ids hold still.
    if (rankLexicon.trim()) lexedCache.clear();
    for (const row of rows) lexedCache.set(row.ordinal, rankLexicon.scan(row.content));
    let complete = true;
    for (const o of ordinals) {
      const found = lexedCache.get(o);
      if (!found) {
        // Deleted meanwhile (no row); or dropped by a concurrent search (evicted, or the lexicon
        // started over) while this one waited: look again.
        if (missing.includes(o)) out.set(o, EMPTY);
        else complete = false;
        continue;
      }
      lexedCache.delete(o);
      lexedCache.set(o, found);
      out.set(o, found);
    }
    while (lexedCache.size > LEXED_CACHE_SIZE) lexedCache.delete(lexedCache.keys().next().value!);
    if (complete) return out;
    out.clear();
  }
}

const EMPTY: TextLexemes = { ids: new Int32Array(0), offsets: new Int32Array(1), positions: new Int32Array(0) };

export async function search(pool: Pool, o: SearchOptions): Promise<{ total: number; hits: SearchHit[] }> {
  const partition = o.vault ? 'vault' : o.category !== null ? `c:${o.category}` : 'estate';
  const groups = queryGroups(o.q, o.match);
  if (groups.length === 0) return { total: 0, hits: [] };
  const { sets, live } = await postingsOf(pool, groups, partition);
  // OR of the groups, AND within one; `every`: the chunks holding every group.
  const groupSets = groups.map((group) => group.map((l) => sets.get(l)!).reduce(and));
  const every = and(groupSets.reduce(and), live);
  const found = o.match === 'all' ? every : and(groupSets.reduce(or), live);
  const total = size(found);
  if (total === 0) return { total, hits: [] };
  const wanted = candidatesFor(o.limit);
  const candidates = highest(every, wanted);
  if (candidates.length < wanted && o.match === 'any')
    candidates.push(...highest(andNot(found, every), wanted - candidates.length));
  // Rank the candidates with ts_rank over their tsvectors, computed here from their content by
  // the rule the index was built with (chunks store no tsvector: see estate.ts).
  const lexed = await lexedCandidates(pool, candidates);
  // ts_rank (normalization 0) reads only the query's lexemes: the tsvectors hold just those.
  const queried = new Set(groups.flat());
  const keep = (id: number) => queried.has(rankLexicon.lexeme(id));
  const vectors = tsvectorArray(
    rankLexicon,
    candidates.map((o) => restrict(lexed.get(o)!, keep)),
  );
  const { rows } = await pool.query<SearchHit>(
    `WITH q AS MATERIALIZED (SELECT $1::tsquery AS query),
     ranked AS (
       SELECT u.o AS ordinal, ts_rank(u.v, (SELECT query FROM q)) AS score
       FROM unnest($2::int[], $3::tsvector[]) AS u(o, v)
       ORDER BY score DESC, u.o DESC
       LIMIT $4)
     SELECT c.document_id, c.chunk_id, d.source_repo, d.path, d.category, c.chunk_index, r.score, c.content,
            ts_headline('english', c.content, (SELECT query FROM q), '${HEADLINE}') AS snippet
     FROM ranked r
     JOIN estate_chunks c ON c.ordinal = r.ordinal
     JOIN estate_documents d ON d.id = c.document_id
     ORDER BY r.score DESC, r.ordinal DESC`,
    [tsquery(groups), candidates, vectors, o.limit],
  );
  return { total, hits: rows.map((h) => ({ ...h, score: Number(h.score) })) };
}
