// Web push routes through real HTTP (in-process) on a real database: the VAPID public key (made
// once, sealed under DATA_DIR, the same after a restart), subscribing (201, the same browser
// again 200, another user taking a browser over, new keys), listing, unsubscribing, the limit,
// malformed bodies, SSRF refusals of private endpoints, and who may call each route (signed-in
// users; no token 401; a bot token 403; another's subscription 404). No endpoint or key in
// plaintext in the log or the log lines.

import { createECDH } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { browser, type Browser } from '../../support/push.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';
import { pushSubscriptionStream } from '../../../domain/chat/streams.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  owner: ChatAccount;
  alice: ChatAccount;
  bob: ChatAccount;
  botToken: string;
  b: Browser;
}
const test = suite<Ctx>('chat web push: routes');

test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_push_routes', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    NODE_ENV: 'test',
    CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.owner = await ctx.sp.register('own');
  ctx.alice = await ctx.sp.register('alice');
  ctx.bob = await ctx.sp.register('bob');
  const bot = await ctx.sp.ok(ctx.owner, 'POST', '/api/admin/bots', { username: 'push_bot' }, 201);
  ctx.botToken = (await ctx.sp.ok(ctx.owner, 'POST', `/api/admin/bots/${bot.id}/tokens`, {}, 201)).token;
  ctx.b = browser();
});
test.after(async ({ s }) => s?.close());

const ENDPOINT = 'http://127.0.0.1:9/push/alice-laptop';
const asBot = (ctx: Ctx, method: string, p: string, json?: unknown) =>
  http(`${ctx.sp.base}${p}`, {
    method,
    headers: { 'x-bot-token': ctx.botToken },
    ...(json !== undefined ? { json } : {}),
  });

test('the VAPID public key: an uncompressed P-256 point; signed-in users only; the same after a restart; sealed at rest', async (ctx) => {
  const r = await ctx.sp.ok(ctx.alice, 'GET', '/api/push/vapid-public-key');
  const point = Buffer.from(r.public_key, 'base64url');
  assert.equal([point.length, point[0]], [65, 4]);
  expectError(await ctx.sp.call(null, 'GET', '/api/push/vapid-public-key'), 401);
  expectError(await asBot(ctx, 'GET', '/api/push/vapid-public-key'), 403);
  const sealed = readFileSync(path.join(ctx.s.env.DATA_DIR!, 'chat-vapid.sealed'), 'utf8');
  assert.match(sealed, /^v1\./);
  assert.not.ok(sealed.includes(r.public_key), 'the key pair is sealed');
  await ctx.s.restart();
  for (const a of [ctx.owner, ctx.alice, ctx.bob])
    a.access = (
      await ctx.sp.ok(null, 'POST', '/api/auth/login', { username: a.username, password: a.password })
    ).access_token;
  assert.is((await ctx.sp.ok(ctx.alice, 'GET', '/api/push/vapid-public-key')).public_key, r.public_key);
  // Instances on separate data directories share a configured private key instead.
  const configured = createECDH('prime256v1');
  configured.generateKeys();
  // getPrivateKey() drops leading zero bytes (1 key in 256 is shorter): the key is 32 bytes, as configured.
  const privateKey = configured.getPrivateKey();
  await ctx.s.restart({
    CHATSVC_VAPID_PRIVATE_KEY: Buffer.concat([Buffer.alloc(32 - privateKey.length), privateKey]).toString('base64url'),
  });
  for (const a of [ctx.owner, ctx.alice, ctx.bob])
    a.access = (
      await ctx.sp.ok(null, 'POST', '/api/auth/login', { username: a.username, password: a.password })
    ).access_token;
  assert.is(
    (await ctx.sp.ok(ctx.alice, 'GET', '/api/push/vapid-public-key')).public_key,
    configured.getPublicKey().toString('base64url'),
  );
});

