// The orchestration sockets over real connections: /ws shows each principal its own subset of
// one scripted history (personal fields to admins only, credentials to no one); a client that
// drops and resumes from its last position loses and repeats nothing; a slow socket is closed
// 4008 while a fast one gets everything. /ws/live: the gating table and the status frame. Both
// refuse a cookie-authenticated upgrade from another origin (cross-site WebSocket hijacking).

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { userStream } from '../../../domain/orchestration/streams.ts';
import { loadConfig } from '../../../infra/config.ts';
import type { EventToAppend } from '../../../infra/eventstore/port.ts';
import { formatPosition } from '../../../infra/eventstore/position.ts';
import { createAccount, login, type Account } from '../../support/principals.ts';
import { http, startTestServices, type TestServices } from '../../support/services.ts';
import { connectWs, upgradeStatus, type WsClient } from '../../support/ws.ts';

const ADMIN_KEY = 'orch_ws-feed-admin-key-000000000000000000';

const test = suite<{ s: TestServices; alice: Account }>('log: /ws and /ws/live over real sockets');
test.before(async (ctx) => {
  ctx.s = await startTestServices('log_ws', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.alice = await createAccount(ctx.s, ADMIN_KEY, 'user');
});
test.after(async ({ s }) => s?.close());

const fact = (type: string, data: Record<string, unknown> = {}): EventToAppend => ({
  id: randomUUID(),
  type,
  data,
  metadata: { actor: { kind: 'system', id: null }, correlation_id: null, causation_id: null, schema: 1 },
});

/** Frames until one matches `last`, collected in order (ready frames left out). */
async function framesThrough(
  ws: WsClient,
  last: (f: Record<string, any>) => boolean,
  timeoutMs = 10_000,
): Promise<Record<string, any>[]> {
  await ws.next(last, timeoutMs);
  return ws.frames.filter((f) => !f.control);
}

const head = async (s: TestServices) => formatPosition((await s.platform.store.headPosition())!);

test('/ws: admin, account and anonymous sockets see their own subsets of one history', async ({ s, alice }) => {
  const from = await head(s);
  const admin = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': ADMIN_KEY });
  const mine = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': alice.apiKey });
  const anonymous = await connectWs(s.orch, `/ws?from=${from}`);
  const viaQuery = await connectWs(s.orch, `/ws?from=${from}&key=${encodeURIComponent(alice.apiKey)}`);
  for (const ws of [admin, mine, anonymous, viaQuery]) assert.equal(await ws.next(), { control: 'ready', from });

  // The script: another account is created, alice signs in, her role changes, a profile is made.
  const bob = await createAccount(s, ADMIN_KEY, 'user');
  await login(s, alice);
  const patched = await http(`${s.orch}/api/v1/admin/users/${alice.id}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { role: 'readonly' },
  });
  assert.is(patched.status, 200);
  const profile = await http(`${s.orch}/api/v1/agent-chat/profiles`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { slug: `ws-${randomUUID().slice(0, 8)}`, name: 'WS' },
  });
  assert.is(profile.status, 201);
  const endMarker = `ws_end-${randomUUID()}`;
  await s.platform.store.append(endMarker, [fact('ScriptEnded')], { expected: 'no_stream' });

  const all = await framesThrough(admin, (f) => f.stream === endMarker);
  const types = all.map((f) => f.type);
  for (const t of ['UserCreated', 'SessionStarted', 'UserRoleChanged', 'ProfileCreated', 'ScriptEnded'])
    assert.ok(types.includes(t), t);
  assert.equal(Object.keys(all[0]!), ['position', 'stream', 'type', 'data', 'metadata', 'at']);
  const bobCreated = all.find((f) => f.stream === userStream(bob.id))!;
  assert.is(bobCreated.data.email, bob.email); // personal fields: admins
  assert.not.ok(
    'api_key_hash' in bobCreated.data || 'api_key_sealed' in bobCreated.data || 'password_hash' in bobCreated.data,
  );

  // alice: her own account's events only, in the same order as the admin saw them.
  await s.platform.store.append(userStream(alice.id), [], { expected: 'any' });
  const patchedAgain = await http(`${s.orch}/api/v1/admin/users/${alice.id}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { role: 'user' },
  });
  assert.is(patchedAgain.status, 200);
  const hers = await framesThrough(mine, (f) => f.type === 'UserRoleChanged' && f.data.role === 'user');
  const expected = (await framesThrough(admin, (f) => f.type === 'UserRoleChanged' && f.data.role === 'user')).filter(
    (f) => f.stream === userStream(alice.id) || (f.stream.startsWith('orch.session-') && f.data.user_id === alice.id),
  );
  assert.equal(
    hers.map((f) => f.position),
    expected.map((f) => f.position),
  );
  assert.equal(
    hers.map((f) => f.type),
    ['SessionStarted', 'UserRoleChanged', 'UserRoleChanged'],
  );
  assert.equal(
    (await framesThrough(viaQuery, (f) => f.type === 'UserRoleChanged' && f.data.role === 'user')).map(
      (f) => f.position,
    ),
    expected.map((f) => f.position),
  );

  // Replayed from the start, alice's own creation comes without her e-mail or key material.
  const replay = await connectWs(s.orch, '/ws?from=0/0', { 'X-API-Key': alice.apiKey });
  const created = await replay.next((f) => f.type === 'UserCreated');
  assert.is(created.stream, userStream(alice.id));
  assert.equal(Object.keys(created.data).sort(), [
    'at',
    'auth_source',
    'created_by',
    'principal_type',
    'role',
    'user_id',
    'username',
  ]);

  // Anonymous: nothing from the log (no public categories yet).
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(anonymous.frames, [{ control: 'ready', from }]);
  for (const ws of [admin, mine, anonymous, viaQuery, replay]) ws.close();
});

