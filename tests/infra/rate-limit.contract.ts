// The rate limiter's contract: one suite, run against every backend (rate-limit.*.test.ts).

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ShiftedClock } from '../../infra/clock.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';

export interface LimiterTarget {
  /** A limiter on the shared clock; two made from one target share their counters where the backend does. */
  make(clock: ShiftedClock): RateLimiter;
  cleanup(): Promise<void>;
}

const key = () => `contract:${randomUUID()}`;

export function rateLimiterContract(name: string, target: () => Promise<LimiterTarget | null>): void {
  const test = suite<{ t: LimiterTarget | null; clock: ShiftedClock; limiter: RateLimiter }>(
    `rate limiter contract: ${name}`,
  );
  test.before(async (ctx) => {
    ctx.t = await target();
    ctx.clock = new ShiftedClock();
    if (ctx.t) ctx.limiter = ctx.t.make(ctx.clock);
  });
  test.after(async ({ t, limiter }) => {
    await limiter?.close();
    await t?.cleanup();
  });

  const it = (
    title: string,
    body: (ctx: { t: LimiterTarget; clock: ShiftedClock; limiter: RateLimiter }) => Promise<void>,
  ) =>
    test(title, async (ctx) => {
      if (!ctx.t) return; // the backend is not available here; the target said why
      await body(ctx as { t: LimiterTarget; clock: ShiftedClock; limiter: RateLimiter });
    });

  it('allows up to the limit in a window, then refuses with retry_after, counting what remains', async ({
    limiter,
  }) => {
    const k = key();
    const rule = { limit: 3, windowMs: 10_000 };
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(k, rule));
    assert.equal(
      decisions.map((d) => d.allowed),
      [true, true, true, false],
    );
    assert.equal(
      decisions.map((d) => d.remaining),
      [2, 1, 0, 0],
    );
    assert.is(decisions[0]!.retryAfterSeconds, 0);
    assert.ok(
      decisions[3]!.retryAfterSeconds >= 9 && decisions[3]!.retryAfterSeconds <= 10,
      String(decisions[3]!.retryAfterSeconds),
    );
  });

  it('the window slides: a hit leaves the window windowMs after it was counted', async ({ limiter, clock }) => {
    const k = key();
    const rule = { limit: 2, windowMs: 10_000 };
    await limiter.consume(k, rule);
    clock.advance(6_000);
    await limiter.consume(k, rule);
    const refused = await limiter.consume(k, rule);
    assert.is(refused.allowed, false);
    assert.ok(refused.retryAfterSeconds >= 3 && refused.retryAfterSeconds <= 4, String(refused.retryAfterSeconds)); // the first leaves at 10 s
    clock.advance(4_100);
    assert.is((await limiter.consume(k, rule)).allowed, true);
    assert.is((await limiter.consume(k, rule)).allowed, false); // the second (at 6 s) is still in
  });

  it('a refused hit is not counted: hammering does not extend the block', async ({ limiter, clock }) => {
    const k = key();
    const rule = { limit: 1, windowMs: 5_000 };
    await limiter.consume(k, rule);
    for (let i = 0; i < 20; i++) await limiter.consume(k, rule);
    clock.advance(5_100);
    assert.is((await limiter.consume(k, rule)).allowed, true);
  });

  it('peek counts nothing; reset forgets; keys are independent', async ({ limiter }) => {
    const [a, b] = [key(), key()];
    const rule = { limit: 2, windowMs: 60_000 };
    for (let i = 0; i < 5; i++) assert.is((await limiter.peek(a, rule)).allowed, true);
    await limiter.consume(a, rule);
    await limiter.consume(a, rule);
    assert.is((await limiter.peek(a, rule)).allowed, false);
    assert.is((await limiter.consume(b, rule)).allowed, true);
    await limiter.reset(a);
    assert.is((await limiter.peek(a, rule)).allowed, true);
    assert.is((await limiter.peek(a, rule)).remaining, 2);
  });

  it('concurrent hits never exceed the limit', async ({ limiter }) => {
    const k = key();
    const rule = { limit: 10, windowMs: 60_000 };
    const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume(k, rule)));
    assert.is(decisions.filter((d) => d.allowed).length, 10);
  });

  test.run();
}
