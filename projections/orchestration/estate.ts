// Estate knowledge read models: `estate_documents` (documents and their chunks, with the
// full-text index) and `estate_runs` (one row per ingest or vault run). Rows and queries live
// here with the writes.
//
// Chunk content is not in the events: an ingest event names its content blob (SHA-256) and the
// chunk offsets, and this projection reads the blob back and cuts the chunks, so a rebuild from
// the log and the blobs writes the same rows.

import type { EstateDocumentEvent, IngestRunEvent, RunFailure, RunKind, RunStatus } from '../../domain/orchestration/estate/decider.ts';
import { chunkTexts } from '../../domain/orchestration/estate/chunking.ts';
import { readBlobs } from '../../infra/blobs.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/projections/engine.ts';
import { and, andNot, changed, hiOf, highest, loOf, or, size, toBits, type PostingSet } from './estate-postings.ts';

/**
 * A chunk's id, from its document, the content it was cut from and its index: stable across
 * rebuilds, new when the content changes. A UUID of version 8 (custom) from an MD5 of those.
 * The same expression serves SQL bulk loads (bench/).
 */
export const chunkIdSql = (documentId: string, contentSha: string, index: string) =>
  `overlay(overlay(md5(${documentId}::text || ':' || ${contentSha} || ':' || (${index})::text) placing '8' from 13 for 1) placing '8' from 17 for 1)::uuid`;

/** Blobs read back per statement group: bounds the projection's memory on a large batch. */
const GROUP_CHARS = 8_000_000;
/** Lexeme-chunk pairs held before the search index is written (memory bound within a batch). */
const FLUSH_PAIRS = 2_000_000;
const ORDINAL_COUNTER = 'chunk_ordinal';
/** Chunks the projection writes per transaction (a batch of events stops growing there). */
export const ESTATE_BATCH_CHUNKS = 1000;

type Ingested = Recorded<Extract<EstateDocumentEvent, { type: 'EstateDocumentIngested' }>>;

/** The partitions a live chunk belongs to (see estate_partitions). */
const partitionsOf = (isVault: boolean, category: string) => (isVault ? ['vault'] : ['estate', `c:${category}`]);

/**
 * The search index's writes within one projection batch: new chunk ordinals, lexeme postings
 * (added only), partition membership (added and removed). Held in memory and written at
 * `flush`, one read and one write per touched container.
 */
class IndexWriter {
  private next = 0;
  private postings = new Map<string, number[]>();
  private pairs = 0;
  private live = new Map<string, Map<number, boolean>>();

  constructor(private readonly tx: PoolClient) {}

  async start(): Promise<void> {
    const { rows } = await this.tx.query<{ value: string }>('SELECT value FROM estate_counters WHERE name = $1', [ORDINAL_COUNTER]);
    this.next = Number(rows[0]?.value ?? 0);
  }

  take(count: number): number {
    const first = this.next;
    this.next += count;
    return first;
  }

  post(lexeme: string, ordinals: number[]): void {
    const list = this.postings.get(lexeme);
    if (list) for (const o of ordinals) list.push(o);
    else this.postings.set(lexeme, ordinals);
    this.pairs += ordinals.length;
  }

  setLive(ordinal: number, isVault: boolean, category: string, live: boolean): void {
    for (const partition of partitionsOf(isVault, category)) {
      let changes = this.live.get(partition);
      if (!changes) this.live.set(partition, (changes = new Map()));
      changes.set(ordinal, live);
    }
  }

  get full(): boolean {
    return this.pairs >= FLUSH_PAIRS;
  }

