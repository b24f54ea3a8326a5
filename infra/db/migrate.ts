// Forward-only numbered SQL migrations (`migrations/NNN_name.sql`), each applied once in its
// own transaction and recorded with its name and time. Concurrent starters serialise on an
// advisory lock, so two processes never apply the same migration.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from '../paths.ts';
import type { Pool } from './pool.ts';

const MIGRATIONS_DIR = path.join(ROOT, 'infra', 'db', 'migrations');
const LOCK_KEY = 7_413_001; // arbitrary, constant: the migration lock

export interface MigrationStatus {
  applied: number;
  latest: string | null;
}

export async function listMigrations(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{3}_.+\.sql$/.test(f)).sort();
}

/** Apply every migration not yet applied; returns the names applied now. */
export async function migrate(pool: Pool): Promise<string[]> {
  const client = await pool.connect();
  const appliedNow: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    for (const file of await listMigrations()) {
      const name = file.replace(/\.sql$/, '');
      if (done.has(name)) continue;
      const sql = await readFile(path.join(MIGRATIONS_DIR, file), 'utf8');
      try {
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      appliedNow.push(name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    client.release();
  }
  return appliedNow;
}

export async function migrationStatus(pool: Pool): Promise<MigrationStatus> {
  const { rows } = await pool.query<{ applied: string; latest: string | null }>(
    'SELECT count(*) AS applied, max(name) AS latest FROM schema_migrations',
  );
  return { applied: Number(rows[0]?.applied ?? 0), latest: rows[0]?.latest ?? null };
}
