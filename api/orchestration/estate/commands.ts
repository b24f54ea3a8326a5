// The estate slice's application layer (the only caller of the command runner for it): deleting
// a document, and the ingest use case, shared by the estate route (POST /api/v1/knowledge/ingest) and the vault
// route (POST /api/v1/knowledge/vault). Every document is attempted; one that fails is listed
// and does not stop the others.
//
// Two phases, and no transaction held across either:
// 1. Read. The body streams in one document at a time (batch-body.ts). Each is checked, its
//    content hashed and chunked, and its content stored as a blob (idempotent, invisible until
//    an event names it), a group of documents per statement. What is kept once a group is
//    stored is each document's key, hash and chunk offsets, never the content. A refusal of
//    the whole batch (too many documents, malformed JSON, too large) can still happen here,
//    and nothing is in the log yet.
// 2. Write. Each checked document goes through its own aggregate, its stream guarded by its own
//    expectation, with the events of APPEND_GROUP documents in one log transaction (`runMany`)
//    and no wait for the projection after each (so that it applies them in multi-document
//    transactions); then the run is recorded.

import { randomUUID } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import {
  documentIdOf,
  documentNotFound,
  estateDocumentDecider,
  ingestRunDecider,
  isReservedRepo,
  MAX_CONTENT_CHARS,
  MAX_METADATA_CHARS,
  pathProblem,
  runStatus,
  sourceRepoProblem,
  VAULT_REPO,
  type EstateDocumentState,
} from '../../../domain/orchestration/estate/decider.ts';
import type { EstateDocumentEvent, RunFailure, RunKind } from '../../../domain/orchestration/estate/events.ts';
import { estateDocumentStream, ingestRunStream } from '../../../domain/orchestration/streams.ts';
import { chunkBounds } from '../../../domain/orchestration/estate/chunking.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { blobKey, putBlobs } from '../../../infra/blobs.ts';
import type { CommandContext, RunManyOutcome } from '../../../infra/commands.ts';
import { comparePositions, type Position } from '../../../infra/eventstore/position.ts';
import { ProjectionTimeoutError, readCheckpoint } from '../../../infra/processors/projection.ts';
import {
  documentById,
  estateDocumentsProjection,
  type DocumentRow,
} from '../../../projections/orchestration/estate.ts';
import { zodMessage } from '../../shared/base.ts';
import type { OrchDeps } from '../deps.ts';
import type { BatchElement } from './batch-body.ts';
import { IngestDocument, VaultDocument } from './schemas.ts';

export type EstateDeps = Pick<OrchDeps, 'commands' | 'db' | 'clock' | 'log'>;

type ResultStatus = 'created' | 'updated' | 'unchanged' | 'failed';

export interface IngestResult {
  index: number;
  path: string | null;
  status: ResultStatus;
  document_id: string | null;
  chunks: number;
}

export interface Failure extends RunFailure {
  index: number;
}

export interface IngestOutcome {
  submitted: number;
  documents: number;
  failed: number;
  status: 'ok' | 'partial' | 'failed';
  total_chunks: number;
  failures: Failure[];
  run_id: string;
  run_recorded: boolean;
  results: IngestResult[];
}

/** A document that passed the checks, its content already stored as a blob. */
interface Checked {
  index: number;
  document_id: string;
  source_repo: string;
  path: string;
  commit_sha: string | null;
  metadata: Record<string, unknown> | null;
  content_sha256: string;
  content_chars: number;
  chunks: number[];
}

/**
 * Contents stored per statement (a group of documents, read in order), and such statements in
 * flight while the body is read; appends in flight while writing.
 */
const BLOB_GROUP_CHARS = 1_000_000;
const BLOB_CONCURRENCY = 3;
/**
 * Documents whose events go in one log transaction (`runMany`), and such transactions in flight:
 * an append per document made a hundred synchronous commits per batch, each waiting on a WAL
 * flush.
 */
const APPEND_GROUP = 25;
const APPEND_CONCURRENCY = 2;
/** Chunks appended before waiting for the projection to catch up. */
const WAIT_CHUNKS = 20_000;

class DocumentFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A `\u0000` escape in JSON text (an odd run of backslashes before `u0000`). */
const NUL_ESCAPE = /(^|[^\\])(\\\\)*\\u0000/i;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** A surrogate escape in JSON text (`JSON.stringify` writes a lone surrogate so, a pair as itself). */
const SURROGATE_ESCAPE = /(^|[^\\])(\\\\)*\\ud[89a-f][0-9a-f]{2}/i;

const shortPath = (path: unknown): string | null => (typeof path === 'string' ? path.slice(0, 300) : null);

