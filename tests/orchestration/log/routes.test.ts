// The auditors' routes (in-process): GET /api/v1/admin/events (filters, paging by position,
// until a position or an instant) and GET /api/v1/admin/streams/{stream}?as_of= (events then and
// the folded state), and who may call them.

import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ORCH_STREAMS, userStream } from '../../../domain/orchestration/streams.ts';
import { createAccount, type Account } from '../../support/principals.ts';
import { http, loggedEvents, startTestApps, type TestServices } from '../../support/services.ts';
import { logOnEsdb } from '../../support/test-log.ts';

const ADMIN_KEY = 'orch_log-routes-admin-key-00000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };

const test = suite<{ s: TestServices; user: Account }>('log: admin events and streams as of');
test.before(async (ctx) => {
  ctx.s = await startTestApps('log_routes', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user');
});
test.after(async ({ s }) => s?.close());

const events = (s: TestServices, query: string, headers: Record<string, string> = admin) =>
  http(`${s.orch}/api/v1/admin/events${query}`, { headers });

test('events: the raw log in order, filtered by stream and type; personal fields included for the admin', async ({
  s,
  user,
}) => {
  const all = await events(s, '?limit=1000');
  assert.is(all.status, 200, all.text);
  const positions = all.body.events.map((e: { position: string }) => e.position);
  assert.ok(positions.length > 3);
  assert.is(positions.length, (await loggedEvents(s)).length);
  assert.is(all.body.next_from, null);

  const mine = await events(s, `?stream=${userStream(user.id)}`);
  assert.equal(
    mine.body.events.map((e: { type: string }) => e.type),
    ['UserCreated'],
  );
  assert.is(mine.body.events[0].data.email, user.email);
  assert.equal(Object.keys(mine.body.events[0]), [
    'position',
    'stream',
    'revision',
    'id',
    'type',
    'data',
    'metadata',
    'created_at',
  ]);
  assert.is(mine.body.events[0].revision, '0');

  const typed = await events(s, '?type=UserCreated&type=SessionStarted');
  assert.ok(typed.body.events.length >= 2);
  assert.ok(typed.body.events.every((e: { type: string }) => e.type === 'UserCreated' || e.type === 'SessionStarted'));
  // `stream` is exact: a prefix of a stream name matches nothing.
  assert.equal((await events(s, `?stream=${userStream(user.id).slice(0, -2)}`)).body.events, []);
});

test('events: filtered by declared stream category; an unknown category is refused, naming where they are listed', async ({
  s,
  user,
}) => {
  const users = await events(s, `?category=${ORCH_STREAMS.user.category}&limit=1000`);
  assert.is(users.status, 200, users.text);
  assert.ok(users.body.events.some((e: { stream: string }) => e.stream === userStream(user.id)));
  assert.ok(users.body.events.every((e: { stream: string }) => e.stream.startsWith(ORCH_STREAMS.user.prefix)));
  const two = await events(
    s,
    `?category=${ORCH_STREAMS.user.category}&category=${ORCH_STREAMS.username_reservation.category}&limit=1000`,
  );
  assert.ok(
    two.body.events.some((e: { stream: string }) => e.stream.startsWith(ORCH_STREAMS.username_reservation.prefix)),
  );
  assert.is(
    two.body.events.length,
    users.body.events.length +
      (await events(s, `?category=${ORCH_STREAMS.username_reservation.category}&limit=1000`)).body.events.length,
  );
  const unknown = await events(s, '?category=user');
  assert.is(unknown.status, 400);
  assert.match(unknown.body.message, /user is not a declared stream category \(see docs\/reference\/streams\.md\)/);
  assert.is((await events(s, `?category=orch.user&stream=${userStream(user.id)}`)).status, 400);
});

test('events: pages by position; from is exclusive, until inclusive (position or instant)', async ({ s }) => {
  const all = (await events(s, '?limit=1000')).body.events as { position: string; created_at: string }[];
  const seen: string[] = [];
  let from: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const page = await events(s, `?limit=2${from ? `&from=${from}` : ''}`);
    assert.is(page.status, 200);
    seen.push(...page.body.events.map((e: { position: string }) => e.position));
    from = page.body.next_from;
    if (!from) break;
  }
  assert.equal(
    seen,
    all.map((e) => e.position),
  );

  const until = await events(s, `?until=${all[2]!.position}`);
  assert.equal(
    until.body.events.map((e: { position: string }) => e.position),
    all.slice(0, 3).map((e) => e.position),
  );
  assert.is(until.body.next_from, null);
  const after = await events(s, `?from=${all[0]!.position}&until=${all[2]!.position}`);
  assert.equal(
    after.body.events.map((e: { position: string }) => e.position),
    all.slice(1, 3).map((e) => e.position),
  );
  assert.equal((await events(s, '?until=2000-01-01T00:00:00Z')).body.events, []);
  assert.is((await events(s, `?until=${new Date(Date.now() + 60_000).toISOString()}`)).body.events.length, all.length);
  // limit clamps; unreadable positions are 400
  assert.is((await events(s, '?limit=0')).body.limit, 1);
  assert.is((await events(s, '?limit=5000')).body.limit, 1000);
  for (const bad of ['?from=yesterday', '?until=soon', '?from=1/']) {
    const r = await events(s, bad);
    assert.is(r.status, 400, bad);
    assert.is(r.body.error, 'validation_failed');
  }
});

