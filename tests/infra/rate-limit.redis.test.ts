// The Redis backend against the rate limiter's contract, then what only it does: two instances
// (two connections, as two servers would have) share one limit, and with Redis unreachable the
// limiter keeps limiting in-process and says so in the log.

import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ShiftedClock } from '../../infra/clock.ts';
import { createLogger } from '../../infra/logging.ts';
import { RedisRateLimiter } from '../../infra/rate-limit/redis.ts';
import { redisAvailable, TEST_REDIS_URL } from '../support/redis.ts';
import { rateLimiterContract } from './rate-limit.contract.ts';

const silent = createLogger({ level: 'error', sink: () => {} });
const prefix = `orchard-test:${randomUUID()}:`;

rateLimiterContract('redis', async () =>
  (await redisAvailable())
    ? { make: (clock) => new RedisRateLimiter(TEST_REDIS_URL, clock, silent, prefix), cleanup: async () => {} }
    : null,
);

const test = suite<{ available: boolean }>('rate limiter: redis across instances');
test.before(async (ctx) => {
  ctx.available = await redisAvailable();
});

test('two instances share one limit', async ({ available }) => {
  if (!available) return;
  const clock = new ShiftedClock();
  const [a, b] = [
    new RedisRateLimiter(TEST_REDIS_URL, clock, silent, prefix),
    new RedisRateLimiter(TEST_REDIS_URL, clock, silent, prefix),
  ];
  try {
    const k = `shared:${randomUUID()}`;
    const rule = { limit: 5, windowMs: 60_000 };
    const allowed = [];
    for (let i = 0; i < 6; i++) allowed.push((await (i % 2 ? b : a).consume(k, rule)).allowed);
    assert.equal(allowed, [true, true, true, true, true, false]);
    // The counts live in Redis, not in either process.
    const probe = new Redis(TEST_REDIS_URL);
    assert.is(await probe.zcard(`${prefix}${k}`), 5);
    probe.disconnect();
    assert.is((await a.peek(k, rule)).allowed, false);
    await b.reset(k);
    assert.is((await a.peek(k, rule)).allowed, true);
  } finally {
    await a.close();
    await b.close();
  }
});

test('Redis unreachable: keeps limiting in-process and logs the degradation once', async () => {
  const lines: string[] = [];
  const log = createLogger({ level: 'info', sink: (line) => lines.push(line) });
  const limiter = new RedisRateLimiter('redis://127.0.0.1:1', new ShiftedClock(), log, prefix);
  try {
    const rule = { limit: 2, windowMs: 60_000 };
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push((await limiter.consume('down', rule)).allowed);
    assert.equal(allowed, [true, true, false]);
    assert.is(lines.filter((l) => l.includes('rate_limiter_degraded')).length, 1);
  } finally {
    await limiter.close();
  }
});

test.run();
