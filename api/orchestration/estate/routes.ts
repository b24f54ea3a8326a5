// Estate knowledge (spec 1, "Estate knowledge"): batch ingest and the customer vault (writes,
// role user or higher), search, corpus, documents and runs (any signed-in caller). Every route
// has its web-UI mirror under /api/knowledge/... (browser sessions; the same role checks).

import { createRoute, z } from '@hono/zod-openapi';
import { clampInt } from '../../shared/pagination.ts';
import type { Context } from 'hono';
import { MAX_DOCUMENTS_PER_BATCH, VAULT_REPO } from '../../../domain/orchestration/estate/decider.ts';
import type { RunKind } from '../../../domain/orchestration/estate/events.ts';
import {
  chunksOf,
  corpus,
  listDocuments,
  listPaths,
  recentRuns,
  type DocumentRow,
} from '../../../projections/orchestration/estate.ts';
import { search, type MatchMode } from '../../../projections/orchestration/estate-index.ts';
import { MiB } from '../../shared/body-limit.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { ok } from '../../shared/openapi.ts';
import { bodyLimit } from '../../shared/route-policy.ts';
import { actorOf, principalUser, requireKey, requireRole } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { batchElements } from './batch-body.ts';
import { deleteDocument, documentOf, ingestBatch } from './commands.ts';
import {
  CorpusResponse,
  DocIdParam,
  DocsQuery,
  DocsResponse,
  DocumentDetail,
  IngestBody,
  IngestResponse,
  MAX_QUERY_CHARS,
  PathsQuery,
  PathsResponse,
  RUNS_DEFAULT_LIMIT,
  RUNS_MAX_LIMIT,
  RunsQuery,
  RunsResponse,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SearchQuery,
  SearchResponse,
  VaultBody,
} from './schemas.ts';

/**
 * Request body limit of the two batch routes (and their mirrors), read as a stream (route-policy.ts):
 * 500 documents of 500,000 characters at up to 3 bytes of UTF-8 each is 750,000,000 bytes;
 * 768 MiB leaves room for paths, metadata and JSON escapes. The body is read as a stream, one
 * document at a time, so the limit bounds the upload, not the memory used.
 */
export const KNOWLEDGE_BATCH_BODY_LIMIT = 768 * MiB;
/** An element of the array this long cannot be a valid document (content ≤ 500,000 characters, ≤ 6 bytes each escaped). */
const MAX_ELEMENT_BYTES = 4 * MiB;

