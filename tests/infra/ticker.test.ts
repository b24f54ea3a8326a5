// infra/ticker.ts: ticks while held, from the first holder to the last release.

import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ticker } from '../../infra/ticker.ts';

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('ticks only while held: the first hold starts it, the last release stops it', async () => {
  let ticks = 0;
  const ticker = new Ticker(10, () => void ticks++);
  await wait(40);
  assert.is(ticks, 0, 'no holder, no tick');
  const a = ticker.hold();
  const b = ticker.hold();
  assert.ok(ticker.running);
  await wait(60);
  assert.ok(ticks >= 2, `ticked ${ticks}`);
  a();
  a(); // a second release of the same holder is a no-op: b still holds it
  assert.ok(ticker.running, 'still held by b');
  const before = ticks;
  await wait(40);
  assert.ok(ticks > before, 'still ticking');
  b();
  assert.not.ok(ticker.running);
  const stopped = ticks;
  await wait(40);
  assert.is(ticks, stopped, 'no tick after the last release');
  // Held again: it starts again.
  const c = ticker.hold();
  await wait(40);
  assert.ok(ticks > stopped);
  c();
});

test('its timer never keeps the process alive (unref)', () => {
  const ticker = new Ticker(1000, () => {});
  const release = ticker.hold();
  const timer = (ticker as unknown as { timer: NodeJS.Timeout }).timer;
  assert.not.ok(timer.hasRef());
  release();
});

test.run();
