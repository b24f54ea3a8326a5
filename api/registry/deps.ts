// What the registry routes may use (built by main/).

import type { Clock } from '../../infra/clock.ts';
import type { CommandRunner } from '../../infra/commands.ts';
import type { Config } from '../../infra/config.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { Logger } from '../../infra/logging.ts';
import type { Metrics } from '../../infra/metrics.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';
import type { TokenLookup } from './auth/token-cache.ts';

export interface RegistryDeps {
  commands: CommandRunner;
  db: Pool;
  clock: Clock;
  config: Config;
  log: Logger;
  metrics: Metrics;
  limiter: RateLimiter;
  /** Keys the CSRF tokens of sessions and seals the OIDC login state cookie. */
  sealKey: Uint8Array;
  /** Machine tokens by hash (cached while this process runs their projection). */
  tokens: TokenLookup;
  version: string;
}