const tags = ['estate knowledge'];
const WRITE_ERRORS = { ...AUTH_ERRORS, 403: 'insufficient_role (a readonly account)' };
const BATCH_ERRORS = {
  ...WRITE_ERRORS,
  400: 'validation_failed (no documents, more than 500, unknown top-level field) or invalid_json; nothing is written',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** The OpenAPI form of a streamed body: documented, but not validated whole by a middleware. */
function streamedBody(schema: z.ZodType, description: string) {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return { required: true, description, content: { 'application/json': { schema: json } } };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const documentView = (d: DocumentRow) => ({
  id: d.id,
  source_repo: d.source_repo,
  path: d.path,
  category: d.category,
  commit_sha: d.commit_sha,
  ingested_at: d.ingested_at.toISOString(),
  chunks: d.chunks,
});

export function estateRoutes(deps: OrchDeps) {
  const app = orchRouter();

  const batch = async (c: Context<OrchEnv>, kind: RunKind) => {
    if (!/^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(c.req.header('content-type') ?? '')) {
      throw new ApiError(415, 'unsupported_media_type', 'the body must be application/json');
    }
    const user = principalUser(c);
    const elements = batchElements(c.req.raw.body, {
      key: 'documents',
      maxBytes: KNOWLEDGE_BATCH_BODY_LIMIT,
      maxElements: MAX_DOCUMENTS_PER_BATCH,
      maxElementBytes: MAX_ELEMENT_BYTES,
    });
    const outcome = await ingestBatch(deps, kind, elements, actorOf(c), { username: user.username, id: user.id });
    return c.json(outcome, 200);
  };

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/knowledge/ingest',
      tags,
      middleware: [requireRole('user'), bodyLimit(KNOWLEDGE_BATCH_BODY_LIMIT, { streamed: true })] as const,
      summary:
        'Ingest a batch of estate documents (upsert on source_repo and path); each document succeeds or fails alone',
      request: {
        body: streamedBody(
          IngestBody,
          `1-${MAX_DOCUMENTS_PER_BATCH} documents; read as a stream, at most ${KNOWLEDGE_BATCH_BODY_LIMIT} bytes`,
        ),
      },
      responses: {
        200: ok(IngestResponse, 'what was stored and what failed, and the run'),
        ...orchErrors(BATCH_ERRORS),
      },
    }),
    (c) => batch(c, 'ingest'),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/knowledge/vault',
      tags,
      middleware: [requireRole('user'), bodyLimit(KNOWLEDGE_BATCH_BODY_LIMIT, { streamed: true })] as const,
      summary: 'Store customer-vault documents (source_repo `vault`), searchable only with scope=vault',
      request: {
        body: streamedBody(
          VaultBody,
          `1-${MAX_DOCUMENTS_PER_BATCH} documents; read as a stream, at most ${KNOWLEDGE_BATCH_BODY_LIMIT} bytes`,
        ),
      },
      responses: {
        200: ok(IngestResponse, 'what was stored and what failed, and the run (kind vault)'),
        ...orchErrors(BATCH_ERRORS),
      },
    }),
    (c) => batch(c, 'vault'),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/knowledge/search',
      tags,
      middleware: [requireKey()] as const,
      summary: 'Ranked full-text search over the estate (or the vault with scope=vault)',
      request: { query: SearchQuery },
      responses: {
        200: ok(SearchResponse, 'the best hits and the exact number of matches'),
        ...orchErrors({ ...AUTH_ERRORS, 400: 'validation_failed (q missing or too long, match not any or all)' }),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const q = query.q ?? '';
      if (q.trim() === '') throw new ApiError(400, 'validation_failed', 'q: required');
      if (q.length > MAX_QUERY_CHARS)
        throw new ApiError(400, 'validation_failed', `q: at most ${MAX_QUERY_CHARS} characters`);
      if (q.includes('\u0000'))
        throw new ApiError(400, 'validation_failed', 'strings must not contain NUL (\\u0000) characters');
      const given = query.match === undefined || query.match === '' ? 'any' : query.match;
      if (given !== 'any' && given !== 'all') throw new ApiError(400, 'validation_failed', 'match: must be any or all');
      const match: MatchMode = given;
      const requested = query.limit ?? query.k;
      const limit = clampInt(requested, { default: SEARCH_DEFAULT_LIMIT, max: SEARCH_MAX_LIMIT });
      const scope = query.scope === undefined || query.scope === '' ? null : query.scope;
      const vault = scope === VAULT_REPO;
      const { total, hits } = await search(deps.db, { q, match, vault, category: vault ? null : scope, limit });
      return c.json(
        {
          query: q,
          scope,
          match_mode: match,
          count: hits.length,
          total_matches: total,
          limit,
          max_limit: SEARCH_MAX_LIMIT,
          limit_clamped: requested !== undefined && requested !== limit,
          truncated: total > hits.length,
          hits,
        },
        200,
      );
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/knowledge/corpus',
      tags,
      middleware: [requireKey()] as const,
      summary: 'Corpus totals, by source repository and by category; the vault counted apart',
      responses: { 200: ok(CorpusResponse, 'the corpus'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const k = await corpus(deps.db);
      const group = (g: (typeof k.by_category)[number]) => ({ ...g, last_ingest_at: iso(g.last_ingest_at) });
      return c.json(
        {
          documents: k.documents,
          chunks: k.chunks,
          token_estimate: Math.ceil(k.content_chars / 4),
          vault_documents: k.vault_documents,
          vault_chunks: k.vault_chunks,
          last_ingest_at: iso(k.last_ingest_at),
          by_source_repo: k.by_source_repo.map(group),
          by_category: k.by_category.map(group),
        },
        200,
      );
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/knowledge/corpus/paths',
      tags,
      middleware: [requireKey()] as const,
      summary: 'Every stored (source_repo, path) pair, of one repository or of the whole estate',
      request: { query: PathsQuery },
      responses: { 200: ok(PathsResponse, 'the paths'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const sourceRepo = c.req.valid('query').source_repo;
      return c.json({ paths: await listPaths(deps.db, sourceRepo === '' ? undefined : sourceRepo) }, 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/knowledge/docs',
      tags,
      middleware: [requireKey()] as const,
      summary: "One row per document, optionally of one category (scope=vault: the vault's documents)",
      request: { query: DocsQuery },
      responses: { 200: ok(DocsResponse, 'the documents'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const { category, scope } = c.req.valid('query');
      const rows = await listDocuments(deps.db, {
        vault: scope === VAULT_REPO,
        category: category === '' ? undefined : category,
      });
      return c.json({ documents: rows.map(documentView) }, 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/knowledge/doc/{id}',
      tags,
      middleware: [requireKey()] as const,
      summary: 'A document and its chunks in order',
      request: { params: DocIdParam },
      responses: {
        200: ok(DocumentDetail, 'the document'),
        ...orchErrors({ ...AUTH_ERRORS, 404: 'document_not_found' }),
      },
    }),
    async (c) => {
      const id = c.req.valid('param').id;
      const document = await documentOf(deps, id);
      const chunks = await chunksOf(deps.db, id);
      return c.json(
        {
          document: {
            ...documentView(document),
            is_vault: document.is_vault,
            content_sha256: document.content_sha256,
            content_chars: document.content_chars,
            metadata: document.metadata,
          },
          chunks,
        },
        200,
      );
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'delete',
      path: '/api/v1/knowledge/doc/{id}',
      tags,
      middleware: [requireRole('user')] as const,
      summary: 'Delete a document and its chunks',
      request: { params: DocIdParam },
      responses: { 204: { description: 'deleted' }, ...orchErrors({ ...WRITE_ERRORS, 404: 'document_not_found' }) },
    }),
    async (c) => {
      await deleteDocument(deps, c.req.valid('param').id, actorOf(c));
      return c.body(null, 204);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/knowledge/ingest/status',
      tags,
      middleware: [requireKey()] as const,
      summary: 'Recent ingest and vault runs, newest first, and the latest run that was not ok',
      request: { query: RunsQuery },
      responses: { 200: ok(RunsResponse, 'the runs'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const requested = c.req.valid('query').limit;
      const limit = clampInt(requested, { default: RUNS_DEFAULT_LIMIT, max: RUNS_MAX_LIMIT });
      const { runs, lastIncomplete } = await recentRuns(deps.db, limit);
      return c.json(
        {
          runs: runs.map(({ actor_id: _id, ...r }) => ({
            ...r,
            started_at: r.started_at.toISOString(),
            ended_at: r.ended_at.toISOString(),
          })),
          last_incomplete_run: lastIncomplete,
        },
        200,
      );
    },
  );

  return app;
}
