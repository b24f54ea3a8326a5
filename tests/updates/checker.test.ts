// The check schedule under an injected clock and wait: a check at startup, then every interval
// plus 0-10% (6-6.6 h by default), the 900 s floor, `off`, and one instance checking at a time.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseCheckInterval } from '../../domain/updates/schedule.ts';
import { UpdateChecker } from '../../infra/updates/checker.ts';
import { startTestApps, type TestServices } from '../support/services.ts';
import { payload, releaseKeys, sign, StaticHost, type ReleaseKeys } from '../support/updates.ts';
import { until } from '../support/until.ts';
import { ed25519 } from '@noble/curves/ed25519.js';

interface Ctx {
  s: TestServices;
  host: StaticHost;
  keys: ReleaseKeys;
}
const test = suite<Ctx>('updates: the check schedule');
test.before(async (ctx) => {
  ctx.keys = await releaseKeys();
  ctx.host = await new StaticHost().start();
  ctx.host.channel('stable', sign(ctx.keys, payload({ version: '0.5.0' })));
  ctx.s = await startTestApps('updates_checker');
});
test.after(async ({ s, host }) => {
  await s?.close();
  await host.stop();
});

/** A wait that records its delay, moves the clock by it, and resolves when the test says. */
function scripted(s: TestServices) {
  const delays: number[] = [];
  let wake: (() => void) | null = null;
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      delays.push(ms);
      wake = () => {
        s.clock.advance(ms);
        resolve();
      };
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  return { delays, sleep, wakeUp: () => wake?.() };
}

const checks = async (s: TestServices) =>
  Number((await s.db.pool.query(`SELECT count(*) FROM events WHERE type = 'UpdateCheckCompleted'`)).rows[0].count);

function checker(
  ctx: Ctx,
  interval: string | undefined,
  random: number,
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
) {
  const p = ctx.s.platform;
  return new UpdateChecker({
    service: 'orch',
    channel: { channel: 'stable', host: ctx.host.url, sidecarUrl: '', tokenFile: null },
    schedule: parseCheckInterval(interval),
    publicKey: ed25519.getPublicKey(ctx.keys.secretKey),
    commands: p.commands,
    db: p.pool,
    clock: ctx.s.clock,
    log: p.log,
    gate: p.gate,
    random: () => random,
    sleep,
  });
}

test('at startup, then after 6 h plus the jitter (6-6.6 h); next_check_at says when', async (ctx) => {
  const { s } = ctx;
  const before = await checks(s);
  const w = scripted(s);
  const c = checker(ctx, undefined, 0.5, w.sleep);
  c.start();
  await until(
    'the first check and its sleep',
    async () => (await checks(s)) === before + 1 && w.delays.length === 1,
    10_000,
    20,
  );
  assert.is(w.delays[0], Math.round(6.3 * 3_600_000));
  assert.is(c.nextCheckAt!.getTime() - s.clock.now().getTime() <= 6.3 * 3_600_000, true);
  w.wakeUp();
  await until(
    'the second check and its sleep',
    async () => (await checks(s)) === before + 2 && w.delays.length === 2,
    10_000,
    20,
  );
  await c.stop();
  const jitterless = scripted(s);
  const max = checker(ctx, undefined, 0.9999, jitterless.sleep);
  max.start();
  await until('the first sleep', async () => jitterless.delays.length === 1, 10_000, 20);
  assert.ok(jitterless.delays[0]! >= 6 * 3_600_000 && jitterless.delays[0]! <= 6.6 * 3_600_000);
  await max.stop();
});

test('values under 900 are raised to 900; off runs no background check', async (ctx) => {
  const w = scripted(ctx.s);
  const c = checker(ctx, '60', 0, w.sleep);
  assert.is(c.intervalSecs, 900);
  c.start();
  await until('the first sleep', async () => w.delays.length === 1, 10_000, 20);
  assert.is(w.delays[0], 900_000);
  await c.stop();
  const off = scripted(ctx.s);
  const none = checker(ctx, 'off', 0, off.sleep);
  assert.is(none.background, false);
  none.start();
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(off.delays, []);
  assert.is(none.nextCheckAt, null);
});

test('one instance checks: a scheduled tick right after another instance checked is skipped; maintenance pauses checks', async (ctx) => {
  const w = scripted(ctx.s);
  const a = checker(ctx, undefined, 0, w.sleep);
  const b = checker(ctx, undefined, 0, w.sleep);
  assert.is(await a.tick('startup'), 'checked');
  assert.is(await b.tick('scheduled'), 'skipped');
  ctx.s.platform.gate.set(true, 'x');
  try {
    assert.is(await a.tick('startup'), 'skipped');
  } finally {
    ctx.s.platform.gate.set(false, null);
  }
});

test.run();
