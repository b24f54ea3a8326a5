// `orchard dev esdb`, as a newcomer runs it: the EventStoreDB test double on a port, announced
// as a test double; a service started with EVENTSTORE_URL pointing at it writes its log there
// (not to PostgreSQL) and reads its own writes back through HTTP. Bad arguments get the usage.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { userStream } from '../../domain/orchestration/streams.ts';
import { EventStoreDbEventStore } from '../../infra/eventstore/eventstoredb.ts';
import { orchard, startOrchard, type RunningOrchard } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { http } from '../support/services.ts';

const ADMIN_KEY = 'orch_dev-esdb-admin-key-000000000000000';

const test = suite<{ dev?: RunningOrchard; db?: TestDatabase; orch?: ServiceProcess }>('orchard dev esdb');

test.after(async (ctx) => {
  await ctx.orch?.stop();
  if (ctx.dev && ctx.dev.child.exitCode === null) {
    ctx.dev.child.kill('SIGTERM');
    await ctx.dev.exited;
  }
  await ctx.db?.drop();
});

test('the double on a port, labelled as one; a service on it appends through HTTP and reads back; SIGTERM stops it', async (ctx) => {
  ctx.dev = startOrchard(['dev', 'esdb', '--port', '0']);
  const dev = ctx.dev;
  const url = await dev.waitFor(
    'dev esdb to listen',
    () => /listening\s+(esdb:\/\/127\.0\.0\.1:\d+\?tls=false)/.exec(dev.output())?.[1],
    60_000,
  );
  assert.match(dev.output(), /TEST DOUBLE, not a server/);

  ctx.db = await freshDatabase('dev_esdb');
  ctx.orch = await startServiceProcess('orch', ctx.db.url, { EVENTSTORE_URL: url, ADMIN_API_KEY: ADMIN_KEY });
  const username = `newcomer-${randomUUID().slice(0, 8)}`;
  const created = await http(`${ctx.orch.url}/api/v1/admin/users`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username, email: `${username}@example.test`, role: 'user', password: `pw-${randomUUID()}` },
  });
  assert.is(created.status, 201, created.text);
  // Read-your-writes through the service: the projection followed the double's log.
  const listed = await http(`${ctx.orch.url}/api/v1/admin/users`, { headers: { 'X-API-Key': ADMIN_KEY } });
  assert.is(listed.status, 200, listed.text);
  assert.ok(JSON.stringify(listed.body).includes(username), listed.text);

  // The event is in the double, and PostgreSQL's log table stayed empty.
  const store = new EventStoreDbEventStore(url);
  try {
    assert.equal(
      (await store.readStream(userStream(created.body.id))).map((e) => e.type),
      ['UserCreated'],
    );
  } finally {
    await store.close();
  }
  assert.is((await ctx.db.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n, 0);

  await ctx.orch.stop();
  ctx.orch = undefined;
  dev.child.kill('SIGTERM');
  assert.is(await dev.exited, 0);
});

test('bad arguments: the usage, exit 2', async () => {
  for (const args of [
    ['dev'],
    ['dev', 'postgres'],
    ['dev', 'esdb', '--port', 'many'],
    ['dev', 'esdb', '--port', '70000'],
  ]) {
    const r = await orchard({}, ...args);
    assert.is(r.code, 2, args.join(' '));
    assert.match(r.stderr, /usage: orchard dev esdb \[--port N\].*TEST DOUBLE/);
  }
});

test.run();
