// Statements pipelined on one connection (infra/db/pipeline.ts) against a real PostgreSQL.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Pipeline } from '../../infra/db/pipeline.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const test = suite<{ db: TestDatabase }>('statement pipeline');

test.before.each(async (ctx) => {
  ctx.db = await freshDatabase('pipeline');
});
test.after.each(async ({ db }) => {
  await db.drop();
});

test('send returns once the statement before completed, with the new one running on the server', async ({ db }) => {
  const blocker = await db.pool.connect();
  const client = await db.pool.connect();
  try {
    await blocker.query('SELECT pg_advisory_lock(4242)');
    const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const pipeline = new Pipeline();
    await client.query('CREATE TEMP TABLE steps (n int)');
    await pipeline.send(client.query('INSERT INTO steps VALUES (1)'));
    // The second statement waits on the lock: `send` must come back while it is in flight.
    await pipeline.send(client.query('SELECT pg_advisory_lock(4242), 2 AS n'));
    const activity = await db.pool.query<{ query: string; wait_event_type: string | null }>(
      'SELECT query, wait_event_type FROM pg_stat_activity WHERE pid = $1',
      [pid],
    );
    assert.match(activity.rows[0]!.query, /pg_advisory_lock\(4242\), 2 AS n/);
    assert.is(activity.rows[0]!.wait_event_type, 'Lock');
    await blocker.query('SELECT pg_advisory_unlock(4242)');
    await pipeline.send(client.query('INSERT INTO steps VALUES (3)'));
    await pipeline.drain();
    const { rows } = await client.query<{ n: number }>('SELECT n FROM steps ORDER BY n');
    assert.equal(
      rows.map((r) => r.n),
      [1, 3],
    );
  } finally {
    blocker.release();
    client.release();
  }
});

test('a failing statement is reported by drain (once), not as an unhandled rejection', async ({ db }) => {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const pipeline = new Pipeline();
    await pipeline.send(client.query('SELECT 1'));
    await pipeline.send(client.query('SELECT 1 / 0'));
    // The statements after the failure fail too (the transaction is aborted), and stay handled.
    let error: Error | null = null;
    try {
      await pipeline.send(client.query('SELECT 2'));
      await pipeline.send(client.query('SELECT 3'));
      await pipeline.drain();
    } catch (e) {
      error = e as Error;
    }
    assert.match(error?.message ?? '', /division by zero/);
    await client.query('ROLLBACK');
    // Give any stray rejection a turn to surface (uvu fails the run on one).
    await new Promise((r) => setImmediate(r));
  } finally {
    client.release();
  }
});

test.run();
