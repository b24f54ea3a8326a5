// The pool survives its connections being cut: a client that loses its backend while checked
// out (held idle as a lock session, or in the middle of a query) fails its holder's queries, but
// never ends the process, and the pool serves fresh connections afterwards. This is what a
// `pg_terminate_backend` by an operator, a failover or a network blip does.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createPool, type Pool } from '../../infra/db/pool.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/until.ts';

const test = suite<{ db: TestDatabase; pool: Pool }>('the pool when PostgreSQL cuts its connections');
test.before(async (ctx) => {
  ctx.db = await freshDatabase('pool_cut', { migrate: false });
  ctx.pool = createPool(ctx.db.url, { max: 4, application: 'orchard-pool-cut' });
});
test.after(async ({ db, pool }) => {
  await pool?.end();
  await db?.drop();
});

test('a checked-out client losing its backend (idle, and mid-query) does not end the process; the pool serves again', async ({
  db,
  pool,
}) => {
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const idle = await pool.connect();
    const busy = await pool.connect();
    const pids = [idle, busy].map((c) => (c as unknown as { processID: number }).processID);
    const sleeping = busy.query('SELECT pg_sleep(30)').then(
      () => 'finished',
      (error: Error) => error.message,
    );
    await db.pool.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
    assert.match(await sleeping, /terminat/i, 'the query in flight rejects');
    await until('the idle holder to learn its connection is gone', () =>
      idle.query('SELECT 1').then(
        () => false,
        () => true,
      ),
    );
    idle.release();
    busy.release();
    // Fresh connections replace the two the server cut (a query may still meet the busy one if it
    // is handed out before its socket's end is read: that query fails, and the pool drops it).
    const n = await until(
      'the pool to serve a query again',
      async () => (await pool.query<{ n: number }>('SELECT 41 + 1 AS n')).rows[0]!.n,
      10_000,
    );
    assert.is(n, 42);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(uncaught.map(String), []);
  } finally {
    process.off('uncaughtException', record);
  }
});

test.run();
