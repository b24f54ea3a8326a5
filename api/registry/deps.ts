// What the registry routes may use (built by main/).

import type { Clock } from '../../infra/clock.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { Logger } from '../../infra/logging.ts';
import type { Metrics } from '../../infra/metrics.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';

export interface RegistryDeps {
  db: Pool;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  limiter: RateLimiter;
  version: string;
}
