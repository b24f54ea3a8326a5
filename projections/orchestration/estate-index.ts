// The estate search index (see estate-postings.ts for the containers): its writes within one
// projection batch (IndexWriter, used by the `estate_documents` projection in estate.ts), and
// the search that reads it.

import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { and, andNot, changed, hiOf, highest, loOf, or, size, toBits, type PostingSet } from './estate-postings.ts';

/** Lexeme-chunk pairs held before the search index is written (memory bound within a batch). */
const FLUSH_PAIRS = 2_000_000;
const ORDINAL_COUNTER = 'chunk_ordinal';

/** The partitions a live chunk belongs to (see estate_partitions). */
const partitionsOf = (isVault: boolean, category: string) => (isVault ? ['vault'] : ['estate', `c:${category}`]);

/**
 * The search index's writes within one projection batch: new chunk ordinals, lexeme postings
 * (added only), partition membership (added and removed). Held in memory and written at
 * `flush`, one read and one write per touched container.
 */
export class IndexWriter {
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