/**
 * Text of a refused document as the run's record keeps it: a path or message may quote what made
 * the document invalid, and jsonb stores neither a NUL nor a lone surrogate, so both become U+FFFD
 * (the run is recorded whatever its documents held).
 */
const storable = (text: string): string => text.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');

/** Check one element of the batch: the document to store, or why it cannot be stored. */
function check(
  kind: RunKind,
  element: BatchElement,
  seen: Set<string>,
): Omit<Checked, 'content_sha256'> & { content: string } {
  if ('oversized' in element) {
    throw new DocumentFailure(
      'document_too_large',
      `the document is larger than any valid one (content is at most ${MAX_CONTENT_CHARS} characters)`,
    );
  }
  const schema: z.ZodType<{
    source_repo?: string;
    path: string;
    content: string;
    commit_sha?: string | null;
    metadata?: Record<string, unknown> | null;
  }> = kind === 'vault' ? VaultDocument : IngestDocument;
  const parsed = schema.safeParse(element.value);
  if (!parsed.success) throw new DocumentFailure('validation_failed', zodMessage(parsed.error));
  const doc = parsed.data;
  const sourceRepo = kind === 'vault' ? VAULT_REPO : doc.source_repo!;
  if (kind === 'ingest') {
    const problem = sourceRepoProblem(sourceRepo);
    if (problem) throw new DocumentFailure('invalid_source_repo', problem);
    if (isReservedRepo(sourceRepo))
      throw new DocumentFailure(
        'reserved_source_repo',
        'source_repo `vault` is reserved for the customer vault (POST /api/v1/knowledge/vault)',
      );
  }
  const pathIssue = pathProblem(doc.path);
  if (pathIssue) throw new DocumentFailure('invalid_path', pathIssue);
  if (doc.content.length > MAX_CONTENT_CHARS) {
    throw new DocumentFailure(
      'content_too_long',
      `content has ${doc.content.length} characters; at most ${MAX_CONTENT_CHARS}`,
    );
  }
  if (doc.content.trim().length === 0) throw new DocumentFailure('empty_content', 'content is empty');
  const metadataText = doc.metadata == null ? null : JSON.stringify(doc.metadata);
  if (metadataText !== null && metadataText.length > MAX_METADATA_CHARS) {
    throw new DocumentFailure(
      'metadata_too_large',
      `metadata is longer than ${MAX_METADATA_CHARS} characters serialized`,
    );
  }
  // PostgreSQL stores no NUL character in text or jsonb, and jsonb no lone surrogate: the fields
  // that go into the document's event are refused with them (the content's lone surrogates
  // become U+FFFD below).
  const fields = [sourceRepo, doc.path, doc.commit_sha ?? ''];
  if (
    doc.content.includes('\u0000') ||
    NUL_ESCAPE.test(metadataText ?? '') ||
    fields.some((f) => f.includes('\u0000'))
  ) {
    throw new DocumentFailure('validation_failed', 'strings must not contain NUL (\\u0000) characters');
  }
  if (SURROGATE_ESCAPE.test(metadataText ?? '') || fields.some((f) => f.search(LONE_SURROGATE) !== -1)) {
    throw new DocumentFailure(
      'validation_failed',
      'strings must be well-formed Unicode (no lone surrogates such as \\ud800)',
    );
  }
  const key = `${sourceRepo}\n${doc.path}`;
  if (seen.has(key))
    throw new DocumentFailure(
      'duplicate_in_batch',
      'an earlier document of this batch has the same source_repo and path',
    );
  seen.add(key);
  const content = doc.content.replace(LONE_SURROGATE, '\uFFFD');
  const chunks = chunkBounds(content).flat();
  return {
    index: element.index,
    document_id: documentIdOf(sourceRepo, doc.path),
    source_repo: sourceRepo,
    path: doc.path,
    commit_sha: doc.commit_sha ?? null,
    metadata: doc.metadata ?? null,
    content,
    content_chars: content.length,
    chunks,
  };
}

/** Run `work` over `items` with at most `limit` at a time; results in item order. */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!);
      }
    }),
  );
  return out;
}

