// Estate knowledge read models: `estate_documents` (documents and their chunks, with the
// full-text index) and `estate_runs` (one row per ingest or vault run). Rows and queries live
// here with the writes.
//
// Chunk content is not in the events: an ingest event names its content blob (SHA-256) and the
// chunk offsets, and this projection reads the blob back and cuts the chunks, so a rebuild from
// the log and the blobs writes the same rows.

import type {
  EstateDocumentEvent,
  IngestRunEvent,
  RunFailure,
  RunKind,
  RunStatus,
} from '../../domain/orchestration/estate/events.ts';
import { chunkTexts } from '../../domain/orchestration/estate/chunking.ts';
import { Lexicon } from '../../domain/orchestration/estate/lexemes.ts';
import { textArray } from '../../infra/db/binary-params.ts';
import { readBlobs } from '../../infra/blobs.ts';
import { Pipeline } from '../../infra/db/pipeline.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';
import { appendPending, IndexWriter } from './estate-index.ts';
import { pendingRows } from './estate-pending.ts';

/**
 * A chunk's id, from its document, the content it was cut from and its index: stable across
 * rebuilds, new when the content changes. A UUID of version 8 (custom) from an MD5 of those.
 * The same expression serves SQL bulk loads (bench/).
 */
export const chunkIdSql = (documentId: string, contentSha: string, index: string) =>
  `overlay(overlay(md5(${documentId}::text || ':' || ${contentSha} || ':' || (${index})::text) placing '8' from 13 for 1) placing '8' from 17 for 1)::uuid`;

/** Blobs read back per statement group: bounds the projection's memory on a large batch. */
const GROUP_CHARS = 8_000_000;
/** Chunks the projection writes per transaction (a batch of events stops growing there). */
export const ESTATE_BATCH_CHUNKS = 1000;

type Ingested = Recorded<Extract<EstateDocumentEvent, { type: 'EstateDocumentIngested' }>>;

/**
 * Lexicons (words seen, with their lexemes) kept across batches, each used by one write at a
 * time: a write awaits the server between parts while its lexeme ids must stay valid, and two
 * projections in one process (tests run several platforms) must not start one over under the
 * other.
 */
const idleLexicons: Lexicon[] = [];

/** Chunks per insert statement: the next part is lexed while the server stores this one. */
const PART_CHUNKS = 250;

/** Chunks of whole documents for one insert statement. */
class ChunkPart {
  docs: { id: string; sha: string; vault: boolean; category: string }[] = [];
  /** Per chunk: its document (1-based, into `docs`), index in it, ordinal and text. */
  doc: number[] = [];
  index: number[] = [];
  ordinal: number[] = [];
  text: string[] = [];
}

/**
 * Write these documents; then their chunks, with the postings of the chunks' lexemes (computed
 * here, see domain/orchestration/estate/lexemes.ts) as pending rows of the search index
 * (estate-pending.ts, estate-index.ts). Chunk texts and pending rows go as binary parameters:
 * the server stores them without parsing them.
 *
 * The work is pipelined over one connection: chunks go in parts of about PART_CHUNKS, and while
 * the server stores one part this process lexes the next (lexing is about a third of the CPU an
 * ingest costs here, storing most of the rest there). The pending rows of the whole group go
 * last, in one statement: rows per statement are what a search reads and a fold merges, so they
 * are not multiplied by the parts.
 *
 * A chunk stores no tsvector: its lexemes are in the search index, and ranking computes the
 * tsvectors of a search's candidates from their content (search, in estate-index.ts). Storing one
 * per chunk cost about as much database CPU as all the rest of an ingest.
 */