test('streams/{stream}?as_of: the events then and the folded state; 404 before the stream began', async ({
  s,
  user,
}) => {
  const stream = userStream(user.id);
  const before = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 20));
  const changed = await http(`${s.orch}/api/v1/admin/users/${user.id}`, {
    method: 'PATCH',
    headers: admin,
    json: { role: 'readonly' },
  });
  assert.is(changed.status, 200, changed.text);

  const then = await http(`${s.orch}/api/v1/admin/streams/${stream}?as_of=${encodeURIComponent(before)}`, {
    headers: admin,
  });
  assert.is(then.status, 200, then.text);
  assert.equal(
    then.body.events.map((e: { type: string }) => e.type),
    ['UserCreated'],
  );
  assert.is(then.body.state.role, 'user');
  assert.is(then.body.as_of, before);

  const now = await http(`${s.orch}/api/v1/admin/streams/${stream}`, { headers: admin });
  assert.equal(
    now.body.events.map((e: { type: string }) => e.type),
    ['UserCreated', 'UserRoleChanged'],
  );
  assert.is(now.body.state.role, 'readonly');

  const early = await http(`${s.orch}/api/v1/admin/streams/${stream}?as_of=2000-01-01T00:00:00Z`, { headers: admin });
  assert.is(early.status, 404);
  assert.is(early.body.error, 'stream_not_found');
  assert.is((await http(`${s.orch}/api/v1/admin/streams/nothing-here`, { headers: admin })).status, 404);
  const bad = await http(`${s.orch}/api/v1/admin/streams/${stream}?as_of=yesterday`, { headers: admin });
  assert.is(bad.status, 400);

  // A stream without a decider: its events, state null.
  const audit = (await events(s, '?limit=1000')).body.events.find((e: { stream: string }) =>
    e.stream.startsWith('orch.username_reservation-'),
  );
  const reservation = await http(`${s.orch}/api/v1/admin/streams/${audit.stream}`, { headers: admin });
  assert.is(reservation.status, 200);
  assert.ok(reservation.body.state !== undefined);
});

test('who may call: anonymous 401, a user or readonly key 403, even with admin-role enforcement opted out', async ({
  s,
  user,
}) => {
  for (const path of [
    '/api/v1/admin/events',
    `/api/v1/admin/streams/${userStream(user.id)}`,
    '/api/v1/admin/events/proof?position=1/1',
  ]) {
    const anonymous = await http(`${s.orch}${path}`);
    assert.is(anonymous.status, 401);
    assert.is(anonymous.body.message, 'missing X-API-Key header');
    const other = await createAccount(s, ADMIN_KEY, 'user');
    const forbidden = await http(`${s.orch}${path}`, { headers: { 'X-API-Key': other.apiKey } });
    assert.is(forbidden.status, 403);
    assert.equal(forbidden.body, { error: 'forbidden', message: 'admin role required' });
  }
  await s.restart({ ORCH_ENFORCE_ADMIN_ROLE: 'off' });
  const other = await createAccount(s, ADMIN_KEY, 'user');
  assert.is((await events(s, '', { 'X-API-Key': other.apiKey })).status, 403);
});

test('an audit entry checked against the chain: ok up to its signed checkpoint; a tampered event, an unknown or bad position are not', async ({
  s,
  user,
}) => {
  // A failed login is an audit entry that keeps its log position.
  assert.is(
    (await http(`${s.orch}/auth/login`, { json: { email: user.email, password: 'not-the-password' } })).status,
    401,
  );
  const entries = await http(`${s.orch}/api/v1/agent-chat/audit`, { headers: admin });
  const entry = entries.body.find((e: { event_type: string }) => e.event_type === 'login_failed');
  assert.ok(entry, JSON.stringify(entries.body.map((e: { event_type: string }) => e.event_type)));
  // Chain everything, then a minute later sign a checkpoint at the head.
  await s.platform.chainer.catchUp();
  s.clock.advance(61_000);
  await s.platform.chainer.catchUp();

  const proof = await http(`${s.orch}/api/v1/admin/events/proof?position=${entry.position}`, { headers: admin });
  assert.is(proof.status, 200);
  assert.is(proof.body.ok, true, proof.text);
  assert.is(proof.body.position, entry.position);
  assert.ok(proof.body.checkpoint, 'followed to a signed checkpoint');
  assert.is(proof.body.public_key, s.platform.auditKey.publicKeyHex);

  const unknown = await http(`${s.orch}/api/v1/admin/events/proof?position=999999999/0`, { headers: admin });
  assert.equal([unknown.status, unknown.body.ok], [200, false]);
  assert.match(unknown.body.reason, /no chain entry/);
  assert.is((await http(`${s.orch}/api/v1/admin/events/proof?position=yesterday`, { headers: admin })).status, 400);
  assert.is((await http(`${s.orch}/api/v1/admin/events/proof`, { headers: admin })).status, 400);

  // A superuser edits the event: the entry no longer checks. PostgreSQL's log only: an
  // EventStoreDB log (TEST_LOG=esdb) cannot be edited in place, so the step is not run there.
  if (logOnEsdb) return;
  const [commit, prepare] = entry.position.split('/');
  const client = new pg.Client({ connectionString: s.db.url });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    await client.query(
      `UPDATE events SET data = jsonb_set(data, '{forged}', 'true') WHERE transaction_id = $1::text::xid8 AND position = $2`,
      [commit, prepare],
    );
  } finally {
    await client.end();
  }
  const tampered = await http(`${s.orch}/api/v1/admin/events/proof?position=${entry.position}`, { headers: admin });
  assert.equal([tampered.status, tampered.body.ok], [200, false]);
  assert.match(tampered.body.reason, /does not match its chain hash/);
});

test.run();
