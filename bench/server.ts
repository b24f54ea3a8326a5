// The PostgreSQL a bench runs on, and its throwaway databases: DATABASE_URL when set, else an
// embedded server in a temporary directory, removed at the end. Every figure area creates a
// fresh database on it and drops it when done.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../infra/db/embedded.ts';
import { createPool, withDatabase } from '../infra/db/pool.ts';

export interface BenchServer {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

/**
 * `durable: false` skips fsync on an embedded server (a throwaway data set built in bulk).
 * `binDir`: always an embedded server, from that installation's binaries, whatever DATABASE_URL
 * says (the updates bench needs a server of the installed pg_dump's major).
 */
export async function benchServer(
  progress: (message: string) => void = () => {},
  options: { durable?: boolean; binDir?: string } = {},
): Promise<BenchServer> {
  if (process.env.DATABASE_URL && !options.binDir)
    return { url: process.env.DATABASE_URL, embedded: false, stop: async () => {} };
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-'));
  progress(`starting embedded PostgreSQL in ${dir}${options.binDir ? ` (${options.binDir})` : ''}`);
  const server = await startEmbeddedPostgres(dir, {
    persistent: false,
    durable: options.durable,
    binDir: options.binDir,
  });
  return {
    url: server.url,
    embedded: true,
    stop: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Run `work` on a fresh database `<prefix>_<random>` of the server, dropped afterwards. */
export async function withBenchDatabase<T>(
  serverUrl: string,
  prefix: string,
  work: (url: string, name: string) => Promise<T>,
): Promise<T> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = createPool(serverUrl, { max: 1, application: 'orchard-bench' });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      return await work(withDatabase(serverUrl, name), name);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    }
  } finally {
    await admin.end();
  }
}
