// Opening the platform: the database (given or embedded), migrations, the log (PostgreSQL or
// EventStoreDB), the projection engine with every projection, the command runner, the sealing
// key, metrics, the rate limiter and the clock. Every process (a server, a CLI command) opens one.

import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateKeyHex, parseKeyHex } from '../crypto/seal.ts';
import { systemClock, type Clock } from '../infra/clock.ts';
import { CommandRunner } from '../infra/commands.ts';
import type { Config } from '../infra/config.ts';
import { startEmbeddedPostgres } from '../infra/db/embedded.ts';
import { migrate } from '../infra/db/migrate.ts';
import { createPool, type Pool } from '../infra/db/pool.ts';
import { EventStoreDbEventStore } from '../infra/eventstore/eventstoredb.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import type { Logger } from '../infra/logging.ts';
import { Metrics } from '../infra/metrics.ts';
import { ProjectionEngine } from '../infra/projections/engine.ts';
import { createRateLimiter, type RateLimiter } from '../infra/rate-limit/index.ts';
import { redactUrl, StartupError } from '../infra/startup-error.ts';
import { version } from '../infra/version.ts';
import { allProjections } from '../projections/index.ts';

export interface Platform {
  config: Config;
  log: Logger;
  pool: Pool;
  store: EventStore;
  engine: ProjectionEngine;
  commands: CommandRunner;
  /** Seals secrets that must be shown again (API keys on /me, bot tokens). */
  sealKey: Uint8Array;
  metrics: Metrics;
  limiter: RateLimiter;
  clock: Clock;
  version: string;
  startedAt: Date;
  close(): Promise<void>;
}

const READ_YOUR_WRITES_TIMEOUT_MS = 10_000;

/** The sealing key: configured, or generated once under DATA_DIR and kept there. */
async function loadSealKey(config: Config): Promise<Uint8Array> {
  if (config.secretKeyHex) return parseKeyHex(config.secretKeyHex);
  if (existsSync(config.secretKeyFile)) return parseKeyHex((await readFile(config.secretKeyFile, 'utf8')).trim());
  await mkdir(path.dirname(config.secretKeyFile), { recursive: true });
  const hex = generateKeyHex();
  await writeFile(config.secretKeyFile, hex + '\n', { mode: 0o600, flag: 'wx' });
  return parseKeyHex(hex);
}

const CONNECT_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  '28P01': 'password authentication failed',
  '28000': 'authentication rejected',
  '3D000': 'database does not exist',
};

/** The first query, with a readable refusal when the configured server cannot be used. */
async function connect(pool: Pool, url: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    const e = error as NodeJS.ErrnoException & { code?: string };
    const reason = CONNECT_REASONS[e.code ?? ''] ?? (e.message || 'connection failed').split('\n')[0];
    throw new StartupError(`cannot use DATABASE_URL=${redactUrl(url)}: ${reason}`);
  }
}

export async function openPlatform(
  config: Config,
  log: Logger,
  options: { runProjections?: boolean; clock?: Clock } = {},
): Promise<Platform> {
  const clock = options.clock ?? systemClock;
  let stopEmbedded = async () => {};
  let url = config.databaseUrl;
  if (!url) {
    const server = await startEmbeddedPostgres(config.dataDir, { persistent: true });
    log.info('embedded_postgres_started', { data_dir: config.dataDir, cluster_dir: server.clusterDir });
    url = server.url;
    stopEmbedded = server.stop;
  }
  const pool = createPool(url, { max: 40 });
  try {
    await connect(pool, url);
    const applied = await migrate(pool);
    if (applied.length) log.info('migrations_applied', { migrations: applied });
  } catch (error) {
    await pool.end();
    await stopEmbedded();
    throw error;
  }
  const store: EventStore = config.eventStoreUrl ? new EventStoreDbEventStore(config.eventStoreUrl) : new PostgresEventStore(pool, url);
  const engine = new ProjectionEngine(store, pool, allProjections, log);
  const metrics = new Metrics();
  metrics.watchProjections(engine, store, pool);
  const commands = new CommandRunner(
    store,
    (events) => engine.waitForEvents(events, READ_YOUR_WRITES_TIMEOUT_MS),
    (events) => metrics.countAppended(events),
  );
  const limiter = createRateLimiter(config.redisUrl, clock, log);
  if (options.runProjections !== false) engine.start();
  const sealKey = await loadSealKey(config);

  return {
    config, log, pool, store, engine, commands, sealKey, metrics, limiter, clock, version, startedAt: clock.now(),
    async close() {
      await engine.stop();
      await limiter.close();
      await store.close();
      await pool.end();
      await stopEmbedded();
    },
  };
}