async function insertDocuments(tx: PoolClient, index: IndexWriter, events: Ingested[]): Promise<void> {
  const d = events.map((e) => e.data);
  await tx.query(
    `INSERT INTO estate_documents (id, source_repo, path, category, is_vault, commit_sha, metadata, content_sha256, content_chars, chunks, run_id, ingested_at)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::bool[], $6::text[], $7::jsonb[], $8::text[], $9::int[], $10::int[], $11::uuid[], $12::timestamptz[])`,
    [
      d.map((x) => x.document_id),
      d.map((x) => x.source_repo),
      d.map((x) => x.path),
      d.map((x) => x.category),
      d.map((x) => x.is_vault),
      d.map((x) => x.commit_sha),
      d.map((x) => (x.metadata === null ? null : JSON.stringify(x.metadata))),
      d.map((x) => x.content_sha256),
      d.map((x) => x.content_chars),
      d.map((x) => x.chunks.length / 2),
      d.map((x) => x.run_id),
      d.map((x) => x.at),
    ],
  );
  const blobs = await readBlobs(
    tx,
    d.map((x) => x.content_sha256),
  );
  const lexicon = idleLexicons.pop() ?? new Lexicon();
  try {
    await writeChunks(tx, index, d, blobs, lexicon);
  } finally {
    idleLexicons.push(lexicon);
  }
}

async function writeChunks(
  tx: PoolClient,
  index: IndexWriter,
  d: Ingested['data'][],
  blobs: Map<string, string>,
  lexicon: Lexicon,
): Promise<void> {
  const pipeline = new Pipeline();
  lexicon.trim(); // before any lexing: ids stay valid until the pending rows are encoded
  const lexemes: Int32Array[] = [],
    ordinals: number[] = [];
  let part = new ChunkPart();
  for (const x of d) {
    const cut = chunkTexts(blobs.get(x.content_sha256)!, x.chunks);
    const first = index.take(cut.length);
    part.docs.push({ id: x.document_id, sha: x.content_sha256, vault: x.is_vault, category: x.category });
    cut.forEach((text, i) => {
      part.doc.push(part.docs.length);
      part.index.push(i);
      part.ordinal.push(first + i);
      part.text.push(text);
      lexemes.push(lexicon.distinct(text));
      ordinals.push(first + i);
      index.setLive(first + i, x.is_vault, x.category, true);
    });
    if (part.text.length >= PART_CHUNKS) {
      await pipeline.send(insertChunks(tx, part));
      part = new ChunkPart();
    }
  }
  if (part.text.length > 0) await pipeline.send(insertChunks(tx, part));
  const pending = pendingRows(lexicon, lexemes, ordinals);
  await pipeline.send(appendPending(tx, pending));
  await pipeline.drain();
}

function insertChunks(tx: PoolClient, part: ChunkPart) {
  const { docs } = part;
  return tx.query(
    `WITH docs AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::bool[], $4::text[]) WITH ORDINALITY AS d(id, sha, vault, category, n))
     INSERT INTO estate_chunks (chunk_id, document_id, chunk_index, ordinal, is_vault, category, content)
     SELECT ${chunkIdSql('d.id', 'd.sha', 'u.i')}, d.id, u.i, u.o, d.vault, d.category, u.t
     FROM unnest($5::int[], $6::int[], $7::int[], $8::text[]) AS u(doc, i, o, t)
     JOIN docs d ON d.n = u.doc`,
    [
      docs.map((x) => x.id),
      docs.map((x) => x.sha),
      docs.map((x) => x.vault),
      docs.map((x) => x.category),
      part.doc,
      part.index,
      part.ordinal,
      textArray(part.text),
    ],
  );
}

