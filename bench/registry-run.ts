// `node --import tsx bench/registry-run.ts`: the registry figures alone, one JSON line each on
// stdout (progress on stderr). PostgreSQL: DATABASE_URL when set (a fresh database is created
// there and dropped at the end), else an embedded server in a temporary directory.
// BENCH_SECONDS (default 4) sets each throughput figure's measured time.

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../infra/db/embedded.ts';
import { createPool, withDatabase } from '../infra/db/pool.ts';
import { registryBench } from './registry.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000 };

let serverUrl = process.env.DATABASE_URL;
let stopServer = async () => {};
if (!serverUrl) {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-'));
  progress(`starting embedded PostgreSQL in ${dir}`);
  const server = await startEmbeddedPostgres(dir, { persistent: false });
  serverUrl = server.url;
  stopServer = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
const database = `bench_registry_${randomBytes(4).toString('hex')}`;
const admin = createPool(serverUrl, { max: 1, application: 'orchard-bench' });
await admin.query(`CREATE DATABASE ${database}`);
try {
  for (const figure of await registryBench(withDatabase(serverUrl, database), timing, progress)) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch((error: Error) => progress(`drop failed: ${error.message}`));
  await admin.end();
  await stopServer();
}