  async flush(): Promise<void> {
    // Lexeme postings: only additions.
    const postingKeys: Array<[string, number, number[]]> = [];
    for (const [lexeme, ordinals] of this.postings) {
      const byHi = new Map<number, number[]>();
      for (const o of ordinals) {
        const hi = hiOf(o);
        const list = byHi.get(hi);
        if (list) list.push(loOf(o));
        else byHi.set(hi, [loOf(o)]);
      }
      for (const [hi, los] of byHi) postingKeys.push([lexeme, hi, los]);
    }
    await this.rewrite('estate_postings', 'lexeme', postingKeys.map(([key, hi, add]) => ({ key, hi, add, remove: [] })));
    // Partitions: additions and removals, the last change of an ordinal winning.
    const partitionKeys: Array<{ key: string; hi: number; add: number[]; remove: number[] }> = [];
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
    await this.rewrite('estate_partitions', 'partition', partitionKeys);
    await this.tx.query(
      `INSERT INTO estate_counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
      [ORDINAL_COUNTER, this.next]);
    this.postings = new Map();
    this.pairs = 0;
    this.live = new Map();
  }

  /** Read the touched containers, apply the changes, write them back (or drop emptied ones). */
  private async rewrite(table: string, column: string, changes: Array<{ key: string; hi: number; add: number[]; remove: number[] }>): Promise<void> {
    if (changes.length === 0) return;
    // In index order: neighbouring lookups share pages.
    changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.hi - b.hi));
    const keys = changes.map((c) => c.key);
    const his = changes.map((c) => c.hi);
    // One index lookup per key: as a plain join, the planner hashes the whole table instead.
    const { rows } = await this.tx.query<{ key: string; hi: number; data: Buffer }>(
      `SELECT k.key, k.hi, t.data FROM unnest($1::text[], $2::int[]) AS k(key, hi)
       CROSS JOIN LATERAL (SELECT data FROM ${table} WHERE ${column} = k.key AND hi = k.hi LIMIT 1) t`, [keys, his]);
    const current = new Map(rows.map((r) => [`${r.hi}\u0000${r.key}`, r.data]));
    const upKeys: string[] = [], upHis: number[] = [], upData: Buffer[] = [], dropKeys: string[] = [], dropHis: number[] = [];
    for (const c of changes) {
      const data = changed(current.get(`${c.hi}\u0000${c.key}`) ?? null, c.add, c.remove);
      if (data) {
        upKeys.push(c.key); upHis.push(c.hi); upData.push(data);
      } else {
        dropKeys.push(c.key); dropHis.push(c.hi);
      }
    }
    if (upKeys.length) {
      await this.tx.query(
        `INSERT INTO ${table} (${column}, hi, data) SELECT * FROM unnest($1::text[], $2::int[], $3::bytea[])
         ON CONFLICT (${column}, hi) DO UPDATE SET data = excluded.data`, [upKeys, upHis, upData]);
    }
    if (dropKeys.length) {
      await this.tx.query(
        `DELETE FROM ${table} t USING unnest($1::text[], $2::int[]) AS k(key, hi) WHERE t.${column} = k.key AND t.hi = k.hi`, [dropKeys, dropHis]);
    }
  }
}

async function insertDocuments(tx: PoolClient, index: IndexWriter, events: Ingested[]): Promise<void> {
  const d = events.map((e) => e.data);
  await tx.query(
    `INSERT INTO estate_documents (id, source_repo, path, category, is_vault, commit_sha, metadata, content_sha256, content_chars, chunks, run_id, ingested_at)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::jsonb[], $8::text[], $9::int[], $10::int[], $11::uuid[], $12::timestamptz[])`,
    [d.map((x) => x.document_id), d.map((x) => x.source_repo), d.map((x) => x.path), d.map((x) => x.category), d.map((x) => x.is_vault),
      d.map((x) => x.commit_sha), d.map((x) => (x.metadata === null ? null : JSON.stringify(x.metadata))), d.map((x) => x.content_sha256),
      d.map((x) => x.content_chars), d.map((x) => x.chunks.length / 2), d.map((x) => x.run_id), d.map((x) => x.at)]);
  const blobs = await readBlobs(tx, d.map((x) => x.content_sha256));
  const ids: string[] = [], shas: string[] = [], indexes: number[] = [], ordinals: number[] = [], vault: boolean[] = [], categories: string[] = [], texts: string[] = [];
  for (const x of d) {
    const texts_ = chunkTexts(blobs.get(x.content_sha256)!, x.chunks);
    const first = index.take(texts_.length);
    texts_.forEach((text, i) => {
      ids.push(x.document_id); shas.push(x.content_sha256); indexes.push(i); ordinals.push(first + i); vault.push(x.is_vault);
      categories.push(x.category); texts.push(text);
      index.setLive(first + i, x.is_vault, x.category, true);
    });
  }
  // The chunks, and each lexeme of theirs with the ordinals holding it, in one statement.
  const { rows } = await tx.query<{ lexeme: string; ordinals: number[] }>(
    `WITH inserted AS (
       INSERT INTO estate_chunks (chunk_id, document_id, chunk_index, ordinal, is_vault, category, content, tsv)
       SELECT ${chunkIdSql('u.d', 'u.sha', 'u.i')}, u.d, u.i, u.o, u.v, u.c, u.t, to_tsvector('english', u.t)
       FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::bool[], $6::text[], $7::text[]) AS u(d, sha, i, o, v, c, t)
       RETURNING ordinal, tsv)
     SELECT l AS lexeme, array_agg(ordinal) AS ordinals FROM inserted, unnest(tsvector_to_array(tsv)) AS l GROUP BY l`,
    [ids, shas, indexes, ordinals, vault, categories, texts]);
  for (const row of rows) index.post(row.lexeme, row.ordinals);
}

/** A stretch of a batch in which no document appears twice: its writes can be grouped. */
async function applyRun(tx: PoolClient, index: IndexWriter, events: Recorded<EstateDocumentEvent>[]): Promise<void> {
  const touched = events.map((e) => e.data.document_id);
  const removed = await tx.query<{ ordinal: number; is_vault: boolean; category: string }>(
    'DELETE FROM estate_chunks WHERE document_id = ANY($1::uuid[]) RETURNING ordinal, is_vault, category', [touched]);
  for (const r of removed.rows) index.setLive(r.ordinal, r.is_vault, r.category, false);
  await tx.query('DELETE FROM estate_documents WHERE id = ANY($1::uuid[])', [touched]);
  let group: Ingested[] = [];
  let chars = 0;
  const write = async () => {
    if (group.length) await insertDocuments(tx, index, group);
    if (index.full) await index.flush();
    group = [];
    chars = 0;
  };
  for (const event of events) {
    if (event.type !== 'EstateDocumentIngested') continue;
    if (group.length && chars + event.data.content_chars > GROUP_CHARS) await write();
    group.push(event);
    chars += event.data.content_chars;
  }
  await write();
}

// Events are applied in log order (chunk ordinals follow it, so a rebuild numbers chunks as the
// live projection did), grouped into multi-row statements where no document repeats.
async function applyDocumentEvents(events: Recorded<EstateDocumentEvent>[], tx: PoolClient): Promise<void> {
  const index = new IndexWriter(tx);
  await index.start();
  let run: Recorded<EstateDocumentEvent>[] = [];
  const inRun = new Set<string>();
  for (const event of events) {
    if (inRun.has(event.data.document_id)) {
      await applyRun(tx, index, run);
      run = [];
      inRun.clear();
    }
    run.push(event);
    inRun.add(event.data.document_id);
  }
  await applyRun(tx, index, run);
  await index.flush();
}

export const estateDocumentsProjection = defineProjection<EstateDocumentEvent>({
  name: 'estate_documents',
  handles: ['EstateDocumentIngested', 'EstateDocumentDeleted'],
  tables: ['estate_documents', 'estate_chunks', 'estate_postings', 'estate_partitions', 'estate_counters'],
  apply: (event, tx) => applyDocumentEvents([event], tx),
  applyBatch: applyDocumentEvents,
  // Chunks written per transaction: enough to share the search index's writes among several
  // documents, few enough that the transaction, which holds back every reader of the log while
  // it is open, lasts about a second at most.
  weigh: (event) => (event.type === 'EstateDocumentIngested' ? event.data.chunks.length / 2 : 1),
  maxBatchWeight: ESTATE_BATCH_CHUNKS,
});

export const estateRunsProjection = defineProjection<IngestRunEvent>({
  name: 'estate_runs',
  handles: ['EstateIngestRunRecorded'],
  tables: ['estate_runs'],
  async apply(event, tx) {
    const d = event.data;
    await tx.query(
      `INSERT INTO estate_runs (run_id, kind, documents_submitted, documents_succeeded, documents_failed, chunks_written, status, errors, started_at, ended_at, actor, actor_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [d.run_id, d.kind, d.documents_submitted, d.documents_succeeded, d.documents_failed, d.chunks_written, d.status,
        JSON.stringify(d.errors), d.started_at, d.ended_at, d.actor, d.actor_id]);
  },
});

