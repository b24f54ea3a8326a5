// The PostgreSQL adapter: the shared contract, plus what only this adapter must prove.

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { event, eventStoreContract, readAllPages, take } from './eventstore.contract.ts';

eventStoreContract('postgres', async () => {
  const db = await freshDatabase('contract_pg');
  const store = new PostgresEventStore(db.pool, db.url);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await db.drop();
    },
  };
});

const test = suite<{ db: TestDatabase; store: PostgresEventStore }>(
  'eventstore postgres: late commits and immutability',
);
test.before(async (ctx) => {
  ctx.db = await freshDatabase('pg_specific');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
});
test.after(async ({ db, store }) => {
  await store.close();
  await db.drop();
});

async function openClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const INSERT = `INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
  VALUES ($1, 0, $2, $3, '{}', '{"actor":{"kind":"system","id":null},"schema":1}') RETURNING position`;

test('two appends committing in the opposite order of their positions: a subscriber sees both, once each, in order', async ({
  db,
  store,
}) => {
  const category = `late${randomUUID().slice(0, 8)}`;
  const sub = store.subscribe({ after: 'start', filter: { streamPrefixes: [`${category}-`] } });
  const collecting = take(sub, 2, 8000);
  const early = await openClient(db.url);
  const late = await openClient(db.url);
  try {
    await early.query('BEGIN');
    const p1 = (await early.query(INSERT, [`${category}-a`, randomUUID(), 'First'])).rows[0].position;
    await late.query('BEGIN');
    const p2 = (await late.query(INSERT, [`${category}-b`, randomUUID(), 'Second'])).rows[0].position;
    assert.ok(BigInt(p1) < BigInt(p2));
    await late.query('COMMIT'); // the higher position commits first
    await new Promise((r) => setTimeout(r, 300)); // a position-only reader would pass p1 here
    await early.query('COMMIT');
  } finally {
    await early.end();
    await late.end();
  }
  const got = await collecting;
  await sub.close();
  assert.equal(
    got.map((e) => e.type),
    ['First', 'Second'],
  );
});

test('a transaction that took its id first but inserts last is not skipped either', async ({ db, store }) => {
  const category = `xid${randomUUID().slice(0, 8)}`;
  const sub = store.subscribe({ after: 'start', filter: { streamPrefixes: [`${category}-`] } });
  const collecting = take(sub, 2, 8000);
  const older = await openClient(db.url);
  const younger = await openClient(db.url);
  try {
    await older.query('BEGIN');
    await older.query('SELECT pg_current_xact_id()'); // older transaction id
    await younger.query('BEGIN');
    await younger.query(INSERT, [`${category}-y`, randomUUID(), 'Younger']); // lower position
    await younger.query('COMMIT');
    await new Promise((r) => setTimeout(r, 300));
    await older.query(INSERT, [`${category}-o`, randomUUID(), 'Older']);
    await older.query('COMMIT');
  } finally {
    await older.end();
    await younger.end();
  }
  const got = await collecting;
  await sub.close();
  assert.is(got.length, 2);
  assert.is(new Set(got.map((e) => e.id)).size, 2);
  assert.equal(got.map((e) => e.type).sort(), ['Older', 'Younger']);
});

test('a filtered subscription that skipped past unrelated events still gets a late-committing match', async ({
  db,
  store,
}) => {
  const category = `skip${randomUUID().slice(0, 8)}`;
  const sub = store.subscribe({ after: 'start', filter: { eventTypes: [`Wanted_${category}`] } });
  const collecting = take(sub, 2, 8000);
  await store.append(`${category}-first`, [event(`Wanted_${category}`)], { expected: 'no_stream' });
  const late = await openClient(db.url);
  try {
    await late.query('BEGIN');
    await late.query(INSERT, [`${category}-late`, randomUUID(), `Wanted_${category}`]); // older transaction, still open
    // Unrelated events commit meanwhile; the subscriber's cursor moves over them.
    for (let i = 0; i < 20; i++)
      await store.append(`${category}-noise-${i}`, [event('Noise')], { expected: 'no_stream' });
    await new Promise((r) => setTimeout(r, 300));
    await late.query('COMMIT');
  } finally {
    await late.end();
  }
  const got = await collecting;
  await sub.close();
  assert.equal(
    got.map((e) => e.stream),
    [`${category}-first`, `${category}-late`],
  );
});

test('paging across a power of ten in positions neither repeats nor skips (numeric order)', async ({ db, store }) => {
  const { rows } = await db.pool.query(`SELECT coalesce(max(position), 0) AS max FROM events`);
  const next = 10 ** String(Number(rows[0].max) + 20).length; // the next power of ten ahead
  await db.pool.query(`SELECT setval(pg_get_serial_sequence('events', 'position'), $1)`, [next - 5]);
  const category = `pow${randomUUID().slice(0, 8)}`;
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    const e = event('Crossing', { i });
    ids.push(e.id);
    await store.append(`${category}-${i}`, [e], { expected: 'no_stream' });
  }
  const seen = await readAllPages(store, { streamPrefixes: [`${category}-`] }, 3);
  assert.equal(
    seen.map((e) => e.id),
    ids,
  );
  const head = await store.headPosition();
  assert.is(head!.prepare, BigInt(next + 5)); // setval(n): the next position is n + 1
});

test('rows of the log cannot be updated, deleted or truncated', async ({ db, store }) => {
  const s = `immutable-${randomUUID()}`;
  await store.append(s, [event()], { expected: 'no_stream' });
  for (const sql of [
    `UPDATE events SET type = 'Changed' WHERE stream_id = '${s}'`,
    `DELETE FROM events WHERE stream_id = '${s}'`,
    'TRUNCATE events',
  ]) {
    try {
      await db.pool.query(sql);
      assert.unreachable(sql);
    } catch (error) {
      assert.match((error as Error).message, /append-only/);
    }
  }
  assert.is((await store.readStream(s)).length, 1);
});

test('the expectation is enforced by the database: a racing insert at the same revision fails', async ({ db }) => {
  const s = `race-${randomUUID()}`;
  await db.pool.query(INSERT, [s, randomUUID(), 'One']);
  try {
    await db.pool.query(INSERT, [s, randomUUID(), 'Two']);
    assert.unreachable('duplicate revision accepted');
  } catch (error) {
    assert.is((error as { code?: string }).code, '23505');
  }
});

test.run();
