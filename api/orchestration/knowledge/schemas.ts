// Request and response schemas of the bot knowledge slice. Title and content lengths count
// characters (code points), as the domain does, not UTF-16 units.

import { z } from '@hono/zod-openapi';
import { clampInt } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';
import { CONTENT_MAX, TITLE_MAX, charCount } from '../../../domain/orchestration/knowledge/decisions.ts';
import { SEARCH_MAX_HITS } from '../../../projections/orchestration/knowledge.ts';

const chars = (field: string, max: number) =>
  z
    .string()
    .refine((s) => charCount(s) >= 1 && charCount(s) <= max, `${field} must be 1-${max} characters`)
    .openapi({ minLength: 1, maxLength: max, description: `1-${max} characters (code points)` });

const title = chars('title', TITLE_MAX);
const content = chars('content', CONTENT_MAX).openapi({
  description: `1-${CONTENT_MAX} characters (code points); sent to the model verbatim`,
});
const source = z.string().max(2000).nullable().openapi({ description: 'free-text provenance' });
/** Metadata is bounded so every snippet event stays far below the log's 1 MiB event limit (EventStoreDB's default). */
export const METADATA_MAX_BYTES = 64 * 1024;
const metadata = z
  .record(z.string(), z.unknown())
  .refine(
    (m) => Buffer.byteLength(JSON.stringify(m)) <= METADATA_MAX_BYTES,
    `metadata must be at most ${METADATA_MAX_BYTES / 1024} KiB as JSON`,
  )
  .nullable()
  .openapi({ description: `arbitrary JSON object, at most ${METADATA_MAX_BYTES / 1024} KiB as JSON` });

export const CreateSnippetBody = z
  .strictObject({ title, content, source: source.optional(), metadata: metadata.optional() })
  .openapi('CreateKnowledgeSnippetRequest');
export const PatchSnippetBody = z
  .strictObject({
    title: title.optional(),
    content: content.optional(),
    source: source.optional(),
    metadata: metadata.optional(),
  })
  .openapi('PatchKnowledgeSnippetRequest');

export const Snippet = z
  .object({
    id: z.uuid(),
    profile_id: z.uuid(),
    title: z.string(),
    content: z.string(),
    source: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('KnowledgeSnippet');

export const SearchHit = Snippet.extend({
  score: z.number().openapi({ description: 'ts_rank_cd relevance; never below the floor (0.075)' }),
}).openapi('KnowledgeSearchHit');

/** A repeated query parameter arrives as an array: the first value counts. */
const first = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (Array.isArray(v) ? v[0] : v));

export const SEARCH_LIMIT = { defaultLimit: 5, maxLimit: SEARCH_MAX_HITS };

export const ListQuery = z.object({
  title_contains: first.openapi({
    type: 'string',
    description: 'a literal, case-insensitive substring of the title (% and _ are not wildcards)',
  }),
});

export const SearchQuery = z.object({
  q: first
    .refine((v) => v !== undefined && v.trim() !== '', 'q is required: the text to search for')
    .openapi({ type: 'string', description: 'free text; its words are ORed, English stemming' }),
  limit: first
    .transform((v) =>
      clampInt(Number.parseInt(v ?? '', 10), { default: SEARCH_LIMIT.defaultLimit, max: SEARCH_LIMIT.maxLimit }),
    )
    .openapi({ type: 'integer', description: 'default 5, clamped to 1-50 (never refused)' }),
});

export const ProfileIdParam = uuidParams('profile_id');
export const SnippetParams = uuidParams('profile_id', 'id');
