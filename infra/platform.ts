// Wiring: the database (given or embedded), migrations, the log (PostgreSQL or EventStoreDB),
// the projection engine and the sealing key. Every service process opens one Platform.

import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateKeyHex, parseKeyHex } from '../crypto/seal.ts';
import type { Decider, DomainEvent } from '../domain/shared/decider.ts';
import { handleCommand, type CommandContext, type CommandResult } from './commands.ts';
import type { Config } from './config.ts';
import { startEmbeddedPostgres } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { createPool, type Pool } from './db/pool.ts';
import { EventStoreDbEventStore } from './eventstore/eventstoredb.ts';
import type { EventStore } from './eventstore/port.ts';
import { PostgresEventStore } from './eventstore/postgres.ts';
import type { Logger } from './logging.ts';
import { ProjectionEngine } from './projections/engine.ts';
import { allProjections } from '../projections/index.ts';
import { version } from './version.ts';

export interface Platform {
  config: Config;
  log: Logger;
  pool: Pool;
  store: EventStore;
  engine: ProjectionEngine;
  /** Seals secrets that must be shown again (API keys on /me, bot tokens). */
  sealKey: Uint8Array;
  version: string;
  startedAt: Date;
  /** Run a command and wait until the projections it affects have applied it (read-your-writes). */
  execute<S, C, E extends DomainEvent>(stream: string, decider: Decider<S, C, E>, command: C, context: CommandContext): Promise<CommandResult<S, E>>;
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

export async function openPlatform(config: Config, log: Logger, options: { runProjections?: boolean } = {}): Promise<Platform> {
  let stopEmbedded = async () => {};
  let url = config.databaseUrl;
  if (!url) {
    const server = await startEmbeddedPostgres(config.dataDir, { persistent: true });
    log.info('embedded_postgres_started', { data_dir: config.dataDir });
    url = server.url;
    stopEmbedded = server.stop;
  }
  const pool = createPool(url, { max: 40 });
  try {
    const applied = await migrate(pool);
    if (applied.length) log.info('migrations_applied', { migrations: applied });
  } catch (error) {
    await pool.end();
    await stopEmbedded();
    throw error;
  }
  const store: EventStore = config.eventStoreUrl ? new EventStoreDbEventStore(config.eventStoreUrl) : new PostgresEventStore(pool, url);
  const engine = new ProjectionEngine(store, pool, allProjections, log);
  if (options.runProjections !== false) engine.start();
  const sealKey = await loadSealKey(config);

  return {
    config, log, pool, store, engine, sealKey, version, startedAt: new Date(),
    async execute(stream, decider, command, context) {
      const result = await handleCommand(store, stream, decider, command, context);
      if (result.appended) {
        await engine.waitFor(result.appended.position, result.events.map((e) => e.type), READ_YOUR_WRITES_TIMEOUT_MS);
      }
      return result;
    },
    async close() {
      await engine.stop();
      await store.close();
      await pool.end();
      await stopEmbedded();
    },
  };
}
