// What the orchestration routes may use: a narrow object, not the whole platform. The
// composition root (main/) builds it; tests build it with their own clock.

import type { Config } from '../../infra/config.ts';
import type { Clock } from '../../infra/clock.ts';
import type { CommandRunner } from '../../infra/commands.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { Logger } from '../../infra/logging.ts';
import type { Metrics } from '../../infra/metrics.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';
import type { PrincipalLookup } from './auth/principal-cache.ts';

export interface OrchDeps {
  commands: CommandRunner;
  db: Pool;
  /** Seals secrets that must be shown again (API keys on /me). */
  sealKey: Uint8Array;
  clock: Clock;
  config: Config;
  log: Logger;
  limiter: RateLimiter;
  metrics: Metrics;
  /** Accounts behind key and session hashes (cached while this process runs their projections). */
  principals: PrincipalLookup;
  version: string;
}

/** What the account use cases need. */
export type AccountDeps = Pick<OrchDeps, 'commands' | 'db' | 'sealKey' | 'clock'>;
