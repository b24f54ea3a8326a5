// The limiter a process uses: Redis when REDIS_URL is set, else in-process.

import type { Clock } from '../clock.ts';
import type { Logger } from '../logging.ts';
import { MemoryRateLimiter } from './memory.ts';
import type { RateLimiter } from './port.ts';
import { RedisRateLimiter } from './redis.ts';

export type { RateDecision, RateLimiter, RateRule } from './port.ts';

export function createRateLimiter(redisUrl: string | null, clock: Clock, log: Logger): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl, clock, log) : new MemoryRateLimiter(clock);
}
