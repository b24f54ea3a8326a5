// Redis backend: one sorted set per key (member per counted hit, scored by its time), read and
// changed by one Lua script, so instances sharing the Redis share the limit atomically. The
// caller's clock gives the time (instances are NTP-synchronised; tests move it).
//
// When Redis cannot be reached the limiter keeps limiting, in-process (each instance counts
// alone until Redis is back), and logs the degradation once per outage: failing open would
// lift every limit, failing closed would lock every client out.

import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logging.ts';
import { MemoryRateLimiter } from './memory.ts';
import { decide, type RateDecision, type RateLimiter, type RateRule } from './port.ts';

// KEYS[1]: the key. ARGV: now (ms), window (ms), limit, member (empty: peek only).
// Returns {count before this hit, oldest score or -1}.
const SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if ARGV[4] ~= '' and count < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {count, oldest[2] or '-1'}
`;

/** How long the first requests wait for the connection before counting in-process. */
const FIRST_CONNECT_MS = 2000;

type WithScript = Redis & {
  slidingWindow(key: string, now: number, windowMs: number, limit: number, member: string): Promise<[number, string]>;
};

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: WithScript;
  private readonly fallback: MemoryRateLimiter;
  private degraded = false;
  private sequence = 0;
  /** Settles once the first connection attempt has succeeded or had its time: until then, wait rather than fall back. */
  private readonly firstConnection: Promise<void>;

  constructor(
    url: string,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly prefix = 'orchard:rl:',
  ) {
    // Fail fast while disconnected (no offline queue), reconnect in the background.
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      lazyConnect: false,
    }) as WithScript;
    this.redis.on('error', () => {}); // reported through `degrade`, once per outage
    this.redis.defineCommand('slidingWindow', { numberOfKeys: 1, lua: SCRIPT });
    this.fallback = new MemoryRateLimiter(clock);
    this.firstConnection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FIRST_CONNECT_MS);
      timer.unref();
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async run(key: string, rule: RateRule, counting: boolean): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    if (this.redis.status !== 'ready') await this.firstConnection;
    const member = counting ? `${now}-${(this.sequence++).toString(36)}-${randomBytes(4).toString('hex')}` : '';
    try {
      const [count, oldest] = await this.redis.slidingWindow(this.prefix + key, now, rule.windowMs, rule.limit, member);
      if (this.degraded) {
        this.degraded = false;
        this.log.info('rate_limiter_recovered', { backend: 'redis' });
      }
      return decide(rule, Number(count), oldest === '-1' ? null : Number(oldest), now, counting);
    } catch (error) {
      if (!this.degraded) {
        this.degraded = true;
        this.log.warn('rate_limiter_degraded', {
          backend: 'redis',
          error: (error as Error).message,
          fallback: 'in-process',
        });
      }
      return counting ? this.fallback.consume(key, rule) : this.fallback.peek(key, rule);
    }
  }

  consume(key: string, rule: RateRule): Promise<RateDecision> {
    return this.run(key, rule, true);
  }

  peek(key: string, rule: RateRule): Promise<RateDecision> {
    return this.run(key, rule, false);
  }

  async reset(key: string): Promise<void> {
    await this.fallback.reset(key);
    await this.redis.del(this.prefix + key).catch(() => {});
  }

  async close(): Promise<void> {
    await this.fallback.close();
    this.redis.disconnect();
  }
}