/** A stretch of a batch in which no document appears twice: its writes can be grouped. */
async function applyRun(tx: PoolClient, index: IndexWriter, events: Recorded<EstateDocumentEvent>[]): Promise<void> {
  const touched = events.map((e) => e.data.document_id);
  const removed = await tx.query<{ ordinal: number; is_vault: boolean; category: string }>(
    'DELETE FROM estate_chunks WHERE document_id = ANY($1::uuid[]) RETURNING ordinal, is_vault, category',
    [touched],
  );
  for (const r of removed.rows) index.setLive(r.ordinal, r.is_vault, r.category, false);
  await tx.query('DELETE FROM estate_documents WHERE id = ANY($1::uuid[])', [touched]);
  let group: Ingested[] = [];
  let chars = 0;
  const write = async () => {
    if (group.length) await insertDocuments(tx, index, group);
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
  tables: [
    'estate_documents',
    'estate_chunks',
    'estate_postings',
    'estate_postings_pending',
    'estate_partitions',
    'estate_counters',
  ],
  apply: (event, tx) => applyDocumentEvents([event], tx),
  applyBatch: (events, tx) => applyDocumentEvents(events, tx),
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
      [
        d.run_id,
        d.kind,
        d.documents_submitted,
        d.documents_succeeded,
        d.documents_failed,
        d.chunks_written,
        d.status,
        JSON.stringify(d.errors),
        d.started_at,
        d.ended_at,
        d.actor,
        d.actor_id,
      ],
    );
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

const DOCUMENT_COLUMNS =
  'id, source_repo, path, category, is_vault, commit_sha, metadata, content_sha256, content_chars, chunks, run_id, ingested_at';

export async function documentById(pool: Pool, id: string): Promise<DocumentRow | null> {
  const { rows } = await pool.query<DocumentRow>(`SELECT ${DOCUMENT_COLUMNS} FROM estate_documents WHERE id = $1`, [
    id,
  ]);
  return rows[0] ?? null;
}

export interface ChunkRow {
  chunk_id: string;
  chunk_index: number;
  content: string;
}

export async function chunksOf(pool: Pool, documentId: string): Promise<ChunkRow[]> {
  const { rows } = await pool.query<ChunkRow>(
    'SELECT chunk_id, chunk_index, content FROM estate_chunks WHERE document_id = $1 ORDER BY chunk_index',
    [documentId],
  );
  return rows;
}

/** Documents of one partition (estate or vault), optionally of one category, by key. */
export async function listDocuments(
  pool: Pool,
  options: { vault: boolean; category?: string },
): Promise<DocumentRow[]> {
  const { rows } = await pool.query<DocumentRow>(
    `SELECT ${DOCUMENT_COLUMNS} FROM estate_documents WHERE is_vault = $1 AND ($2::text IS NULL OR category = $2)
     ORDER BY source_repo, path`,
    [options.vault, options.category ?? null],
  );
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
     WHERE ($1::text IS NULL AND NOT is_vault) OR source_repo = $1 ORDER BY source_repo, path`,
    [sourceRepo ?? null],
  );
  return rows;
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
  const group = (column: string) =>
    pool.query<CorpusGroup>(
      `SELECT ${column} AS key, count(*)::int AS documents, sum(chunks)::int AS chunks, max(ingested_at) AS last_ingest_at
     FROM estate_documents WHERE NOT is_vault GROUP BY ${column} ORDER BY ${column}`,
    );
  const [totals, repos, categories] = await Promise.all([
    pool.query(
      `SELECT count(*) FILTER (WHERE NOT is_vault)::int AS documents,
              coalesce(sum(chunks) FILTER (WHERE NOT is_vault), 0)::int AS chunks,
              coalesce(sum(content_chars) FILTER (WHERE NOT is_vault), 0)::bigint AS content_chars,
              count(*) FILTER (WHERE is_vault)::int AS vault_documents,
              coalesce(sum(chunks) FILTER (WHERE is_vault), 0)::int AS vault_chunks,
              max(ingested_at) FILTER (WHERE NOT is_vault) AS last_ingest_at
       FROM estate_documents`,
    ),
    group('source_repo'),
    group('category'),
  ]);
  const t = totals.rows[0];
  return {
    documents: t.documents,
    chunks: t.chunks,
    content_chars: Number(t.content_chars),
    vault_documents: t.vault_documents,
    vault_chunks: t.vault_chunks,
    last_ingest_at: t.last_ingest_at,
    by_source_repo: repos.rows,
    by_category: categories.rows,
  };
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
export async function recentRuns(
  pool: Pool,
  limit: number,
): Promise<{ runs: RunRow[]; lastIncomplete: string | null }> {
  const [runs, incomplete] = await Promise.all([
    pool.query<RunRow>(
      `SELECT run_id, kind, documents_submitted, documents_succeeded, documents_failed, chunks_written, status, errors,
              started_at, ended_at, actor, actor_id
       FROM estate_runs ORDER BY ended_at DESC, run_id DESC LIMIT $1`,
      [limit],
    ),
    pool.query<{ run_id: string }>(
      `SELECT run_id FROM estate_runs WHERE status <> 'ok' ORDER BY ended_at DESC, run_id DESC LIMIT 1`,
    ),
  ]);
  return { runs: runs.rows, lastIncomplete: incomplete.rows[0]?.run_id ?? null };
}
