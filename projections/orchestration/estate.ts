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

/**
 * A chunk's id, from its document, the content it was cut from and its index: stable across
 * rebuilds, new when the content changes. A UUID of version 8 (custom) from an MD5 of those.
 * The same expression serves SQL bulk loads (bench/).
 */
export const chunkIdSql = (documentId: string, contentSha: string, index: string) =>
  `overlay(overlay(md5(${documentId}::text || ':' || ${contentSha} || ':' || ${index}::text) placing '8' from 13 for 1) placing '8' from 17 for 1)::uuid`;

/** Blobs read back per statement group: bounds the projection's memory on a large batch. */
const GROUP_CHARS = 8_000_000;

type Ingested = Recorded<Extract<EstateDocumentEvent, { type: 'EstateDocumentIngested' }>>;

async function insertDocuments(tx: PoolClient, events: Ingested[]): Promise<void> {
  const d = events.map((e) => e.data);
  await tx.query(
    `INSERT INTO estate_documents (id, source_repo, path, category, is_vault, commit_sha, metadata, content_sha256, content_chars, chunks, run_id, ingested_at)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::jsonb[], $8::text[], $9::int[], $10::int[], $11::uuid[], $12::timestamptz[])`,
    [d.map((x) => x.document_id), d.map((x) => x.source_repo), d.map((x) => x.path), d.map((x) => x.category), d.map((x) => x.is_vault),
      d.map((x) => x.commit_sha), d.map((x) => (x.metadata === null ? null : JSON.stringify(x.metadata))), d.map((x) => x.content_sha256),
      d.map((x) => x.content_chars), d.map((x) => x.chunks.length / 2), d.map((x) => x.run_id), d.map((x) => x.at)]);
  const blobs = await readBlobs(tx, d.map((x) => x.content_sha256));
  const ids: string[] = [], shas: string[] = [], indexes: number[] = [], vault: boolean[] = [], categories: string[] = [], texts: string[] = [];
  for (const x of d) {
    chunkTexts(blobs.get(x.content_sha256)!, x.chunks).forEach((text, i) => {
      ids.push(x.document_id); shas.push(x.content_sha256); indexes.push(i); vault.push(x.is_vault); categories.push(x.category); texts.push(text);
    });
  }
  await tx.query(
    `INSERT INTO estate_chunks (chunk_id, document_id, chunk_index, is_vault, category, content, tsv)
     SELECT ${chunkIdSql('u.d', 'u.sha', 'u.i')}, u.d, u.i, u.v, u.c, u.t, to_tsvector('english', u.t)
     FROM unnest($1::uuid[], $2::text[], $3::int[], $4::bool[], $5::text[], $6::text[]) AS u(d, sha, i, v, c, t)`,
    [ids, shas, indexes, vault, categories, texts]);
}

// Each event replaces its document whole (or removes it), so only a document's last event in a
// batch matters: delete every touched document, then insert the survivors in multi-row statements.
async function applyDocumentEvents(events: Recorded<EstateDocumentEvent>[], tx: PoolClient): Promise<void> {
  const last = new Map<string, Recorded<EstateDocumentEvent>>();
  for (const event of events) last.set(event.data.document_id, event);
  const touched = [...last.keys()];
  await tx.query('DELETE FROM estate_chunks WHERE document_id = ANY($1::uuid[])', [touched]);
  await tx.query('DELETE FROM estate_documents WHERE id = ANY($1::uuid[])', [touched]);
  let group: Ingested[] = [];
  let chars = 0;
  for (const event of last.values()) {
    if (event.type !== 'EstateDocumentIngested') continue;
    if (group.length && chars + event.data.content_chars > GROUP_CHARS) {
      await insertDocuments(tx, group);
      group = [];
      chars = 0;
    }
    group.push(event);
    chars += event.data.content_chars;
  }
  if (group.length) await insertDocuments(tx, group);
}

export const estateDocumentsProjection = defineProjection<EstateDocumentEvent>({
  name: 'estate_documents',
  handles: ['EstateDocumentIngested', 'EstateDocumentDeleted'],
  tables: ['estate_documents', 'estate_chunks'],
  apply: (event, tx) => applyDocumentEvents([event], tx),
  applyBatch: applyDocumentEvents,
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
 * The tsquery of a search, from parameter $1 only (user text is never parsed as tsquery
 * syntax): `all` is plainto_tsquery of the whole text (AND of its lexemes); `any` is the OR of
 * plainto_tsquery of each whitespace-separated word. English stemming and stop words either way.
 */
const TSQUERY: Record<MatchMode, string> = {
  all: `plainto_tsquery('english', $1)`,
  any: `(SELECT coalesce(tsquery_or_agg(plainto_tsquery('english', w)), ''::tsquery)
         FROM regexp_split_to_table($1, '\\s+') AS w WHERE w <> '')`,
};

/**
 * How many matches are ranked. Ranking reads each candidate's tsvector from TOAST, so ranking
 * every match of a common term over a million chunks would take seconds; the first CANDIDATES
 * matches (in index order) are ranked instead, and the total is counted exactly apart.
 */
export const SEARCH_CANDIDATES = 400;

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

/** A read-only statement with planner settings of its own, on a client of its own. */
async function withSearchSettings<T>(pool: Pool, run: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    // Bitmap scans of the GIN index, never a sequential scan that would read every tsvector
    // from TOAST; no JIT compilation (its start-up alone would exceed the latency budget).
    await client.query('BEGIN READ ONLY; SET LOCAL enable_seqscan = off; SET LOCAL jit = off; SET LOCAL work_mem = \'32MB\'');
    const result = await run(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

const HEADLINE = 'StartSel=**, StopSel=**, MaxWords=24, MinWords=10, ShortWord=3, MaxFragments=2, FragmentDelimiter=" … "';

export async function search(pool: Pool, o: SearchOptions): Promise<{ total: number; hits: SearchHit[] }> {
  const query = TSQUERY[o.match];
  const where = `tsv @@ (SELECT query FROM q) AND is_vault = $2 AND ($3::text IS NULL OR category = $3)`;
  const count = withSearchSettings(pool, (c) => c.query<{ total: number }>(
    `WITH q AS MATERIALIZED (SELECT ${query} AS query)
     SELECT count(*)::int AS total FROM estate_chunks WHERE ${where}`, [o.q, o.vault, o.category]));
  const hits = withSearchSettings(pool, (c) => c.query<SearchHit>(
    `WITH q AS MATERIALIZED (SELECT ${query} AS query),
     ranked AS (
       SELECT cand.document_id, cand.chunk_index, cand.chunk_id, ts_rank(cand.tsv, (SELECT query FROM q)) AS score
       FROM (SELECT document_id, chunk_index, chunk_id, tsv FROM estate_chunks WHERE ${where} LIMIT $5) cand
       ORDER BY score DESC, cand.document_id, cand.chunk_index
       LIMIT $4)
     SELECT r.document_id, r.chunk_id, d.source_repo, d.path, d.category, r.chunk_index, r.score, c.content,
            ts_headline('english', c.content, (SELECT query FROM q), '${HEADLINE}') AS snippet
     FROM ranked r
     JOIN estate_chunks c ON c.document_id = r.document_id AND c.chunk_index = r.chunk_index
     JOIN estate_documents d ON d.id = r.document_id
     ORDER BY r.score DESC, r.document_id, r.chunk_index`, [o.q, o.vault, o.category, o.limit, SEARCH_CANDIDATES]));
  const [counted, found] = await Promise.all([count, hits]);
  return { total: counted.rows[0]!.total, hits: found.rows.map((h) => ({ ...h, score: Number(h.score) })) };
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
