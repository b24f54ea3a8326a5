// Rate-limiter figures: checks per second on the in-process backend, and on Redis over one
// connection (ioredis pipelines concurrent commands on it), with PINGs at the same concurrency
// on a connection of their own as the Redis baseline (a check is one script call: its floor). Keys rotate over a working set so the figures
// include both fresh and full windows.

import { Redis } from 'ioredis';
import { systemClock } from '../infra/clock.ts';
import { createLogger } from '../infra/logging.ts';
import { MemoryRateLimiter } from '../infra/rate-limit/memory.ts';
import { RedisRateLimiter } from '../infra/rate-limit/redis.ts';
import type { RateLimiter } from '../infra/rate-limit/port.ts';
import { paired, throughput, type Operation, type Throughput } from './measure.ts';

const KEYS = 10_000;
const RULE = { limit: 20, windowMs: 60_000 };
/** Checks in flight on the one Redis connection. */
export const REDIS_IN_FLIGHT = 32;

function checks(limiter: RateLimiter, workers: number): Operation[] {
  return Array.from({ length: workers }, (_, w) => {
    let i = w;
    return async () => {
      await limiter.consume(`bench:${(i += workers) % KEYS}`, RULE);
      return 1;
    };
  });
}

export async function inProcessChecks(timing: { warmupMs: number; measureMs: number }): Promise<Throughput> {
  const limiter = new MemoryRateLimiter(systemClock);
  try {
    return await throughput(checks(limiter, 1), timing);
  } finally {
    await limiter.close();
  }
}

/** Null when no Redis answers at `url`. */
export async function redisChecks(
  url: string,
  timing: { warmupMs: number; measureMs: number; slices: number },
): Promise<{ ping: Throughput; checks: Throughput } | null> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
  } catch {
    return null;
  }
  const limiter = new RedisRateLimiter(
    url,
    systemClock,
    createLogger({ level: 'error', sink: () => {} }),
    `orchard-bench:${process.pid}:`,
  );
  try {
    const pings: Operation[] = Array.from({ length: REDIS_IN_FLIGHT }, () => async () => {
      await probe.ping();
      return 1;
    });
    const [ping, measured] = await paired(pings, checks(limiter, REDIS_IN_FLIGHT), timing);
    return { ping, checks: measured };
  } finally {
    await limiter.close();
    probe.disconnect();
  }
}