test('/ws: a dropped connection resumed from its last position loses and repeats nothing', async ({ s }) => {
  const start = await head(s);
  const stream = `ws_resume-${randomUUID()}`;
  const append = async (n: number, from: number) => {
    for (let i = 0; i < n; i++)
      await s.platform.store.append(`${stream}-${from + i}`, [fact('Numbered', { n: from + i })], {
        expected: 'no_stream',
      });
  };
  await append(40, 0);
  const first = await connectWs(s.orch, `/ws?from=${start}`, { 'X-API-Key': ADMIN_KEY });
  await first.next((f) => f.data?.n === 25);
  first.socket.terminate(); // dropped, mid-stream
  const got = first.frames.filter((f) => !f.control && f.stream.startsWith(stream));
  const last = got.at(-1)!.position;

  const writing = append(60, 40); // appends while the client reconnects and catches up
  const second = await connectWs(s.orch, `/ws?from=${last}`, { 'X-API-Key': ADMIN_KEY });
  await writing;
  await second.next((f) => f.data?.n === 99, 15_000);
  const resumed = second.frames.filter((f) => !f.control && f.stream.startsWith(stream));
  const numbers = [...got, ...resumed].map((f) => f.data.n);
  assert.equal(
    numbers,
    Array.from({ length: 100 }, (_, i) => i),
  );
  const positions = [...got, ...resumed].map((f) => f.position);
  assert.is(new Set(positions).size, positions.length);
  second.close();
});

test('/ws: a slow socket is closed 4008 after its buffer fills; a fast one gets every event', async ({ s }) => {
  const from = await head(s);
  const slow = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': ADMIN_KEY });
  const fast = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': ADMIN_KEY });
  await slow.next();
  await fast.next();
  slow.socket.pause();
  const stream = `ws_big-${randomUUID()}`;
  const blob = 'x'.repeat(500_000);
  // 30 MB: past the 8 MiB limit even after the kernel's socket buffers take their share. Each
  // append waits until the fast socket has read the one before, so the fast socket never holds
  // more than one event unread (the client shares this process's event loop with the server).
  // The slow client resumes reading as soon as the server has closed it: the server gives a client
  // 30 s (ws's closeTimeout) to read up to its close frame before it cuts the connection (1006).
  const dropped = () => s.logLines.some((l) => l.includes('ws_slow_consumer_closed'));
  for (let i = 0; i < 60; i++) {
    await s.platform.store.append(`${stream}-${i}`, [fact('Big', { i, blob })], { expected: 'no_stream' });
    await fast.next((f) => f.data?.i === i, 30_000);
    if (slow.socket.isPaused && dropped()) slow.socket.resume();
  }
  const frames = fast.frames.filter((f) => !f.control);
  assert.equal(
    frames.filter((f) => f.stream.startsWith(stream)).map((f) => f.data.i),
    Array.from({ length: 60 }, (_, i) => i),
  );
  assert.ok(dropped(), 'the slow socket was closed');
  slow.socket.resume();
  const closed = await slow.closed;
  assert.is(closed.code, 4008);
  assert.ok(slow.frames.filter((f) => !f.control).length < 60);
  fast.close();
});

