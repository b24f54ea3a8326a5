// Request and response schemas of the estate knowledge routes (spec 1, "Estate knowledge").

import { z } from '@hono/zod-openapi';
import { uuidParams } from '../../shared/params.ts';
import {
  MAX_COMMIT_SHA_CHARS,
  MAX_CONTENT_CHARS,
  MAX_DOCUMENTS_PER_BATCH,
  MAX_PATH_CHARS,
} from '../../../domain/orchestration/estate/decider.ts';

// --- ingest and vault ---------------------------------------------------------------------

const metadata = z
  .record(z.string(), z.unknown())
  .nullable()
  .optional()
  .openapi({ description: 'free-form JSON object kept with the document (at most 16,384 characters serialized)' });

/** One document of an ingest batch; checked one by one, so a bad one fails alone. */
export const IngestDocument = z.strictObject({
  source_repo: z
    .string()
    .openapi({ description: 'repository the document comes from; `vault` is reserved', example: 'infra-docs' }),
  path: z.string().openapi({
    description: `relative path, / separated, at most ${MAX_PATH_CHARS} characters; its first segment is the category`,
    example: 'runbooks/deploy.md',
  }),
  content: z.string().openapi({ description: `1 to ${MAX_CONTENT_CHARS} characters` }),
  commit_sha: z.string().max(MAX_COMMIT_SHA_CHARS).nullable().optional(),
  metadata,
});

/** One document of a vault batch: stored with source_repo `vault`. */
export const VaultDocument = z.strictObject({
  path: z.string().openapi({ example: 'customers/acme/contract-notes.md' }),
  content: z.string(),
  metadata,
});

export const IngestBody = z
  .strictObject({
    documents: z.array(IngestDocument).min(1).max(MAX_DOCUMENTS_PER_BATCH),
  })
  .openapi('EstateIngestBody');

export const VaultBody = z
  .strictObject({
    documents: z.array(VaultDocument).min(1).max(MAX_DOCUMENTS_PER_BATCH),
  })
  .openapi('EstateVaultBody');

const Failure = z.object({
  index: z.number().int().openapi({ description: 'position of the document in the batch' }),
  path: z.string().nullable(),
  error: z.string().openapi({ description: 'machine-readable reason', example: 'content_too_long' }),
  message: z.string(),
});

const Result = z.object({
  index: z.number().int(),
  path: z.string().nullable(),
  status: z.enum(['created', 'updated', 'unchanged', 'failed']),
  document_id: z.uuid().nullable(),
  chunks: z.number().int(),
});

export const IngestResponse = z
  .object({
    submitted: z.number().int(),
    documents: z.number().int().openapi({ description: 'stored: created + updated + unchanged' }),
    failed: z.number().int(),
    status: z.enum(['ok', 'partial', 'failed']),
    total_chunks: z.number().int().openapi({ description: 'chunks of the stored documents (unchanged ones included)' }),
    failures: z.array(Failure),
    run_id: z.uuid(),
    run_recorded: z.boolean().openapi({ description: 'true once the run is in the log' }),
    results: z.array(Result),
  })
  .openapi('EstateIngestResult');

// --- search -------------------------------------------------------------------------------

export const SEARCH_DEFAULT_LIMIT = 6;
export const SEARCH_MAX_LIMIT = 100;
export const MAX_QUERY_CHARS = 2000;

const intOrNothing = z
  .string()
  .optional()
  .transform((v) => {
    if (v === undefined || v.trim() === '' || !/^[+-]?\d+$/.test(v.trim())) return undefined;
    return Number(v.trim());
  });

export const SearchQuery = z.object({
  q: z
    .string()
    .optional()
    .openapi({
      description: `the search text (required, at most ${MAX_QUERY_CHARS} characters); any text is a safe query`,
    }),
  limit: intOrNothing.openapi({
    description: `hits to return: default ${SEARCH_DEFAULT_LIMIT}, clamped to 1-${SEARCH_MAX_LIMIT}`,
    type: 'integer',
  }),
  k: intOrNothing.openapi({ description: 'alias of limit (limit wins when both are given)', type: 'integer' }),
  scope: z
    .string()
    .optional()
    .openapi({ description: 'a category (first path segment), or `vault` for the customer vault' }),
  match: z.string().optional().openapi({ description: '`any` (default: OR of the words) or `all` (AND)' }),
});

