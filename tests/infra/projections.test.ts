// The processor engine running projections, against a real PostgreSQL log.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PoolClient } from '../../infra/db/pool.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { createLogger } from '../../infra/logging.ts';
import { ProcessorEngine } from '../../infra/processors/engine.ts';
import { ProjectionTimeoutError, readCheckpoint, type Projection } from '../../infra/processors/projection.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/until.ts';
import { event } from './eventstore.contract.ts';
import type { Decider, DomainEvent } from '../../domain/shared/decider.ts';
import { CommandRunner } from '../../infra/commands.ts';

const quiet = createLogger({ sink: () => {} });

interface Ctx {
  db: TestDatabase;
  store: PostgresEventStore;
}
const test = suite<Ctx>('projection engine');

test.before.each(async (ctx) => {
  ctx.db = await freshDatabase('projections');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
  await ctx.db.pool.query(`CREATE TABLE tallies (stream text PRIMARY KEY, n int NOT NULL, last_type text NOT NULL);
    CREATE TABLE applied (event_id uuid PRIMARY KEY, seq bigserial)`);
});
test.after.each(async ({ db, store }) => {
  await store.close();
  await db.drop();
});

function tally(options: { failOn?: (e: RecordedEvent) => boolean } = {}): Projection {
  return {
    name: 'tally',
    handles: ['Counted', 'Named'],
    tables: ['tallies', 'applied'],
    async apply(e: RecordedEvent, tx: PoolClient) {
      if (options.failOn?.(e)) throw new Error('boom');
      await tx.query('INSERT INTO applied (event_id) VALUES ($1)', [e.id]);
      await tx.query(
        `INSERT INTO tallies (stream, n, last_type) VALUES ($1, 1, $2)
         ON CONFLICT (stream) DO UPDATE SET n = tallies.n + 1, last_type = $2`,
        [e.stream, e.type],
      );
    },
  };
}