export const estateProjections = [estateDocumentsProjection, estateRunsProjection];

// --- documents -------------------------------------------------------------------------------

export interface DocumentRow {
  id: string;
  source_repo: string;
  path: string;
  category: string;
  is_vault: boolean;
  commit_sha: string | null;
  metadata: Record<string, unknown> | null;
  content_sha256: string;
  content_chars: number;
  chunks: number;
  run_id: string;
  ingested_at: Date;
}

const DOCUMENT_COLUMNS = 'id, source_repo, path, category, is_vault, commit_sha, metadata, content_sha256, content_chars, chunks, run_id, ingested_at';

export async function documentById(pool: Pool, id: string): Promise<DocumentRow | null> {
  const { rows } = await pool.query<DocumentRow>(`SELECT ${DOCUMENT_COLUMNS} FROM estate_documents WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export interface ChunkRow {
  chunk_id: string;
  chunk_index: number;
  content: string;
}

export async function chunksOf(pool: Pool, documentId: string): Promise<ChunkRow[]> {
  const { rows } = await pool.query<ChunkRow>(
    'SELECT chunk_id, chunk_index, content FROM estate_chunks WHERE document_id = $1 ORDER BY chunk_index', [documentId]);
  return rows;
}

/** Documents of one partition (estate or vault), optionally of one category, by key. */
export async function listDocuments(pool: Pool, options: { vault: boolean; category?: string }): Promise<DocumentRow[]> {
  const { rows } = await pool.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM estate_documents WHERE is_vault = $1 AND ($2::text IS NULL OR category = $2)
     ORDER BY source_repo, path`, [options.vault, options.category ?? null]);
  return rows;
}

