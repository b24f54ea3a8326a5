// Named PostgreSQL advisory locks: one key derivation and one way to run work under a lock.

import { createHash } from 'node:crypto';
import type { Pool } from './pool.ts';

/** A lock's 64-bit key (as text, for a bigint parameter) from its name. */
export function advisoryKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}

/**
 * Runs `work` while holding the named lock across every instance on this database. A session
 * lock on a connection of its own, not a transaction: `work` uses the pool as usual (and may
 * wait for projections), and nothing holds back readers of the log meanwhile.
 */
export async function withAdvisoryLock<T>(db: Pool, name: string, work: () => Promise<T>): Promise<T> {
  const key = advisoryKey(name);
  const client = await db.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1::bigint)', [key]);
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]);
    }
  } finally {
    client.release();
  }
}
