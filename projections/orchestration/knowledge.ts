// The `knowledge_snippets` read model (per-bot knowledge) and its ranked search, the one
// retrieval function: the knowledge search route and the chat pipeline's grounding (top 5) both
// call `searchKnowledge`.
//
// Retrieval:
// - The query is lexed by PostgreSQL with the same English configuration as the index
//   (`to_tsvector('english', q)`: stemming, stop words dropped), and its lexemes are ORed: a
//   snippet matching any of them is a candidate. Each lexeme becomes a tsquery by a quoted cast,
//   never by parsing the user's text as tsquery syntax, so `&|!():*'"\` and any unicode are
//   plain text here. NUL and other control characters are blanked first (PostgreSQL stores no
//   NUL), and only the first SEARCH_QUERY_MAX_CHARS characters count.
// - Score: `ts_rank_cd` with weights title (A) 1.0 over content (B) 0.4, normalisation 1 (divided
//   by the natural log of 1 + the snippet's indexed word count). For an OR query each occurrence
//   of a query word adds its weight.
// - Floor: hits scoring below SEARCH_FLOOR (0.075) are not returned. In practice that drops
//   exactly one kind of hit: a query word occurring once, only in the content (not the title), of
//   a snippet with more than about 200 indexed words (0.4 / ln(1 + 206) = 0.075), a passing
//   mention too weak to ground a reply on. A title hit, or two content hits, always clear it.

import type { SnippetFields } from '../../domain/orchestration/knowledge/decider.ts';
import type { AgentProfileStreamEvent } from '../../domain/orchestration/profiles/decider.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/projections/engine.ts';
import { AGENT_PROFILE_STREAM_TYPES } from './profiles.ts';

export const SEARCH_FLOOR = 0.075;
export const SEARCH_QUERY_MAX_CHARS = 500;
/** Grounding in replies takes this many hits (spec: Limits). */
export const GROUNDING_HITS = 5;

export const knowledgeSnippetsProjection = defineProjection<AgentProfileStreamEvent>({
  name: 'knowledge_snippets',
  // Every type of the profile streams, profile events ignored: see AGENT_PROFILE_STREAM_TYPES.
  handles: AGENT_PROFILE_STREAM_TYPES,
  tables: ['knowledge_snippets'],
  async apply(event, tx) {
    switch (event.type) {
      case 'KnowledgeSnippetAdded': {
        const d = event.data;
        await tx.query(
          `INSERT INTO knowledge_snippets (id, profile_id, revision, title, content, source, metadata, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [d.snippet_id, d.profile_id, event.revision.toString(), d.title, d.content, d.source ?? null, d.metadata == null ? null : JSON.stringify(d.metadata), d.at]);
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
          [event.data.snippet_id, event.data.at, 'title' in c, c.title ?? null, 'content' in c, c.content ?? null,
            'source' in c, c.source ?? null, 'metadata' in c, c.metadata == null ? null : JSON.stringify(c.metadata)]);
        return;
      }
      case 'KnowledgeSnippetDeleted':
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

const COLUMNS = 'id, profile_id, title, content, source, metadata, created_at, updated_at';
// Newest first; snippets added in one append share `created_at`, and their stream revision orders them.
const NEWEST_FIRST = 'created_at DESC, revision DESC';

/** A profile's snippets, newest first; `titleContains` is a literal, case-insensitive substring. */
export async function listSnippets(pool: Pool, profileId: string, titleContains?: string): Promise<SnippetRow[]> {
  if (titleContains) {
    return (await pool.query<SnippetRow>(
      `SELECT ${COLUMNS} FROM knowledge_snippets WHERE profile_id = $1 AND strpos(lower(title), lower($2)) > 0 ORDER BY ${NEWEST_FIRST}`,
      [profileId, titleContains])).rows;
  }
  return (await pool.query<SnippetRow>(`SELECT ${COLUMNS} FROM knowledge_snippets WHERE profile_id = $1 ORDER BY ${NEWEST_FIRST}`, [profileId])).rows;
}

/** One snippet of this profile; another profile's snippet (or a malformed id) is not found. */
export async function snippetOf(pool: Pool, profileId: string, id: string): Promise<SnippetRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  return (await pool.query<SnippetRow>(`SELECT ${COLUMNS} FROM knowledge_snippets WHERE id = $1 AND profile_id = $2`, [id, profileId])).rows[0] ?? null;
}

export type SearchHit = SnippetRow & { score: number };

/** The query text as searched: control characters (NUL included) blanked, at most SEARCH_QUERY_MAX_CHARS characters. */
export function searchableText(q: string): string {
  // eslint-disable-next-line no-control-regex
  return Array.from(q.replace(/[\u0000-\u001f\u007f]/g, ' ')).slice(0, SEARCH_QUERY_MAX_CHARS).join('').trim();
}

// The lexemes of $2 ORed into one tsquery; each lexeme is cast as a quoted tsquery literal
// (quotes doubled, backslashes escaped), so nothing of the text is read as tsquery operators.
const SEARCH_SQL = `
WITH q AS MATERIALIZED (
  SELECT tsquery_or_agg(('''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery) AS query
  FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, $2::text))) AS lexeme
)
SELECT ${COLUMNS}, score FROM (
  SELECT k.*, ts_rank_cd('{0.1, 0.2, 0.4, 1.0}'::real[], k.search, (SELECT query FROM q), 1) AS score
  FROM knowledge_snippets k
  WHERE k.profile_id = $1 AND k.search @@ (SELECT query FROM q)
  OFFSET 0
) ranked
WHERE score >= $3
ORDER BY score DESC, ${NEWEST_FIRST}
LIMIT $4`;

/**
 * Ranked knowledge of one profile for a free-text query: at most `limit` hits, relevance
 * descending, none below SEARCH_FLOOR. Any text is a safe query (an empty one finds nothing).
 */
export async function searchKnowledge(pool: Pool, profileId: string, q: string, limit: number): Promise<SearchHit[]> {
  const text = searchableText(q);
  if (!text) return [];
  const { rows } = await pool.query<SearchHit>({ name: 'orchard_knowledge_search', text: SEARCH_SQL, values: [profileId, text, SEARCH_FLOOR, limit] });
  return rows;
}
