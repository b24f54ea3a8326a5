// Managed updates inside a service process: each service's update checker and sidecar client,
// the release key, and the orchestration service's delivery sweep. `serve` starts the
// background parts for the services it runs; route suites drive them by hand.

import type { UpdateService } from '../domain/updates/events.ts';
import type { Clock } from '../infra/clock.ts';
import type { CommandRunner } from '../infra/commands.ts';
import type { Config } from '../infra/config.ts';
import type { Pool } from '../infra/db/pool.ts';
import type { Logger } from '../infra/logging.ts';
import { UpdateChecker } from '../infra/updates/checker.ts';
import { DeliverySweep } from '../infra/updates/delivery-sweep.ts';
import { loadReleaseKey, type ReleaseKey } from '../infra/updates/release-key.ts';
import { SidecarClient } from '../infra/updates/sidecar-client.ts';
import type { WriteGate } from '../infra/updates/write-gate.ts';

export interface Updates {
  releaseKey: ReleaseKey;
  checkers: Record<UpdateService, UpdateChecker>;
  sidecars: Record<UpdateService, SidecarClient>;
  delivery: DeliverySweep;
  start(services: readonly string[]): void;
  stop(): Promise<void>;
}

export function openUpdates(d: {
  config: Config;
  log: Logger;
  commands: CommandRunner;
  pool: Pool;
  clock: Clock;
  gate: WriteGate;
}): Updates {
  const { config } = d;
  const releaseKey = loadReleaseKey(config.updates.publicKeyFile, d.log);
  const checker = (service: UpdateService) =>
    new UpdateChecker({
      service,
      channel: config.updates[service],
      schedule: config.updates.schedule,
      publicKey: releaseKey.publicKey,
      commands: d.commands,
      db: d.pool,
      clock: d.clock,
      log: d.log,
      gate: d.gate,
    });
  // Request signatures carry wall-clock time between two processes: the real clock, never a test's shifted one.
  const sidecars = {
    orch: new SidecarClient(
      config.updates.orch.sidecarUrl,
      config.updates.orch.tokenFile,
      'ORCH_UPDATER_API_TOKEN_FILE',
    ),
    chat: new SidecarClient(config.updates.chat.sidecarUrl, config.updates.chat.tokenFile, 'UPDATER_API_TOKEN_FILE'),
  };
  const checkers = { orch: checker('orch'), chat: checker('chat') };
  const delivery = new DeliverySweep({
    sidecar: sidecars.orch,
    commands: d.commands,
    db: d.pool,
    clock: d.clock,
    log: d.log,
    gate: d.gate,
    intervalSecs: config.updates.deliveryCheckSecs,
  });
  if (!config.updates.orch.host)
    d.log.info('update_checks_off', { service: 'orch', reason: 'ORCH_UPDATE_MANIFEST_HOST is not set' });
  return {
    releaseKey,
    checkers,
    sidecars,
    delivery,
    start(services) {
      if (services.includes('orch')) {
        checkers.orch.start();
        if (config.updates.orch.tokenFile) delivery.start();
      }
      if (services.includes('chat')) checkers.chat.start();
    },
    async stop() {
      delivery.stop();
      await Promise.all([checkers.orch.stop(), checkers.chat.stop()]);
    },
  };
}