export async function ingestBatch(
  deps: EstateDeps,
  kind: RunKind,
  elements: AsyncIterable<BatchElement>,
  context: CommandContext,
  actor: { username: string; id: string | null },
): Promise<IngestOutcome> {
  const runId = randomUUID();
  const startedAt = deps.clock.now();
  const results: IngestResult[] = [];
  const failures: Failure[] = [];
  const fail = (index: number, path: string | null, code: string, message: string) => {
    failures.push({ index, path, error: code, message });
    results[index] = { index, path, status: 'failed', document_id: null, chunks: 0 };
  };

  // Phase 1: read, check, store blobs (in groups: one statement, one commit per group).
  const checked: Checked[] = [];
  const seen = new Set<string>();
  const storing = new Set<Promise<void>>();
  let group: { entry: Checked; content: string }[] = [];
  let groupChars = 0;
  const store = () => {
    const stored = group;
    group = [];
    groupChars = 0;
    const task: Promise<void> = storeGroup(deps, stored, runId)
      .then((failed) => {
        for (const { entry } of stored) {
          if (failed.has(entry)) fail(entry.index, entry.path, 'store_failed', 'the content could not be stored');
          else checked.push(entry);
        }
      })
      .finally(() => storing.delete(task));
    storing.add(task);
  };
  let submitted = 0;
  for await (const element of elements) {
    submitted++;
    const path = 'oversized' in element ? element.path : shortPath((element.value as { path?: unknown } | null)?.path);
    let doc: ReturnType<typeof check>;
    try {
      doc = check(kind, element, seen);
    } catch (error) {
      if (!(error instanceof DocumentFailure)) throw error;
      fail(element.index, path, error.code, error.message);
      continue;
    }
    const { content, ...rest } = doc;
    group.push({ entry: { ...rest, content_sha256: blobKey(content) }, content });
    groupChars += content.length;
    if (groupChars >= BLOB_GROUP_CHARS) {
      store();
      if (storing.size >= BLOB_CONCURRENCY) await Promise.race(storing);
    }
  }
  if (group.length > 0) store();
  await Promise.all(storing);
  checked.sort((a, b) => a.index - b.index);

  // Phase 2: the documents' events, APPEND_GROUP documents per log transaction, without waiting
  // for the projection after each (it then applies many documents per transaction); every
  // WAIT_CHUNKS chunks, and at the end, wait for it to catch up (read-your-writes, and a bound on
  // how far it lags).
  let lastPosition: Position | null = null;
  let unsettled = 0;
  const groups: Checked[][] = [];
  for (let i = 0; i < checked.length; i += APPEND_GROUP) groups.push(checked.slice(i, i + APPEND_GROUP));
  await pooled(groups, APPEND_CONCURRENCY, async (group) => {
    for (const [doc, outcome] of await appendDocuments(deps, kind, runId, group, context)) {
      if (!outcome.ok) {
        if (outcome.error instanceof DomainError) fail(doc.index, doc.path, outcome.error.code, outcome.error.message);
        else {
          deps.log.error('estate_ingest_write_failed', {
            run_id: runId,
            document_id: doc.document_id,
            error: (outcome.error as Error).message,
          });
          fail(doc.index, doc.path, 'store_failed', 'the document could not be stored');
        }
        continue;
      }
      const { events, appended } = outcome.result;
      const chunks = doc.chunks.length / 2;
      results[doc.index] = {
        index: doc.index,
        path: doc.path,
        status: statusOf(events),
        document_id: doc.document_id,
        chunks,
      };
      if (appended) {
        if (!lastPosition || comparePositions(appended.position, lastPosition) > 0) lastPosition = appended.position;
        unsettled += chunks;
      }
    }
    if (unsettled >= WAIT_CHUNKS && lastPosition) {
      unsettled = 0;
      await settle(deps, lastPosition, runId);
    }
  });
  if (lastPosition) await settle(deps, lastPosition, runId);

  failures.sort((a, b) => a.index - b.index);
  const stored = results.filter((r) => r.status !== 'failed');
  const outcome: IngestOutcome = {
    submitted,
    documents: stored.length,
    failed: failures.length,
    status: runStatus(stored.length, failures.length),
    total_chunks: stored.reduce((n, r) => n + r.chunks, 0),
    failures,
    run_id: runId,
    run_recorded: false,
    results,
  };
  try {
    await deps.commands.run(
      ingestRunStream(runId),
      ingestRunDecider,
      {
        type: 'RecordIngestRun',
        run_id: runId,
        kind,
        documents_submitted: submitted,
        documents_succeeded: stored.length,
        documents_failed: failures.length,
        chunks_written: stored
          .filter((r) => r.status === 'created' || r.status === 'updated')
          .reduce((n, r) => n + r.chunks, 0),
        status: outcome.status,
        errors: failures.map(({ path, error, message }) => ({
          path: path === null ? null : storable(path),
          error,
          message: storable(message),
        })),
        started_at: startedAt.toISOString(),
        ended_at: deps.clock.now().toISOString(),
        actor: actor.username,
        actor_id: actor.id,
      },
      context,
    );
    outcome.run_recorded = true;
  } catch (error) {
    deps.log.error('estate_run_record_failed', { run_id: runId, error: (error as Error).message });
  }
  return outcome;
}

