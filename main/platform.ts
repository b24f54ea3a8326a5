// Opening the platform: the database (given or embedded), migrations, the log (PostgreSQL or
// EventStoreDB), the processor engine with every projection, the command runner, the sealing
// key, metrics, the rate limiter and the clock. Every process (a server, a CLI command) opens one.

import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateKeyHex, parseKeyHex } from '../crypto/seal.ts';
import type { SigningKey } from '../crypto/audit.ts';
import { Chainer } from '../infra/audit/chainer.ts';
import { ChainStore } from '../infra/audit/chain-store.ts';
import { loadAuditSigningKey } from '../infra/audit/signing-key.ts';
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
import { ProcessorEngine } from '../infra/processors/engine.ts';
import { estateDocumentsProjection } from '../projections/orchestration/estate.ts';
import { SearchIndexFolder } from '../projections/orchestration/estate-index.ts';
import { createRateLimiter, type RateLimiter } from '../infra/rate-limit/index.ts';
import { redactUrl, StartupError } from '../infra/startup-error.ts';
import { version } from '../infra/version.ts';
import { allProjections } from '../projections/index.ts';
import { openUpdates, type Updates } from './updates.ts';
import { WRITE_GATE, WriteGate, writeGateProcessor } from '../infra/updates/write-gate.ts';

export interface Platform {
  config: Config;
  log: Logger;
  pool: Pool;
  store: EventStore;
  engine: ProcessorEngine;
  commands: CommandRunner;
  /** Seals secrets that must be shown again (API keys on /me, bot tokens). */
  sealKey: Uint8Array;
  metrics: Metrics;
  limiter: RateLimiter;
  clock: Clock;
  /** The log's hash chain and signed checkpoints, and the process that extends them. */
  chain: ChainStore;
  chainer: Chainer;
  auditKey: SigningKey;
  version: string;
  startedAt: Date;
  /** Closed while an update's maintenance holds the services read-only. */
  gate: WriteGate;
  /** Update checks, the sidecar clients and the delivery sweep (started by `serve`). */
  updates: Updates;
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

export interface PlatformOptions {
  runProjections?: boolean;
  clock?: Clock;
  /** How long a command waits for the projections that read its events (tests shorten it). */
  readYourWritesTimeoutMs?: number;
}

export interface BuiltPlatform {
  platform: Platform;
  /**
   * Connect, migrate (then `afterMigrate`), and start following the log (the write gate, the
   * projections, the chainer). On failure the platform is closed again.
   */
  open(afterMigrate?: (applied: string[]) => Promise<void>): Promise<void>;
}

/**
 * The platform built but not opened: every part constructed, the keys loaded, and the database
 * neither touched nor migrated (without DATABASE_URL the embedded server is started, though).
 * The updater's standby start (`serve --standby`) builds while the old release still serves,
 * and opens once the sidecar drained it.
 */
export function buildPlatform(config: Config, log: Logger, options: PlatformOptions = {}): Promise<BuiltPlatform> {
  return build(config, log, options, false);
}

/** Connect and migrate, then build the rest and start: every process but a standby opens so. */
export async function openPlatform(config: Config, log: Logger, options: PlatformOptions = {}): Promise<Platform> {
  const { platform, open } = await build(config, log, options, true);
  await open();
  return platform;
}

async function build(
  config: Config,
  log: Logger,
  options: PlatformOptions,
  migrateFirst: boolean,
): Promise<BuiltPlatform> {
  const clock = options.clock ?? systemClock;
  let stopEmbedded = async () => {};
  let url = config.databaseUrl;
  if (!url) {
    const server = await startEmbeddedPostgres(config.dataDir, { persistent: true });
    log.info('embedded_postgres_started', { data_dir: config.dataDir, cluster_dir: server.clusterDir });
    url = server.url;
    stopEmbedded = server.stop;
  }
  // Pooled connections (DATABASE_POOL_SIZE): the projections' lock session (one for all), their
  // batches, the chainer, update checks and requests.
  const pool = createPool(url, { max: config.databasePoolSize });
  const dbUrl = url;
  const migrateNow = async () => {
    await connect(pool, dbUrl);
    const applied = await migrate(pool);
    if (applied.length) log.info('migrations_applied', { migrations: applied });
    return applied;
  };
  let migrated: string[] | null = null;
  if (migrateFirst) {
    try {
      migrated = await migrateNow();
    } catch (error) {
      await pool.end();
      await stopEmbedded();
      throw error;
    }
  }
  const store: EventStore = config.eventStoreUrl
    ? new EventStoreDbEventStore(config.eventStoreUrl)
    : new PostgresEventStore(pool, url);
  const engine = new ProcessorEngine(store, pool, allProjections, log);
  const folder = new SearchIndexFolder(pool, engine, log, estateDocumentsProjection.name);
  const metrics = new Metrics();
  metrics.watchProcessors(engine, store, pool);
  const commands = new CommandRunner(
    store,
    (events) => engine.waitForEvents(events, options.readYourWritesTimeoutMs ?? READ_YOUR_WRITES_TIMEOUT_MS),
    (events) => metrics.countAppended(events),
  );
  const limiter = createRateLimiter(config.redisUrl, clock, log);
  const gate = new WriteGate();
  commands.gate = gate;
  engine.register([writeGateProcessor(gate, store, log)]);
  const release = async () => {
    await limiter.close();
    await store.close();
    await pool.end();
    await stopEmbedded();
  };
  let updates: Updates;
  let sealKey: Uint8Array;
  let auditKey: SigningKey;
  try {
    try {
      updates = openUpdates({ config, log, commands, pool, clock, gate });
    } catch (error) {
      throw new StartupError(`updates: ${(error as Error).message}`);
    }
    sealKey = await loadSealKey(config);
    auditKey = await loadAuditSigningKey(config);
  } catch (error) {
    await release();
    throw error;
  }
  const chain = new ChainStore(pool);
  const chainer = new Chainer(store, chain, pool, auditKey, clock, log);

  let closing: Promise<void> | null = null;
  const platform: Platform = {
    config,
    log,
    pool,
    store,
    engine,
    commands,
    sealKey,
    metrics,
    limiter,
    clock,
    chain,
    chainer,
    auditKey,
    version,
    startedAt: clock.now(),
    gate,
    updates,
    close() {
      closing ??= (async () => {
        await chainer.stop();
        await updates.stop();
        await engine.stop();
        await folder.stop();
        await release();
      })();
      return closing;
    },
  };
  return {
    platform,
    async open(afterMigrate) {
      try {
        const applied = migrated ?? (await migrateNow());
        await afterMigrate?.(applied);
        if (options.runProjections !== false) {
          engine.start();
          // A process started mid-maintenance accepts no write: the gate knows the log's state first.
          await engine.whenLive(WRITE_GATE);
          chainer.start();
        }
      } catch (error) {
        await platform.close();
        throw error;
      }
    },
  };
}
