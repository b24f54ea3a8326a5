// The PostgreSQL server of a test run (tests/run.ts starts it) and a fresh database per suite.

import { randomBytes } from 'node:crypto';
import { createPool, withDatabase, type Pool } from '../../infra/db/pool.ts';
import { migrate } from '../../infra/db/migrate.ts';
import { stopTestLog } from './test-log.ts';

export interface TestDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  const url = process.env.ORCHARD_TEST_SERVER_URL ?? process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('no test PostgreSQL: run the suites through tests/run.ts (npm test)');
  return url;
}

/** A new, migrated database named after the suite; dropped by `drop()`. */
export async function freshDatabase(label: string, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 40)}_${randomBytes(4).toString('hex')}`;
  const admin = createPool(serverUrl(), { max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = withDatabase(serverUrl(), name);
  const pool = createPool(url, { max: 30 });
  if (options.migrate !== false) await migrate(pool);
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      await stopTestLog(url);
      const admin = createPool(serverUrl(), { max: 1 });
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await admin.end();
    },
  };
}