type Appended = RunManyOutcome<EstateDocumentState, EstateDocumentEvent>;

/**
 * Append a group of documents' events in one log transaction (each stream still guarded by its
 * own expectation; `runMany`), each document's outcome beside it. When that transaction fails
 * (the database refusing one document's event, say, or EventStoreDB stopping half way through the
 * group), `runMany` settles each document on its own stream: the ones written say so, the others
 * are tried alone, so a failure is its own document's only and none is written twice.
 */
async function appendDocuments(
  deps: EstateDeps,
  kind: RunKind,
  runId: string,
  group: Checked[],
  context: CommandContext,
): Promise<[Checked, Appended][]> {
  const item = (doc: Checked) => ({
    stream: estateDocumentStream(doc.document_id),
    command: {
      type: 'IngestDocument',
      document_id: doc.document_id,
      run_id: runId,
      source_repo: doc.source_repo,
      path: doc.path,
      is_vault: kind === 'vault',
      commit_sha: doc.commit_sha,
      metadata: doc.metadata,
      content_sha256: doc.content_sha256,
      content_chars: doc.content_chars,
      chunks: doc.chunks,
      at: deps.clock.now().toISOString(),
    } as const,
    context,
  });
  try {
    const outcomes = await deps.commands.runMany(estateDocumentDecider, group.map(item), { awaitProjections: false });
    return group.map((doc, i) => [doc, outcomes[i]!]);
  } catch (error) {
    // Refused before anything was written (the write gate of a maintenance window): every document fails.
    return group.map((doc) => [doc, { ok: false, error }]);
  }
}

/**
 * Wait until the documents projection has applied the log up to `position`. A large batch can
 * take longer than one read-your-writes timeout: keep waiting while the projection advances,
 * and give up (the documents are stored; only reading them back may lag) once it stalls.
 */
async function settle(deps: EstateDeps, position: Position, runId: string): Promise<void> {
  let seen = await readCheckpoint(deps.db, estateDocumentsProjection.name);
  for (;;) {
    try {
      await deps.commands.awaitProjections(position, ['EstateDocumentIngested']);
      return;
    } catch (error) {
      if (!(error instanceof ProjectionTimeoutError)) throw error;
      const now = await readCheckpoint(deps.db, estateDocumentsProjection.name);
      if (now && (!seen || comparePositions(now, seen) > 0)) {
        seen = now;
        continue;
      }
      deps.log.warn('estate_ingest_projection_stalled', { run_id: runId, error: error.message });
      return;
    }
  }
}

/**
 * Store a group's contents in one statement; the entries whose content could not be stored. When
 * the group's statement fails, each is tried alone, so one content the database refuses fails
 * only its own document.
 */
async function storeGroup(
  deps: EstateDeps,
  group: { entry: Checked; content: string }[],
  runId: string,
): Promise<Set<Checked>> {
  const failed = new Set<Checked>();
  try {
    await putBlobs(
      deps.db,
      group.map((g) => ({ key: g.entry.content_sha256, text: g.content })),
    );
    return failed;
  } catch {
    // Each alone, below (their errors are logged there).
  }
  for (const { entry, content } of group) {
    try {
      await putBlobs(deps.db, [{ key: entry.content_sha256, text: content }]);
    } catch (error) {
      deps.log.error('estate_blob_write_failed', {
        run_id: runId,
        document_id: entry.document_id,
        error: (error as Error).message,
      });
      failed.add(entry);
    }
  }
  return failed;
}

function statusOf(events: EstateDocumentEvent[]): ResultStatus {
  const event = events[0];
  if (!event) return 'unchanged';
  return event.type === 'EstateDocumentIngested' && event.data.previous_content_sha256 !== null ? 'updated' : 'created';
}

/** The document with this id (a UUID: its route checks the shape), from the read model: 404 `document_not_found`. */
export async function documentOf(deps: Pick<EstateDeps, 'db'>, id: string): Promise<DocumentRow> {
  const document = await documentById(deps.db, id);
  if (!document) throw documentNotFound();
  return document;
}

/** Delete a document and its chunks (a UUID: its route checks the shape): 404 for an unknown one from the decider. */
export async function deleteDocument(deps: EstateDeps, id: string, context: CommandContext): Promise<void> {
  await deps.commands.run(
    estateDocumentStream(id.toLowerCase()),
    estateDocumentDecider,
    { type: 'DeleteDocument', at: deps.clock.now().toISOString() },
    context,
  );
}