test('subscribe: 201, the same browser again 200 with the same id, listed with its origin; new keys replace the old', async (ctx) => {
  const first = await ctx.sp.ok(
    ctx.alice,
    'POST',
    '/api/push/subscriptions',
    { endpoint: ENDPOINT, keys: ctx.b.keys, expirationTime: null },
    201,
  );
  assert.match(first.id, /^[0-9a-f-]{36}$/);
  assert.equal([first.origin, first.endpoint], ['http://127.0.0.1:9', ENDPOINT]);
  const again = await ctx.sp.ok(
    ctx.alice,
    'POST',
    '/api/push/subscriptions',
    { endpoint: ENDPOINT, keys: ctx.b.keys },
    200,
  );
  assert.is(again.id, first.id);
  const before = (
    await ctx.s.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1`, [
      pushSubscriptionStream(first.id),
    ])
  ).rows[0].n;
  assert.is(before, 1, 'the same browser again appends nothing');
  await ctx.sp.ok(ctx.alice, 'POST', '/api/push/subscriptions', { endpoint: ENDPOINT, keys: browser().keys }, 200);
  const list = await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions');
  assert.equal(
    list.subscriptions.map((s: any) => [s.id, s.origin, s.endpoint]),
    [[first.id, 'http://127.0.0.1:9', ENDPOINT]],
  );
  assert.equal((await ctx.sp.ok(ctx.bob, 'GET', '/api/push/subscriptions')).subscriptions, []);
  expectError(await ctx.sp.call(null, 'GET', '/api/push/subscriptions'), 401);
  expectError(await asBot(ctx, 'GET', '/api/push/subscriptions'), 403);
  expectError(
    await ctx.sp.call(null, 'POST', '/api/push/subscriptions', { endpoint: ENDPOINT, keys: ctx.b.keys }),
    401,
  );
  expectError(await asBot(ctx, 'POST', '/api/push/subscriptions', { endpoint: ENDPOINT, keys: ctx.b.keys }), 403);
});

test('the endpoint and keys never reach the log or the log lines in plaintext', async (ctx) => {
  const log = await logText(ctx.s);
  assert.ok(log.includes('PushSubscriptionAdded'));
  for (const secret of [ENDPOINT, '/push/alice-laptop', ctx.b.keys.auth, ctx.b.keys.p256dh]) {
    assert.not.ok(log.includes(secret), `the log holds ${secret}`);
    assert.not.ok(
      ctx.s.logLines.some((l) => l.includes(secret)),
      `a log line holds ${secret}`,
    );
  }
});

test('another user subscribing the same browser takes it over', async (ctx) => {
  const taken = await ctx.sp.ok(
    ctx.bob,
    'POST',
    '/api/push/subscriptions',
    { endpoint: ENDPOINT, keys: ctx.b.keys },
    201,
  );
  assert.equal((await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions')).subscriptions, []);
  assert.equal(
    (await ctx.sp.ok(ctx.bob, 'GET', '/api/push/subscriptions')).subscriptions.map((s: any) => s.id),
    [taken.id],
  );
  const reasons = (
    await ctx.s.db.pool.query(
      `SELECT data->>'reason' AS reason FROM events WHERE type = 'PushSubscriptionRemoved' AND stream_id = $1`,
      [pushSubscriptionStream(taken.id)],
    )
  ).rows;
  assert.equal(
    reasons.map((r) => r.reason),
    ['replaced'],
  );
});

test('unsubscribe: the owner 204; another user, an unknown id, a non-id 404; no token 401; a bot token 403', async (ctx) => {
  const sub = await ctx.sp.ok(
    ctx.alice,
    'POST',
    '/api/push/subscriptions',
    { endpoint: 'http://127.0.0.1:9/push/alice-phone', keys: browser().keys },
    201,
  );
  expectError(await ctx.sp.call(ctx.bob, 'DELETE', `/api/push/subscriptions/${sub.id}`), 404);
  expectError(
    await ctx.sp.call(ctx.alice, 'DELETE', '/api/push/subscriptions/00000000-0000-4000-8000-000000000000'),
    404,
  );
  expectError(await ctx.sp.call(ctx.alice, 'DELETE', '/api/push/subscriptions/nope'), 404);
  expectError(await ctx.sp.call(null, 'DELETE', `/api/push/subscriptions/${sub.id}`), 401);
  expectError(await asBot(ctx, 'DELETE', `/api/push/subscriptions/${sub.id}`), 403);
  assert.is(
    (await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions')).subscriptions.length,
    1,
    'refusals change nothing',
  );
  assert.is((await ctx.sp.call(ctx.alice, 'DELETE', `/api/push/subscriptions/${sub.id}`)).status, 204);
  assert.equal((await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions')).subscriptions, []);
  expectError(await ctx.sp.call(ctx.alice, 'DELETE', `/api/push/subscriptions/${sub.id}`), 404);
});

test('malformed bodies 400; endpoints that are not https or not public 422 destination_not_allowed', async (ctx) => {
  const keys = ctx.b.keys;
  for (const body of [
    {},
    { endpoint: ENDPOINT },
    { endpoint: 'not a url', keys },
    { endpoint: ENDPOINT, keys: { p256dh: keys.p256dh } },
    { endpoint: ENDPOINT, keys: { p256dh: Buffer.alloc(65, 4).toString('base64url'), auth: keys.auth } },
    { endpoint: ENDPOINT, keys: { p256dh: keys.p256dh.slice(0, 40), auth: keys.auth } },
    { endpoint: ENDPOINT, keys: { p256dh: keys.p256dh, auth: Buffer.alloc(8).toString('base64url') } },
    { endpoint: ENDPOINT, keys: { p256dh: 'not base64!', auth: keys.auth } },
    { endpoint: `https://push.test/${'a'.repeat(2048)}`, keys },
  ])
    expectError(await ctx.sp.call(ctx.alice, 'POST', '/api/push/subscriptions', body), 400);
  for (const endpoint of [
    'ftp://127.0.0.1/push',
    'https://10.0.0.5/push',
    'https://192.168.1.1/push',
    'https://169.254.169.254/latest',
    'https://100.64.0.1/push',
    'https://[::ffff:10.0.0.1]/push',
    'https://[fe80::1]/push',
    'https://[fc00::1]/push',
    'http://10.0.0.5:8080/push',
    'https://user:pw@127.0.0.1/push',
  ]) {
    const r = await ctx.sp.call(ctx.alice, 'POST', '/api/push/subscriptions', { endpoint, keys });
    expectError(r, 422);
    assert.is(r.body.code, 'destination_not_allowed', endpoint);
  }
  assert.equal((await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions')).subscriptions, []);
});

test('at most 20 subscriptions per user: the 21st 409 subscription_limit_reached; an existing one still answers 200', async (ctx) => {
  const carol = await ctx.sp.register('carol');
  const keys = browser().keys;
  for (let i = 0; i < 20; i++)
    await ctx.sp.ok(
      carol,
      'POST',
      '/api/push/subscriptions',
      { endpoint: `http://127.0.0.1:9/push/carol-${i}`, keys },
      201,
    );
  const r = await ctx.sp.call(carol, 'POST', '/api/push/subscriptions', {
    endpoint: 'http://127.0.0.1:9/push/carol-20',
    keys,
  });
  expectError(r, 409);
  assert.is(r.body.code, 'subscription_limit_reached');
  await ctx.sp.ok(carol, 'POST', '/api/push/subscriptions', { endpoint: 'http://127.0.0.1:9/push/carol-3', keys }, 200);
});

test("a deleted account's subscriptions go; the rebuilt read model equals the live one", async (ctx) => {
  const gone = await ctx.sp.register('gone');
  await ctx.sp.ok(
    gone,
    'POST',
    '/api/push/subscriptions',
    { endpoint: 'http://127.0.0.1:9/push/gone', keys: browser().keys },
    201,
  );
  const r = await ctx.sp.call(gone, 'DELETE', '/api/account/delete', { password: gone.password });
  assert.ok(r.status === 200 || r.status === 204, r.text);
  assert.is(
    (await ctx.s.db.pool.query('SELECT count(*)::int AS n FROM chat_push_subscriptions WHERE user_id = $1', [gone.id]))
      .rows[0].n,
    0,
  );
  const snapshot = async () =>
    (await ctx.s.db.pool.query('SELECT * FROM chat_push_subscriptions')).rows.map((row) => JSON.stringify(row)).sort();
  const live = await snapshot();
  assert.ok(live.length > 20);
  await ctx.s.platform.engine.stop();
  assert.ok((await ctx.s.platform.engine.rebuild('chat_push_subscriptions')) > 0);
  assert.equal(await snapshot(), live);
});

test.run();
