// Column helpers for the registry's queries: rows come out in the API's shapes (ISO timestamps
// in UTC with milliseconds, dates as YYYY-MM-DD, numbers as numbers), so routes do no mapping.

/** A timestamptz column as an ISO string in UTC (`2026-01-31T23:59:59.999Z`), or null. */
export const ts = (column: string, as = column.replace(/^\w+\./, '')) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${as}`;

/** A date column as YYYY-MM-DD, or null. */
export const day = (column: string, as = column.replace(/^\w+\./, '')) => `to_char(${column}, 'YYYY-MM-DD') AS ${as}`;

import type { Pool } from '../../infra/db/pool.ts';

/** Paged list result. */
export interface Rows<Row> {
  rows: Row[];
  total: number;
}

/**
 * `WHERE` clauses joined with AND (or nothing): a clause with `?` takes its value as the next
 * parameter; a clause without one is used as it is. Falsy entries (an absent filter) are skipped.
 */
export function where(conditions: ([string, unknown] | string | undefined | null | false | '')[]): {
  sql: string;
  params: unknown[];
} {
  const params: unknown[] = [];
  const parts = conditions
    .filter((c): c is [string, unknown] | string => !!c)
    .map((condition) => {
      if (typeof condition === 'string') return condition;
      params.push(condition[1]);
      return condition[0].replace('?', `$${params.length}`);
    });
  return { sql: parts.length ? `WHERE ${parts.join(' AND ')}` : '', params };
}

/**
 * One page of `SELECT <columns> <from> <where> ORDER BY <order>` and the total of
 * `<from> <where>`, read together. `from` starts with FROM (a table, a join, a subquery).
 */
export async function paged<Row>(
  pool: Pool,
  columns: string,
  from: string,
  w: { sql: string; params: unknown[] },
  order: string,
  page: { limit: number; offset: number },
): Promise<Rows<Row>> {
  const n = w.params.length;
  const [list, count] = await Promise.all([
    pool.query(`SELECT ${columns} ${from} ${w.sql} ORDER BY ${order} LIMIT $${n + 1} OFFSET $${n + 2}`, [
      ...w.params,
      page.limit,
      page.offset,
    ]),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n ${from} ${w.sql}`, w.params),
  ]);
  return { rows: list.rows as Row[], total: count.rows[0]!.n };
}
