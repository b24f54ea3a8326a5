// What every service's routes may use; each service's deps add their own (api/<service>/deps.ts).

import type { Clock } from '../../infra/clock.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { Logger } from '../../infra/logging.ts';
import type { Metrics } from '../../infra/metrics.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';
import type { MaintenanceView } from '../../infra/updates/write-gate.ts';

export interface ServiceDeps {
  db: Pool;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  limiter: RateLimiter;
  version: string;
  /** The write gate's state (health routes report it during an update's maintenance). */
  maintenance: () => MaintenanceView;
}
