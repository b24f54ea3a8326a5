// The `knowledge_snippets` read model (per-bot knowledge), its inverted index `knowledge_terms`,
// and the ranked search over them: the one retrieval function, which the knowledge search route
// and the chat pipeline's grounding (top 5) both call (`searchKnowledge`).
//
// Retrieval:
// - The query is lexed by PostgreSQL with the same English configuration as the snippets
//   (`to_tsvector('english', q)`: stemming, stop words dropped), and its lexemes are ORed: a
//   snippet holding any of them is a hit. The user's text is never parsed as tsquery syntax, so
//   `&|!():*'"\` and any unicode are plain text. Control characters (NUL included: PostgreSQL
//   stores none) are blanked first, and only the first SEARCH_QUERY_MAX_CHARS characters count.
// - Score: `ts_rank_cd` of the ORed lexemes over the snippet's weighted vector, with weights
//   title (A) 1.0 over content (B) 0.4 and normalisation 1 (divided by the natural log of 1 + the
//   snippet's indexed word count): each occurrence of a query word adds its weight. For an ORed
//   query that is exactly the sum of each lexeme's own ts_rank_cd, which the projection stores
//   per snippet and lexeme (`knowledge_terms`) when the snippet is written; a search adds those
//   up, and a one-word search reads its best snippets from the index in score order.
// - Floor: hits scoring below SEARCH_FLOOR (0.075) are not returned. In practice that drops
//   exactly one kind of hit: a query word occurring once, only in the content (not the title), of
//   a snippet with more than about 200 indexed words (0.4 / ln(1 + 206) = 0.075), a passing
//   mention too weak to ground a reply on. A title hit, or two content hits, always clear it.
// - Ties (equal scores) list the newer snippet first.

import { KNOWLEDGE_EVENT_TYPES, type SnippetFields } from '../../domain/orchestration/knowledge/events.ts';
import type { AgentProfileStreamEvent } from '../../domain/orchestration/profiles/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const SEARCH_FLOOR = 0.075;
export const SEARCH_QUERY_MAX_CHARS = 500;
/** Grounding in replies takes this many hits (spec: Limits). */
export const GROUNDING_HITS = 5;
/** Most hits one search returns (spec: Limits, bot knowledge search `limit` 1-50). */
export const SEARCH_MAX_HITS = 50;

// The lexeme as a one-word tsquery: quoted (quotes doubled, backslashes escaped), never parsed.
const LEXEME_QUERY = (lexeme: string) =>
  `('''' || replace(replace(${lexeme}, '\\', '\\\\'), '''', '''''') || '''')::tsquery`;
const WEIGHTS = `'{0.1, 0.2, 0.4, 1.0}'::real[]`;

/** (Re)compute a snippet's rows of the inverted index from its `search` vector. */
async function indexTerms(tx: PoolClient, snippetId: string): Promise<void> {
  await tx.query('DELETE FROM knowledge_terms WHERE snippet_id = $1', [snippetId]);
  await tx.query(
    `INSERT INTO knowledge_terms (snippet_id, lexeme, profile_id, revision, score)
     SELECT k.id, t.lexeme, k.profile_id, k.revision, ts_rank_cd(${WEIGHTS}, k.search, ${LEXEME_QUERY('t.lexeme')}, 1)
     FROM knowledge_snippets k, unnest(tsvector_to_array(k.search)) AS t(lexeme)
     WHERE k.id = $1`,
    [snippetId],
  );
}

