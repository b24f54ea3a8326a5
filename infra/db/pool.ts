// The PostgreSQL connection pool. Bigint columns come back as strings from `pg`; callers
// convert with BigInt() where they need the value, never through Number().

import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export function createPool(url: string, options: { max?: number; application?: string } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 20,
    application_name: options.application ?? 'orchard',
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  // Nor may a checked-out one (a lock session, a transaction, when the backend is terminated or
  // the server fails over): the pool listens only to idle clients, and an 'error' event nobody
  // listens to ends the process. The query in flight rejects with the error anyway, the holder's
  // next query fails, and the pool discards the client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Run `work` inside one transaction: commit on success, roll back on any error. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A URL naming another database on the same server. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = '/' + database;
  return parsed.toString();
}