export interface PathRow {
  path: string;
  source_repo: string;
  document_id: string;
}

/** Every stored (source_repo, path): of one repository, or every estate (non-vault) one. */
export async function listPaths(pool: Pool, sourceRepo?: string): Promise<PathRow[]> {
  const { rows } = await pool.query<PathRow>(
    `SELECT path, source_repo, id AS document_id FROM estate_documents
     WHERE ($1::text IS NULL AND NOT is_vault) OR source_repo = $1 ORDER BY source_repo, path`, [sourceRepo ?? null]);
  return rows;
}

/** Which of these document ids exist, with their content hash (the ingest route's `unchanged`). */
export async function documentHashes(pool: Pool, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; content_sha256: string }>(
    'SELECT id, content_sha256 FROM estate_documents WHERE id = ANY($1::uuid[])', [ids]);
  return new Map(rows.map((r) => [r.id, r.content_sha256]));
}

// --- corpus ----------------------------------------------------------------------------------

export interface CorpusGroup {
  key: string;
  documents: number;
  chunks: number;
  last_ingest_at: Date | null;
}

export interface Corpus {
  documents: number;
  chunks: number;
  content_chars: number;
  vault_documents: number;
  vault_chunks: number;
  last_ingest_at: Date | null;
  by_source_repo: CorpusGroup[];
  by_category: CorpusGroup[];
}

