// `orchard serve sidecar`: the updater sidecar. It opens the log (to announce maintenance and
// record applies) but never migrates the database or runs projections: it outlives releases, and
// the database may be restored under it. Its journal is the apply's record of truth.

import { serve } from '@hono/node-server';
import { createSidecarApp } from '../api/sidecar/app.ts';
import { systemClock } from '../infra/clock.ts';
import type { Config } from '../infra/config.ts';
import { EventStoreDbEventStore } from '../infra/eventstore/eventstoredb.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { createPool } from '../infra/db/pool.ts';
import type { Logger } from '../infra/logging.ts';
import { StartupError } from '../infra/startup-error.ts';
import { DockerRuntime } from '../infra/updater/docker-runtime.ts';
import { ApplyExecutor, parseFailpoints } from '../infra/updater/executor.ts';
import { Journal } from '../infra/updater/journal.ts';
import { UpdaterLog } from '../infra/updater/log-writer.ts';
import { ProcessRuntime } from '../infra/updater/process-runtime.ts';
import type { HealthTargets, ReleaseRuntime } from '../infra/updater/runtime.ts';
import { loadReleaseKey } from '../infra/updates/release-key.ts';
import { readSidecarToken } from '../infra/updates/sidecar-token.ts';
import { version } from '../infra/version.ts';
import { listen } from './serve.ts';

const local = (host: string) => (host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host);

function healthTargets(config: Config): HealthTargets {
  const { orch, chat, registry } = config.listen;
  if (config.updater.runtime === 'docker') {
    // On the compose network the services answer by their service names.
    return {
      orch: `http://orch:${orch.port}`,
      chat: `http://chat:${chat.port}`,
      registry: `http://registry:${registry.port}`,
    };
  }
  return {
    orch: `http://${local(orch.host)}:${orch.port}`,
    chat: `http://${local(chat.host)}:${chat.port}`,
    registry: `http://${local(registry.host)}:${registry.port}`,
  };
}

/** The services' environment: the sidecar's own, less what is the sidecar's alone. */
function servicesEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.ORCH_UPDATER_FAILPOINTS;
  return env;
}

export async function serveSidecar(
  config: Config,
  log: Logger,
  options: { enableFailpoints: boolean },
): Promise<number> {
  let token: Uint8Array;
  try {
    token = readSidecarToken(config.updater.tokenFile, 'ORCH_UPDATER_API_TOKEN_FILE');
  } catch (error) {
    throw new StartupError(`the sidecar needs its token: ${(error as Error).message}`);
  }
  if (!config.databaseUrl)
    throw new StartupError('the sidecar needs DATABASE_URL (the database it snapshots and restores)');
  let releaseKey;
  try {
    releaseKey = loadReleaseKey(config.updates.publicKeyFile, log);
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
  let failpoints = new Map();
  if (config.updater.failpoints) {
    if (!options.enableFailpoints)
      log.warn('failpoints_ignored', { reason: 'serve sidecar was not given --enable-failpoints' });
    else failpoints = parseFailpoints(config.updater.failpoints);
  }
  const pool = createPool(config.databaseUrl, { max: 4 });
  const store: EventStore = config.eventStoreUrl
    ? new EventStoreDbEventStore(config.eventStoreUrl)
    : new PostgresEventStore(pool, config.databaseUrl);
  const journal = new Journal(config.updater.dataDir, systemClock);
  await journal.load();
  const health = healthTargets(config);
  const runtime: ReleaseRuntime =
    config.updater.runtime === 'process'
      ? new ProcessRuntime({
          releasesDir: config.updater.releasesDir,
          dataDir: config.updater.dataDir,
          databaseUrl: config.databaseUrl,
          pgBinDir: config.updater.pgBinDir,
          drainSecs: config.updater.drainSecs,
          startSecs: config.updater.healthGraceSecs,
          health,
          env: servicesEnv(),
          log,
        })
      : new DockerRuntime({
          composeFile: config.updater.composeFile,
          dataDir: config.updater.dataDir,
          databaseUrl: config.databaseUrl,
          drainSecs: config.updater.drainSecs,
          health,
          initialImage: config.updater.initialImage,
          log,
        });
  const executor = new ApplyExecutor({
    journal,
    runtime,
    updaterLog: new UpdaterLog(store),
    log,
    clock: systemClock,
    publicKey: releaseKey.publicKey,
    channels: { orch: config.updates.orch.channel, chat: config.updates.chat.channel },
    dataDir: config.updater.dataDir,
    healthGraceSecs: config.updater.healthGraceSecs,
    failpoints,
  });
  if (failpoints.size) log.warn('failpoints_enabled', { failpoints: Object.fromEntries(failpoints) });
  await runtime.startCurrent();
  await executor.resume();
  const app = createSidecarApp({ token, clock: systemClock, executor, journal, runtime, version });
  const { server, port } = await listen(app, config.updater.listen, 'ORCH_UPDATER_LISTEN');
  log.info('sidecar_listening', {
    url: `http://${config.updater.listen.host}:${port}`,
    runtime: runtime.name,
    release_key: releaseKey.source,
  });
  process.stderr.write(
    `orchard: sidecar        http://${config.updater.listen.host}:${port}  (runtime ${runtime.name})\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  log.info('sidecar_stopping', { apply_in_progress: executor.current });
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await runtime.close();
  await store.close();
  await pool.end();
  return 0;
}