const Hit = z.object({
  document_id: z.uuid(),
  chunk_id: z.uuid(),
  source_repo: z.string(),
  path: z.string(),
  category: z.string(),
  chunk_index: z.number().int(),
  score: z.number(),
  content: z.string(),
  snippet: z.string().openapi({ description: 'a short extract with the matched words between ** and **' }),
});

export const SearchResponse = z
  .object({
    query: z.string(),
    scope: z.string().nullable(),
    match_mode: z.enum(['any', 'all']),
    count: z.number().int(),
    total_matches: z.number().int(),
    limit: z.number().int(),
    max_limit: z.number().int(),
    limit_clamped: z.boolean(),
    truncated: z.boolean(),
    hits: z.array(Hit),
  })
  .openapi('EstateSearchResult');

// --- corpus, documents, runs ---------------------------------------------------------------

const Group = z.object({
  key: z.string(),
  documents: z.number().int(),
  chunks: z.number().int(),
  last_ingest_at: z.string().nullable(),
});

export const CorpusResponse = z
  .object({
    documents: z.number().int(),
    chunks: z.number().int(),
    token_estimate: z.number().int().openapi({ description: 'about 4 characters per token' }),
    vault_documents: z.number().int(),
    vault_chunks: z.number().int(),
    last_ingest_at: z.string().nullable(),
    by_source_repo: z.array(Group),
    by_category: z.array(Group),
  })
  .openapi('EstateCorpus');

export const PathsQuery = z.object({
  source_repo: z
    .string()
    .optional()
    .openapi({ description: 'one repository (`vault` lists the vault); default: every estate repository' }),
});

export const PathsResponse = z
  .object({
    paths: z.array(z.object({ path: z.string(), source_repo: z.string(), document_id: z.uuid() })),
  })
  .openapi('EstatePaths');

export const DocsQuery = z.object({
  category: z.string().optional(),
  scope: z.string().optional().openapi({ description: "`vault` lists the vault's documents instead of the estate's" }),
});

export const DocumentView = z
  .object({
    id: z.uuid(),
    source_repo: z.string(),
    path: z.string(),
    category: z.string(),
    commit_sha: z.string().nullable(),
    ingested_at: z.string(),
    chunks: z.number().int(),
  })
  .openapi('EstateDocument');

export const DocsResponse = z.object({ documents: z.array(DocumentView) }).openapi('EstateDocuments');

export const DocumentDetail = z
  .object({
    document: DocumentView.extend({
      is_vault: z.boolean(),
      content_sha256: z.string(),
      content_chars: z.number().int(),
      metadata: z.record(z.string(), z.unknown()).nullable(),
    }),
    chunks: z.array(z.object({ chunk_id: z.uuid(), chunk_index: z.number().int(), content: z.string() })),
  })
  .openapi('EstateDocumentDetail');

export const DocIdParam = uuidParams('id');

export const RUNS_DEFAULT_LIMIT = 20;
export const RUNS_MAX_LIMIT = 200;

export const RunsQuery = z.object({
  limit: intOrNothing.openapi({
    description: `default ${RUNS_DEFAULT_LIMIT}, clamped to 1-${RUNS_MAX_LIMIT}`,
    type: 'integer',
  }),
});

const Run = z.object({
  run_id: z.uuid(),
  kind: z.enum(['ingest', 'vault']),
  documents_submitted: z.number().int(),
  documents_succeeded: z.number().int(),
  documents_failed: z.number().int(),
  chunks_written: z.number().int(),
  status: z.enum(['ok', 'partial', 'failed']),
  errors: z.array(z.object({ path: z.string().nullable(), error: z.string(), message: z.string() })),
  started_at: z.string(),
  ended_at: z.string(),
  actor: z.string().openapi({ description: 'username of the caller' }),
});

export const RunsResponse = z
  .object({ runs: z.array(Run), last_incomplete_run: z.uuid().nullable() })
  .openapi('EstateIngestStatus');