test('/ws: refusals: not an upgrade 426, an invalid key 401, a bad from 400', async ({ s }) => {
  const plain = await http(`${s.orch}/ws`);
  assert.is(plain.status, 426);
  assert.is(await upgradeStatus(s.orch, '/ws', { 'X-API-Key': 'orch_not-a-key-0000000000000000000000' }), 401);
  assert.is(await upgradeStatus(s.orch, '/ws?key=orch_not-a-key-0000000000000000000000'), 401);
  assert.is(await upgradeStatus(s.orch, '/ws?from=yesterday'), 400);
  assert.is(await upgradeStatus(s.orch, '/ws'), 101);
});

test('both sockets refuse a session-cookie upgrade whose Origin is not this server (403); keys and same-origin pass', async ({
  s,
  alice,
}) => {
  const session = await login(s, alice);
  const cookie = { cookie: session.cookie };
  for (const path of ['/ws', '/ws/live']) {
    assert.is(
      await upgradeStatus(s.orch, path, { ...cookie, Origin: 'https://evil.example' }),
      403,
      `${path}: cross-origin session`,
    );
    assert.is(await upgradeStatus(s.orch, path, { ...cookie, Origin: 'null' }), 403, `${path}: opaque origin`);
    assert.is(
      await upgradeStatus(s.orch, path, { ...cookie, Origin: s.orch.replace('127.0.0.1', 'localhost') }),
      403,
      `${path}: another host name`,
    );
    assert.is(await upgradeStatus(s.orch, path, { ...cookie, Origin: s.orch }), 101, `${path}: same-origin session`);
    assert.is(await upgradeStatus(s.orch, path, cookie), 101, `${path}: no Origin (not a browser)`);
    assert.is(
      await upgradeStatus(s.orch, path, { 'X-API-Key': alice.apiKey, Origin: 'https://evil.example' }),
      101,
      `${path}: a key is not ambient authority`,
    );
  }
});

test('/ws/live: gated by default (401 without identity), status frames for keys and sessions; ungated when falsy', async (ctx) => {
  const { s, alice } = ctx;
  const session = await login(s, alice);
  const cases: [string, Record<string, string>, string, number][] = [
    ['anonymous', {}, '', 401],
    ['invalid key', { 'X-API-Key': 'orch_not-a-key-0000000000000000000000' }, '', 401],
    ['user key', { 'X-API-Key': alice.apiKey }, '', 101],
    ['key in the query', {}, `?key=${encodeURIComponent(alice.apiKey)}`, 101],
    ['session', { cookie: session.cookie }, '', 101],
  ];
  for (const [name, headers, query, status] of cases)
    assert.is(await upgradeStatus(s.orch, `/ws/live${query}`, headers), status, `gated: ${name}`);

  const live = await connectWs(s.orch, '/ws/live', { 'X-API-Key': alice.apiKey });
  const frame = await live.next((f) => f.type === 'status');
  assert.equal(Object.keys(frame), [
    'type',
    'at',
    'service',
    'projections',
    'agents_by_status',
    'tasks_by_status',
    'chat_turns_per_minute',
  ]);
  assert.equal(frame.service, { status: 'ok', version: frame.service.version, database: 'ok' });
  assert.ok(typeof frame.projections.users.lag_events === 'number');
  assert.not.ok(JSON.stringify(frame).includes(alice.email));
  live.close();

  for (const [value, anonymous] of [
    ['maybe', 401],
    ['', 401],
    ['0', 101],
    ['OFF', 101],
    ['false', 101],
  ] as const) {
    await s.restart({ ORCH_GATE_WS_LIVE: value });
    assert.is(await upgradeStatus(s.orch, '/ws/live'), anonymous, `ORCH_GATE_WS_LIVE=${value}`);
    assert.is(await upgradeStatus(s.orch, '/ws/live', { 'X-API-Key': 'orch_not-a-key-0000000000000000000000' }), 401);
  }
  const open = await connectWs(s.orch, '/ws/live');
  assert.is((await open.next((f) => f.type === 'status')).type, 'status');
  open.close();
  assert.is(loadConfig({}).gateWsLive, true);
  assert.is(loadConfig({ ORCH_GATE_WS_LIVE: 'NO' }).gateWsLive, false);
});

test.run();