const count = async (db: TestDatabase, table = 'applied') =>
  Number((await db.pool.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

test('catches up on existing events, then follows live appends; ignores types it does not handle', async ({
  db,
  store,
}) => {
  for (let i = 0; i < 30; i++) await store.append(`c-${i % 3}`, [event('Counted')], { expected: 'any' });
  await store.append('c-0', [event('Unrelated')], { expected: 'any' });
  const engine = new ProcessorEngine(store, db.pool, [tally()], quiet);
  engine.start();
  const live = await store.append('c-9', [event('Named')], { expected: 'any' });
  await engine.waitFor(live.position, ['Named']);
  assert.is(await count(db), 31);
  const rows = (await db.pool.query('SELECT stream, n FROM tallies ORDER BY stream')).rows;
  assert.equal(rows, [
    { stream: 'c-0', n: 10 },
    { stream: 'c-1', n: 10 },
    { stream: 'c-2', n: 10 },
    { stream: 'c-9', n: 1 },
  ]);
  await engine.stop();
});

test('a projection that throws half-way through a batch leaves no partial effect and resumes after restart', async ({
  db,
  store,
}) => {
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    const e = event('Counted', { i });
    ids.push(e.id);
    await store.append(`crash-${i}`, [e], { expected: 'no_stream' });
  }
  const poisoned = ids[12];
  const failing = new ProcessorEngine(store, db.pool, [tally({ failOn: (e) => e.id === poisoned })], quiet);
  failing.start();
  await new Promise((r) => setTimeout(r, 400));
  await failing.stop();
  // Whatever the batch boundaries were, the checkpoint and the tables agree: every applied event
  // lies at or before the checkpoint, every event before it is applied, the poisoned one is not.
  const checkpoint = await readCheckpoint(db.pool, 'tally');
  const applied = await count(db);
  const all = await store.readAll({ limit: 100 });
  const upToCheckpoint = checkpoint
    ? all.filter(
        (e) =>
          e.position.commit < checkpoint.commit ||
          (e.position.commit === checkpoint.commit && e.position.prepare <= checkpoint.prepare),
      ).length
    : 0;
  assert.is(applied, upToCheckpoint);
  assert.ok(applied < 13);
  assert.is(
    Number((await db.pool.query('SELECT count(*) FROM applied WHERE event_id = $1', [poisoned])).rows[0].count),
    0,
  );

  const healthy = new ProcessorEngine(store, db.pool, [tally()], quiet);
  healthy.start();
  await until('20 applied', async () => (await count(db)) === 20, 5000, 20);
  await new Promise((r) => setTimeout(r, 100));
  assert.is(await count(db), 20);
  assert.is(Number((await db.pool.query('SELECT sum(n) FROM tallies')).rows[0].sum), 20);
  await healthy.stop();
});

test('two engines: one runs the projection, the other stands by and takes over when it stops', async ({
  db,
  store,
}) => {
  const first = new ProcessorEngine(store, db.pool, [tally()], quiet);
  const second = new ProcessorEngine(store, db.pool, [tally()], quiet);
  first.start();
  await until('the first engine active', async () => first.isActive('tally'), 5000, 20);
  second.start();
  for (let i = 0; i < 50; i++) await store.append(`two-${i % 5}`, [event('Counted')], { expected: 'any' });
  await until('50 applied', async () => (await count(db)) === 50, 5000, 20);
  assert.ok(first.isActive('tally'));
  assert.not.ok(second.isActive('tally'));
  await first.stop();
  await until('the second engine active', async () => second.isActive('tally'), 6000, 20);
  const last = await store.append('two-x', [event('Counted')], { expected: 'any' });
  await second.waitFor(last.position, ['Counted']);
  assert.is(await count(db), 51); // each event applied exactly once across both engines
  await second.stop();
});

test('when the lock connection dies, the engine stops, takes the lock again and resumes, applying each event once', async ({
  db,
  store,
}) => {
  const engine = new ProcessorEngine(store, db.pool, [tally()], quiet);
  engine.start();
  const first = await store.append('lost-1', [event('Counted')], { expected: 'no_stream' });
  await engine.waitFor(first.position, ['Counted']);
  const { rows } = await db.pool.query(
    `SELECT pg_terminate_backend(l.pid) AS killed FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND a.datname = current_database()`,
  );
  assert.equal(
    rows.map((r) => r.killed),
    [true],
  );
  for (let i = 0; i < 10; i++) await store.append(`lost-${i + 2}`, [event('Counted')], { expected: 'no_stream' });
  await until('11 applied', async () => (await count(db)) === 11, 8000, 20);
  await until('the engine active again', async () => engine.isActive('tally'), 8000, 20);
  const last = await store.append('lost-final', [event('Counted')], { expected: 'no_stream' });
  await engine.waitFor(last.position, ['Counted'], 8000);
  assert.is(await count(db), 12);
  await engine.stop();
});

test('several projections losing their lock session at once: no double release, no uncaught error; each takes its lock again and goes on', async ({
  db,
  store,
}) => {
  // Every projection of a process holds its lock on one connection; when the server ends that
  // backend, all of them notice together, and the connection must go back to the pool once.
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('unhandledRejection', record);
  process.on('uncaughtException', record);
  const names = ['tally_a', 'tally_b', 'tally_c', 'tally_d'];
  await db.pool.query(
    'CREATE TABLE applied_by (projection text NOT NULL, event_id uuid NOT NULL, PRIMARY KEY (projection, event_id))',
  );
  const counting = (name: string): Projection => ({
    name,
    handles: ['Counted'],
    tables: [],
    async apply(e, tx) {
      await tx.query('INSERT INTO applied_by (projection, event_id) VALUES ($1, $2)', [name, e.id]);
    },
  });
  const engine = new ProcessorEngine(store, db.pool, names.map(counting), quiet);
  try {
    engine.start();
    await until('every projection active', async () => names.every((n) => engine.isActive(n)), 8000);
    const { rows } = await db.pool.query(
      `SELECT pg_terminate_backend(pid) AS killed FROM (SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND a.datname = current_database()) held`,
    );
    assert.equal(
      rows.map((r) => r.killed),
      [true],
      'one lock session held every lock',
    );
    await until(
      'every projection active again after the lock session was lost',
      async () => names.every((n) => engine.isActive(n)),
      8000,
    );
    const last = await store.append('after-loss', [event('Counted')], { expected: 'no_stream' });
    await engine.waitFor(last.position, ['Counted'], 8000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(uncaught.map(String), []);
    assert.is(await count(db, 'applied_by'), 4, 'the event applied once by each projection');
  } finally {
    process.off('unhandledRejection', record);
    process.off('uncaughtException', record);
    await engine.stop();
  }
});

test('a processor is registered once: a second registration of its name is refused; a reactor may be unregistered and registered again', async ({
  db,
  store,
}) => {
  const engine = new ProcessorEngine(store, db.pool, [tally()], quiet);
  assert.throws(
    () => engine.register([{ name: 'tally', handles: ['Counted'], async react() {} }]),
    /tally is registered already/,
  );
  assert.equal(
    engine.processors.map((p) => p.name),
    ['tally'],
  );
  // A reactor unregistered (its service stopped in this process) may be registered anew; a projection stays.
  engine.register([{ name: 'echo', handles: ['Counted'], async react() {} }]);
  await engine.unregister(['echo']);
  engine.register([{ name: 'echo', handles: ['Counted'], async react() {} }]);
  assert.equal(
    engine.reactors.map((r) => r.name),
    ['echo'],
  );
  await engine.unregister(['tally']).then(
    () => assert.unreachable('a projection unregistered'),
    (e: Error) => assert.match(e.message, /stays registered/),
  );
});

test('rebuild replays from the start and yields the same tables as the live run', async ({ db, store }) => {
  const engine = new ProcessorEngine(store, db.pool, [tally()], quiet);
  engine.start();
  let last;
  for (let i = 0; i < 120; i++)
    last = await store.append(`rb-${i % 7}`, [event(i % 4 ? 'Counted' : 'Named')], { expected: 'any' });
  await engine.waitFor(last!.position, ['Counted']);
  const dump = async () => (await db.pool.query('SELECT stream, n, last_type FROM tallies ORDER BY stream')).rows;
  const live = await dump();
  const liveCheckpoint = await readCheckpoint(db.pool, 'tally');
  // While it runs here, another process may not rebuild it.
  const other = new ProcessorEngine(store, db.pool, [tally()], quiet);
  try {
    await other.rebuild('tally');
    assert.unreachable('rebuild ran beside a live engine');
  } catch (error) {
    assert.match((error as Error).message, /running in another process/);
  }
  await engine.stop();
  assert.is(await other.rebuild('tally'), 120);
  assert.equal(await dump(), live);
  assert.equal(await readCheckpoint(db.pool, 'tally'), liveCheckpoint);
});

test('waitFor times out naming the projection when it cannot get there', async ({ db, store }) => {
  const engine = new ProcessorEngine(store, db.pool, [tally({ failOn: () => true })], quiet);
  engine.start();
  const { position } = await store.append(`t-${randomUUID()}`, [event('Counted')], { expected: 'no_stream' });
  try {
    await engine.waitFor(position, ['Counted'], 300);
    assert.unreachable('waitFor resolved');
  } catch (error) {
    assert.instance(error, ProjectionTimeoutError);
    assert.is((error as ProjectionTimeoutError).projection, 'tally');
  }
  await engine.waitFor(position, ['SomethingElse'], 100); // no projection handles it: nothing to wait for
  await engine.stop();
});

test('read-your-writes after a mixed append: a projection handling only its first event is waited for, not timed out', async ({
  db,
  store,
}) => {
  const engine = new ProcessorEngine(store, db.pool, [tally()], quiet);
  engine.start();
  try {
    const mixed: Decider<number, null, DomainEvent<'Counted' | 'Unrelated', Record<string, never>>> = {
      initialState: () => 0,
      evolve: (n) => n + 1,
      decide: () => [
        { type: 'Counted', data: {} },
        { type: 'Unrelated', data: {} },
      ],
    };
    const commands = new CommandRunner(store, (events) => engine.waitForEvents(events, 3000));
    const stream = `mixed-${randomUUID()}`;
    // Waiting for the append's last event (which tally never handles) would end in ProjectionTimeoutError.
    await commands.run(stream, mixed, null, { actor: { kind: 'system', id: 'test' }, correlationId: null });
    assert.is(Number((await db.pool.query('SELECT n FROM tallies WHERE stream = $1', [stream])).rows[0]?.n), 1);
  } finally {
    await engine.stop();
  }
});

test('a weighted projection: batches stop growing at maxBatchWeight, live and in a rebuild', async ({ db, store }) => {
  await db.pool.query('CREATE TABLE weighed (event_id uuid PRIMARY KEY)');
  const batches: number[][] = [];
  const weighted: Projection = {
    name: 'weighed',
    handles: ['Counted'],
    tables: ['weighed'],
    async apply(e, tx) {
      await this.applyBatch!([e], tx);
    },
    async applyBatch(events, tx) {
      batches.push(events.map((e) => Number(e.data.w)));
      for (const e of events) await tx.query('INSERT INTO weighed (event_id) VALUES ($1)', [e.id]);
    },
    weigh: (e) => Number(e.data.w),
    maxBatchWeight: 10,
  };
  // A batch closes once it weighs 10 or more: every batch but the last weighs that much, and
  // weighed under 10 before its last event.
  const wellCut = () =>
    batches.every((b, i) => {
      const total = b.reduce((x, y) => x + y, 0);
      return total - b[b.length - 1]! < 10 && (i === batches.length - 1 || total >= 10);
    });
  // Appended before the engine starts, so the catch-up could take them all in one batch.
  for (let i = 0; i < 12; i++)
    await store.append(`w-${i}`, [event('Counted', { w: i === 5 ? 25 : 3 })], { expected: 'no_stream' });
  const engine = new ProcessorEngine(store, db.pool, [weighted], quiet);
  engine.start();
  await until('12 weighed', async () => (await count(db, 'weighed')) === 12, 5000, 20);
  await engine.stop();
  assert.ok(batches.length >= 4 && wellCut(), JSON.stringify(batches));
  batches.length = 0;
  assert.is(await engine.rebuild('weighed'), 12);
  assert.ok(batches.length >= 4 && wellCut(), JSON.stringify(batches));
});

/** A projection whose batches are one statement: two independent inserts beside the checkpoint move. */
const oneStatement = (batches: number[] = []): Projection => ({
  name: 'one_statement',
  handles: ['Counted'],
  tables: ['applied', 'tallies'],
  apply() {
    throw new Error('every batch goes as one statement');
  },
  batchStatement(events) {
    batches.push(events.length);
    return {
      writes: [
        'INSERT INTO applied (event_id) SELECT unnest($1::uuid[])',
        `INSERT INTO tallies (stream, n, last_type) SELECT s, 1, 'Counted' FROM unnest($2::text[]) AS s`,
      ],
      values: [events.map((e) => e.id), events.map((e) => e.stream)],
    };
  },
});

test('a one-statement batch: applied with its checkpoint, live and in a rebuild (equal)', async ({ db, store }) => {
  const batches: number[] = [];
  const engine = new ProcessorEngine(store, db.pool, [oneStatement(batches)], quiet);
  engine.start();
  let last;
  for (let i = 0; i < 30; i++) last = await store.append(`one-${i}`, [event('Counted')], { expected: 'no_stream' });
  await engine.waitFor(last!.position, ['Counted']);
  await engine.stop();
  const dump = async () => ({
    applied: (await db.pool.query('SELECT event_id FROM applied ORDER BY seq')).rows,
    tallies: (await db.pool.query('SELECT stream, n FROM tallies ORDER BY stream')).rows,
  });
  const live = await dump();
  assert.is(live.applied.length, 30);
  assert.equal(await readCheckpoint(db.pool, 'one_statement'), last!.position);
  assert.is(
    batches.reduce((a, b) => a + b, 0),
    30,
  );
  assert.is(await engine.rebuild('one_statement'), 30);
  assert.equal(await dump(), live);
  assert.equal(await readCheckpoint(db.pool, 'one_statement'), last!.position);
});

test('a one-statement batch whose checkpoint moved under it writes nothing and fails', async ({ db, store }) => {
  const projection = oneStatement();
  const engine = new ProcessorEngine(store, db.pool, [projection], quiet);
  const first = await store.append('moved-1', [event('Counted')], { expected: 'no_stream' });
  const second = await store.append('moved-2', [event('Counted')], { expected: 'no_stream' });
  assert.is(await engine.drain('one_statement'), 2);
  const [recorded] = await store.readStream('moved-2');
  // As a process whose checkpoint is stale would: the batch after `first`, when it is at `second` already.
  const apply = (engine as unknown as { applyBatch: (...args: unknown[]) => Promise<void> }).applyBatch.bind(engine);
  try {
    await apply(projection, [{ ...recorded!, id: randomUUID() }], first.position);
    assert.unreachable('applied past a moved checkpoint');
  } catch (error) {
    assert.match((error as Error).message, /one_statement: checkpoint moved under us/);
  }
  assert.is(await count(db), 2);
  assert.equal(await readCheckpoint(db.pool, 'one_statement'), second.position);
  // And the first batch of a projection that has a checkpoint already (its insert conflicts).
  try {
    await apply(projection, [{ ...recorded!, id: randomUUID() }], null);
    assert.unreachable('applied over an existing checkpoint');
  } catch (error) {
    assert.match((error as Error).message, /checkpoint moved under us/);
  }
  assert.is(await count(db), 2);
});

test.run();