export async function corpus(pool: Pool): Promise<Corpus> {
  const group = (column: string) => pool.query<CorpusGroup>(
    `SELECT ${column} AS key, count(*)::int AS documents, sum(chunks)::int AS chunks, max(ingested_at) AS last_ingest_at
     FROM estate_documents WHERE NOT is_vault GROUP BY ${column} ORDER BY ${column}`);
  const [totals, repos, categories] = await Promise.all([
    pool.query(
      `SELECT count(*) FILTER (WHERE NOT is_vault)::int AS documents,
              coalesce(sum(chunks) FILTER (WHERE NOT is_vault), 0)::int AS chunks,
              coalesce(sum(content_chars) FILTER (WHERE NOT is_vault), 0)::bigint AS content_chars,
              count(*) FILTER (WHERE is_vault)::int AS vault_documents,
              coalesce(sum(chunks) FILTER (WHERE is_vault), 0)::int AS vault_chunks,
              max(ingested_at) FILTER (WHERE NOT is_vault) AS last_ingest_at
       FROM estate_documents`),
    group('source_repo'),
    group('category'),
  ]);
  const t = totals.rows[0];
  return {
    documents: t.documents, chunks: t.chunks, content_chars: Number(t.content_chars), vault_documents: t.vault_documents,
    vault_chunks: t.vault_chunks, last_ingest_at: t.last_ingest_at, by_source_repo: repos.rows, by_category: categories.rows,
  };
}

// --- search ----------------------------------------------------------------------------------

export type MatchMode = 'any' | 'all';

/**
 * A search's words as lexemes, from parameter $1 only: user text is never parsed as tsquery
 * syntax. Lexemes are to_tsvector('english', ...) of the text (English stemming, stop words
 * dropped), the same lexemes plainto_tsquery would make. `all`: one group, every lexeme of the
 * text. `any`: a group per whitespace-separated word (a hyphenated word yields several lexemes,
 * all required, as plainto_tsquery does).
 */
const LEXEME_GROUPS: Record<MatchMode, string> = {
  all: `SELECT tsvector_to_array(to_tsvector('english', $1)) AS lexemes`,
  any: `SELECT tsvector_to_array(to_tsvector('english', w)) AS lexemes FROM regexp_split_to_table($1, '\\s+') AS w WHERE w <> ''`,
};

/** The same query as a tsquery, for ranking and snippets. */
const TSQUERY: Record<MatchMode, string> = {
  all: `plainto_tsquery('english', $1)`,
  any: `(SELECT coalesce(tsquery_or_agg(plainto_tsquery('english', w)), ''::tsquery)
         FROM regexp_split_to_table($1, '\\s+') AS w WHERE w <> '')`,
};

/**
 * How many matches are ranked: ts_rank reads each candidate's tsvector, which over every match
 * of a common term in a million chunks would take seconds. Candidates are the newest matches
 * holding every word of the query, then (for `any`) the newest holding some; the total is
 * counted exactly apart.
 */
export const SEARCH_CANDIDATES = 200;

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

const HEADLINE = 'StartSel=**, StopSel=**, MaxWords=24, MinWords=10, ShortWord=3, MaxFragments=2, FragmentDelimiter=" … "';

/**
 * The search's lexeme groups, and the containers of their lexemes and of the partition, in one
 * statement (one round trip, one snapshot).
 */
