// The processor engine's reactors of scope `each` (infra/processors/reactor.ts): every process
// runs them, from the head, after reconciling; their periodic pass is the engine's.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PoolClient } from '../../infra/db/pool.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { createLogger } from '../../infra/logging.ts';
import { ProcessorEngine } from '../../infra/processors/engine.ts';
import type { Projection } from '../../infra/processors/projection.ts';
import type { Reactor } from '../../infra/processors/reactor.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/until.ts';
import { event } from './eventstore.contract.ts';

const quiet = createLogger({ sink: () => {} });

interface Ctx {
  db: TestDatabase;
  store: PostgresEventStore;
}
const test = suite<Ctx>('processor engine: reactors in each process');

test.before.each(async (ctx) => {
  ctx.db = await freshDatabase('processors_each');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
});
test.after.each(async ({ db, store }) => {
  await store.close();
  await db.drop();
});

/** An each-instance reactor that records what it was asked to do. */
function recorder(options: Partial<Reactor> = {}) {
  const seen: string[] = [];
  let reconciled = 0;
  let passes = 0;
  const reactor: Reactor = {
    name: 'sockets',
    handles: ['Counted'],
    scope: 'each',
    async react(events: RecordedEvent[]) {
      seen.push(...events.map((e) => e.stream));
    },
    async reconcile() {
      reconciled++;
    },
    ...options,
  };
  return { reactor, seen, reconciled: () => reconciled, passes: () => passes, pass: async () => void passes++ };
}

test('runs in two engines at once: each reconciles, then acts on every live event; history is not handed over', async ({
  db,
  store,
}) => {
  await store.append('before', [event('Counted')], { expected: 'any' });
  const a = recorder();
  const b = recorder();
  const one = new ProcessorEngine(store, db.pool, [], quiet);
  const two = new ProcessorEngine(store, db.pool, [], quiet);
  one.register([a.reactor]);
  two.register([b.reactor]);
  one.start();
  two.start();
  try {
    await Promise.all([one.whenLive('sockets'), two.whenLive('sockets')]);
    assert.is(a.reconciled(), 1);
    assert.is(b.reconciled(), 1);
    assert.ok(one.isActive('sockets') && two.isActive('sockets'), 'active in both: no lock');
    await store.append('live-1', [event('Counted')], { expected: 'any' });
    await store.append('other', [event('Unrelated')], { expected: 'any' });
    const last = await store.append('live-2', [event('Counted')], { expected: 'any' });
    await until('both engines acted on both live events', async () => a.seen.length === 2 && b.seen.length === 2, 8000);
    assert.equal(a.seen, ['live-1', 'live-2']);
    assert.equal(b.seen, ['live-1', 'live-2']);
    // Its only checkpoint is the process's own: nothing stored.
    assert.equal(one.position('sockets'), last.position);
    assert.is((await db.pool.query('SELECT count(*)::int AS n FROM chat_reactor_checkpoints')).rows[0].n, 0);
  } finally {
    await one.stop();
    await two.stop();
  }
  assert.not.ok(one.isActive('sockets'));
});

test('a failed batch is handed over again, after reconciling again, from where this process was', async ({
  db,
  store,
}) => {
  let fail = true;
  const r = recorder({
    async react(events: RecordedEvent[]) {
      if (fail) {
        fail = false;
        throw new Error('boom');
      }
      r.seen.push(...events.map((e) => e.stream));
    },
  });
  const engine = new ProcessorEngine(store, db.pool, [], quiet);
  engine.register([r.reactor]);
  engine.start();
  try {
    await engine.whenLive('sockets');
    await store.append('x', [event('Counted')], { expected: 'any' });
    await until('handed over again', async () => r.seen.length === 1, 8000);
    assert.equal(r.seen, ['x']);
    assert.is(r.reconciled(), 2);
    assert.is(engine.health('sockets').errors, 1);
  } finally {
    await engine.stop();
  }
});

test('the periodic pass runs every `ms` while the reactor runs, never beside react, and stops with it', async ({
  db,
  store,
}) => {
  let inside = 0;
  let overlapped = false;
  const guard = async (work: () => Promise<void>) => {
    if (inside++) overlapped = true;
    await new Promise((r) => setTimeout(r, 5));
    await work();
    inside--;
  };
  const r = recorder();
  let passes = 0;
  const reactor: Reactor = {
    ...r.reactor,
    react: (events) => guard(() => r.reactor.react(events)),
    every: { ms: 20, run: () => guard(async () => void passes++) },
  };
  const engine = new ProcessorEngine(store, db.pool, [], quiet);
  engine.register([reactor]);
  engine.start();
  await engine.whenLive('sockets');
  for (let i = 0; i < 10; i++) await store.append(`s-${i}`, [event('Counted')], { expected: 'any' });
  await until('a few passes', async () => passes >= 3 && r.seen.length === 10, 8000);
  await engine.stop();
  const after = passes;
  await new Promise((r) => setTimeout(r, 100));
  assert.is(passes, after, 'no pass after stop()');
  assert.not.ok(overlapped, 'react and the pass take turns');
});

test('afterProjections: a batch waits for the projections that handle its events', async ({ db, store }) => {
  await db.pool.query('CREATE TABLE slow_rows (stream text PRIMARY KEY)');
  const slow: Projection = {
    name: 'slow',
    handles: ['Counted'],
    tables: ['slow_rows'],
    async apply(e: RecordedEvent, tx: PoolClient) {
      await new Promise((r) => setTimeout(r, 100));
      await tx.query('INSERT INTO slow_rows (stream) VALUES ($1)', [e.stream]);
    },
  };
  const found: boolean[] = [];
  const engine = new ProcessorEngine(store, db.pool, [slow], quiet);
  engine.register([
    {
      name: 'reads-slow',
      handles: ['Counted'],
      scope: 'each',
      afterProjections: true,
      async react(events) {
        for (const e of events)
          found.push((await db.pool.query('SELECT 1 FROM slow_rows WHERE stream = $1', [e.stream])).rowCount === 1);
      },
    },
  ]);
  engine.start();
  try {
    await engine.whenLive('reads-slow');
    await store.append('r-1', [event('Counted')], { expected: 'any' });
    await until('acted on', async () => found.length === 1, 8000);
    assert.equal(found, [true]);
  } finally {
    await engine.stop();
  }
});

test('registration: a name once across both scopes; reconcile and every only with scope each; nothing to drain', async ({
  db,
  store,
}) => {
  const engine = new ProcessorEngine(store, db.pool, [], quiet);
  engine.register([recorder().reactor]);
  assert.throws(
    () => engine.register([{ name: 'sockets', handles: ['Counted'], async react() {} }]),
    /sockets is registered already/,
  );
  assert.throws(
    () =>
      engine.register([
        { name: 'timer', handles: ['Counted'], async react() {}, every: { ms: 10, run: async () => {} } },
      ]),
    /scope each/,
  );
  await engine.drain('sockets').then(
    () => assert.unreachable('drained'),
    (e: Error) => assert.match(e.message, /nothing to drain/),
  );
  await engine.stop();
});

test.run();