export const knowledgeSnippetsProjection = defineProjection<AgentProfileStreamEvent>({
  name: 'knowledge_snippets',
  handles: KNOWLEDGE_EVENT_TYPES,
  tables: ['knowledge_snippets', 'knowledge_terms'],
  async apply(event, tx) {
    switch (event.type) {
      case 'KnowledgeSnippetAdded': {
        const d = event.data;
        await tx.query(
          `INSERT INTO knowledge_snippets (id, profile_id, revision, title, content, source, metadata, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [
            d.snippet_id,
            d.profile_id,
            event.revision.toString(),
            d.title,
            d.content,
            d.source ?? null,
            d.metadata == null ? null : JSON.stringify(d.metadata),
            d.at,
          ],
        );
        await indexTerms(tx, d.snippet_id);
        return;
      }
      case 'KnowledgeSnippetUpdated': {
        const c = event.data.changes;
        // Each field is set only when the event changed it (an absent key keeps the column).
        await tx.query(
          `UPDATE knowledge_snippets SET
             title = CASE WHEN $3 THEN $4 ELSE title END,
             content = CASE WHEN $5 THEN $6 ELSE content END,
             source = CASE WHEN $7 THEN $8 ELSE source END,
             metadata = CASE WHEN $9 THEN $10::jsonb ELSE metadata END,
             updated_at = $2
           WHERE id = $1`,
          [
            event.data.snippet_id,
            event.data.at,
            'title' in c,
            c.title ?? null,
            'content' in c,
            c.content ?? null,
            'source' in c,
            c.source ?? null,
            'metadata' in c,
            c.metadata == null ? null : JSON.stringify(c.metadata),
          ],
        );
        if ('title' in c || 'content' in c) await indexTerms(tx, event.data.snippet_id);
        return;
      }
      case 'KnowledgeSnippetDeleted':
        await tx.query('DELETE FROM knowledge_terms WHERE snippet_id = $1', [event.data.snippet_id]);
        await tx.query('DELETE FROM knowledge_snippets WHERE id = $1', [event.data.snippet_id]);
        return;
      default:
        return;
    }
  },
});

// --- queries ---------------------------------------------------------------------------------

export type SnippetRow = SnippetFields & {
  id: string;
  profile_id: string;
  created_at: Date;
  updated_at: Date;
};

const COLUMNS = 'k.id, k.profile_id, k.title, k.content, k.source, k.metadata, k.created_at, k.updated_at';
// Newest first; snippets added in one append share `created_at`, and their stream revision orders them.
const NEWEST_FIRST = 'created_at DESC, revision DESC';

/** A profile's snippets, newest first; `titleContains` is a literal, case-insensitive substring. */
export async function listSnippets(pool: Pool, profileId: string, titleContains?: string): Promise<SnippetRow[]> {
  if (titleContains) {
    return (
      await pool.query<SnippetRow>(
        `SELECT ${COLUMNS} FROM knowledge_snippets k WHERE profile_id = $1 AND strpos(lower(title), lower($2)) > 0 ORDER BY ${NEWEST_FIRST}`,
        [profileId, titleContains],
      )
    ).rows;
  }
  return (
    await pool.query<SnippetRow>(
      `SELECT ${COLUMNS} FROM knowledge_snippets k WHERE profile_id = $1 ORDER BY ${NEWEST_FIRST}`,
      [profileId],
    )
  ).rows;
}

/** One snippet of this profile; another profile's snippet (or a malformed id) is not found. */
export async function snippetOf(pool: Pool, profileId: string, id: string): Promise<SnippetRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  return (
    (
      await pool.query<SnippetRow>(`SELECT ${COLUMNS} FROM knowledge_snippets k WHERE id = $1 AND profile_id = $2`, [
        id,
        profileId,
      ])
    ).rows[0] ?? null
  );
}

export type SearchHit = SnippetRow & { score: number };

/** The query text as searched: control characters (NUL included) blanked, at most SEARCH_QUERY_MAX_CHARS characters. */
export function searchableText(q: string): string {
  return Array.from(q.replace(/[\u0000-\u001f\u007f]/g, ' '))
    .slice(0, SEARCH_QUERY_MAX_CHARS)
    .join('')
    .trim();
}

// $2's lexemes; one of them: its best snippets straight from the index, in score order; more:
// each snippet's scores of those lexemes added up. Only one branch runs (a one-time filter).
const SEARCH_SQL = `
WITH q AS MATERIALIZED (
  SELECT tsvector_to_array(to_tsvector('english'::regconfig, $2::text)) AS lexemes
),
one AS (
  SELECT t.snippet_id, t.score::float8 AS score, t.revision FROM knowledge_terms t
  WHERE (SELECT cardinality(lexemes) FROM q) = 1 AND t.profile_id = $1 AND t.lexeme = (SELECT lexemes[1] FROM q) AND t.score >= $3
  ORDER BY t.score DESC, t.revision DESC LIMIT $4
),
many AS (
  SELECT t.snippet_id, sum(t.score::float8) AS score, max(t.revision) AS revision FROM knowledge_terms t
  WHERE (SELECT cardinality(lexemes) FROM q) > 1 AND t.profile_id = $1 AND t.lexeme = ANY((SELECT lexemes FROM q)::text[])
  GROUP BY t.snippet_id HAVING sum(t.score::float8) >= $3
  ORDER BY 2 DESC, 3 DESC LIMIT $4
)
SELECT ${COLUMNS}, round(h.score::numeric, 6)::float8 AS score
FROM (SELECT * FROM one UNION ALL SELECT * FROM many) h JOIN knowledge_snippets k ON k.id = h.snippet_id
ORDER BY h.score DESC, h.revision DESC`;

/**
 * Ranked knowledge of one profile for a free-text query: at most `limit` hits, relevance
 * descending, none below SEARCH_FLOOR. Any text is a safe query (an empty one finds nothing).
 */
export async function searchKnowledge(pool: Pool, profileId: string, q: string, limit: number): Promise<SearchHit[]> {
  const text = searchableText(q);
  if (!text) return [];
  const hits = Math.min(SEARCH_MAX_HITS, Math.max(1, Math.trunc(limit) || 1));
  const { rows } = await pool.query<SearchHit>({
    name: 'orchard_knowledge_search',
    text: SEARCH_SQL,
    values: [profileId, text, SEARCH_FLOOR, hits],
  });
  return rows;
}
