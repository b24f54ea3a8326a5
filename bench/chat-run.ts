// The chat figures alone: `node --import tsx bench/chat-run.ts`, one JSON object per
// line on stdout, progress on stderr. PostgreSQL: a fresh database on DATABASE_URL's server
// (dropped at the end), else an embedded server in a temporary directory. BENCH_SECONDS sets
// each throughput figure's measured time (default 4); BENCH_WS_CONNECTIONS the sockets held
// open (default 2000).

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../infra/db/embedded.ts';
import { createPool, withDatabase } from '../infra/db/pool.ts';
import { chatFigures } from './chat.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
let serverUrl = process.env.DATABASE_URL;
let stop = async () => {};
if (!serverUrl) {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-chat-pg-'));
  progress(`starting embedded PostgreSQL in ${dir}`);
  const server = await startEmbeddedPostgres(dir, { persistent: false });
  serverUrl = server.url;
  stop = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
const database = `bench_chat_${randomBytes(4).toString('hex')}`;
const admin = createPool(serverUrl, { max: 1 });
await admin.query(`CREATE DATABASE ${database}`);
try {
  const figures = await chatFigures(withDatabase(serverUrl, database), {
    seconds: process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS),
    wsConnections: process.env.BENCH_WS_CONNECTIONS === undefined ? undefined : Number(process.env.BENCH_WS_CONNECTIONS),
    progress,
  });
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
  await admin.end();
  await stop();
}