async function postingsOf(pool: Pool, o: SearchOptions, partition: string) {
  const { rows } = await pool.query<{ kind: 'g' | 'l' | 'p'; key: string | null; hi: number | null; data: Buffer | null; lexemes: string[] | null }>(
    `WITH groups AS MATERIALIZED (${LEXEME_GROUPS[o.match]})
     SELECT 'g' AS kind, NULL AS key, NULL::int AS hi, NULL::bytea AS data, lexemes FROM groups
     UNION ALL
     SELECT 'l', lexeme, hi, data, NULL FROM estate_postings WHERE lexeme IN (SELECT unnest(lexemes) FROM groups)
     UNION ALL
     SELECT 'p', partition, hi, data, NULL FROM estate_partitions
     WHERE partition = $2 AND EXISTS (SELECT 1 FROM groups WHERE cardinality(lexemes) > 0)`, [o.q, partition]);
  const groups = rows.filter((r) => r.kind === 'g').map((r) => r.lexemes!).filter((g) => g.length > 0);
  const sets = new Map<string, PostingSet>(groups.flat().map((l) => [l, new Map()]));
  const live: PostingSet = new Map();
  for (const row of rows) {
    if (row.kind === 'l') sets.get(row.key!)!.set(row.hi!, toBits(row.data));
    else if (row.kind === 'p') live.set(row.hi!, toBits(row.data));
  }
  return { groups, sets, live };
}

export async function search(pool: Pool, o: SearchOptions): Promise<{ total: number; hits: SearchHit[] }> {
  const partition = o.vault ? 'vault' : o.category !== null ? `c:${o.category}` : 'estate';
  const { groups, sets, live } = await postingsOf(pool, o, partition);
  if (groups.length === 0) return { total: 0, hits: [] };
  // OR of the groups, AND within one; `every`: the chunks holding every group.
  const groupSets = groups.map((group) => group.map((l) => sets.get(l)!).reduce(and));
  const every = and(groupSets.reduce(and), live);
  const found = o.match === 'all' ? every : and(groupSets.reduce(or), live);
  const total = size(found);
  if (total === 0) return { total, hits: [] };
  const candidates = highest(every, SEARCH_CANDIDATES);
  if (candidates.length < SEARCH_CANDIDATES && o.match === 'any') candidates.push(...highest(andNot(found, every), SEARCH_CANDIDATES - candidates.length));
  const { rows } = await pool.query<SearchHit>(
    `WITH q AS MATERIALIZED (SELECT ${TSQUERY[o.match]} AS query),
     ranked AS (
       SELECT c.ordinal, ts_rank(c.tsv, (SELECT query FROM q)) AS score
       FROM estate_chunks c WHERE c.ordinal = ANY($2::int[])
       ORDER BY score DESC, c.ordinal DESC
       LIMIT $3)
     SELECT c.document_id, c.chunk_id, d.source_repo, d.path, d.category, c.chunk_index, r.score, c.content,
            ts_headline('english', c.content, (SELECT query FROM q), '${HEADLINE}') AS snippet
     FROM ranked r
     JOIN estate_chunks c ON c.ordinal = r.ordinal
     JOIN estate_documents d ON d.id = c.document_id
     ORDER BY r.score DESC, r.ordinal DESC`, [o.q, candidates, o.limit]);
  return { total, hits: rows.map((h) => ({ ...h, score: Number(h.score) })) };
}

// --- runs ------------------------------------------------------------------------------------

export interface RunRow {
  run_id: string;
  kind: RunKind;
  documents_submitted: number;
  documents_succeeded: number;
  documents_failed: number;
  chunks_written: number;
  status: RunStatus;
  errors: RunFailure[];
  started_at: Date;
  ended_at: Date;
  actor: string;
  actor_id: string | null;
}

/** The newest runs first, and the id of the newest run whose status is not ok (or null). */
export async function recentRuns(pool: Pool, limit: number): Promise<{ runs: RunRow[]; lastIncomplete: string | null }> {
  const [runs, incomplete] = await Promise.all([
    pool.query<RunRow>(
      `SELECT run_id, kind, documents_submitted, documents_succeeded, documents_failed, chunks_written, status, errors,
              started_at, ended_at, actor, actor_id
       FROM estate_runs ORDER BY ended_at DESC, run_id DESC LIMIT $1`, [limit]),
    pool.query<{ run_id: string }>(`SELECT run_id FROM estate_runs WHERE status <> 'ok' ORDER BY ended_at DESC, run_id DESC LIMIT 1`),
  ]);
  return { runs: runs.rows, lastIncomplete: incomplete.rows[0]?.run_id ?? null };
}
