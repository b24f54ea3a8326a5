// Shared by the estate route suites: a server with an admin key, and calls to the routes.

import { http, type Reply, type TestServices } from '../../support/services.ts';

export const ADMIN_KEY = 'orch_estate-admin-key-000000000000000000';
export const admin = { 'X-API-Key': ADMIN_KEY };

export const ingest = (
  s: TestServices,
  documents: unknown[],
  headers: Record<string, string> = admin,
): Promise<Reply> => http(`${s.orch}/api/v1/knowledge/ingest`, { headers, json: { documents } });

export const vault = (s: TestServices, documents: unknown[], headers: Record<string, string> = admin): Promise<Reply> =>
  http(`${s.orch}/api/v1/knowledge/vault`, { headers, json: { documents } });

export const get = (s: TestServices, path: string, headers: Record<string, string> = admin): Promise<Reply> =>
  http(`${s.orch}${path}`, { headers });

export async function searchFor(
  s: TestServices,
  params: Record<string, string>,
  headers: Record<string, string> = admin,
): Promise<Reply> {
  return http(`${s.orch}/api/v1/knowledge/search?${new URLSearchParams(params)}`, { headers });
}

export async function eventCount(s: TestServices, type?: string): Promise<number> {
  const { rows } = await s.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE $1::text IS NULL OR type = $1`,
    [type ?? null],
  );
  return rows[0]!.n;
}

/** A paragraph of filler prose that matches none of the suites' query words. */
export const filler = (n: number) => Array.from({ length: n }, (_, i) => `filler${i % 7} text`).join(' ');
