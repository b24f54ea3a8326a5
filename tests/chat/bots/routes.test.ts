// Bots through real HTTP: the bootstrap route, bot administration by an admin JWT and by a
// bot:provision token, scopes, per-token rate limits with their headers, expiry, revocation,
// last use, the cockpit, and a bot taking part as a member (keys, bundles, sender keys, posts).

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, clientKeys, expectError, wire, type ChatAccount } from '../../support/chat.ts';
import { http, logText, startTestApps, type Reply, type TestServices } from '../../support/services.ts';
import { expectStatus, Spaces } from '../../support/spaces.ts';
import { chatUserStream } from '../../../domain/chat/streams.ts';

const SECRET = 'bootstrap-secret-for-tests-0123456789';
interface Ctx {
  s: TestServices;
  sp: Spaces;
  admin: ChatAccount;
  ann: ChatAccount;
  provision: string;
  botId: string;
  cid: string;
  ch: string;
  other: string;
}
const test = suite<Ctx>('chat bots');

const botCall = (
  sp: Spaces,
  token: string,
  method: string,
  path: string,
  json?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> =>
  http(`${sp.base}${path}`, {
    method,
    headers: { 'x-bot-token': token, ...headers },
    ...(json !== undefined ? { json } : {}),
  });

/** Fresh access tokens after the clock moved past their 15 minutes. */
async function relogin(sp: Spaces, ...accounts: ChatAccount[]): Promise<void> {
  for (const a of accounts)
    a.access = (
      await sp.ok(null, 'POST', '/api/auth/login', { username: a.username, password: a.password })
    ).access_token;
}

test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_bots', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    CHATSVC_BOOTSTRAP_SECRET: SECRET,
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.admin = await ctx.sp.register('adm');
  ctx.ann = await ctx.sp.register('ann');
  ctx.cid = await ctx.sp.community(ctx.admin);
  await ctx.sp.join(ctx.cid, ctx.admin, [ctx.ann]);
  const g = await ctx.sp.group(ctx.admin, ctx.cid);
  ctx.ch = await ctx.sp.channel(ctx.admin, g, [ctx.ann]);
  const privateGroup = await ctx.sp.group(ctx.admin, ctx.cid, 'private', 'Secret');
  ctx.other = await ctx.sp.channel(ctx.admin, privateGroup, [], 'hidden');
});
test.after(async ({ s }) => s?.close());

test('bootstrap: wrong or missing secret 401; the right one mints a bot:provision token for the integration bot, idempotent in the bot', async (ctx) => {
  const { sp } = ctx;
  expectError(await http(`${sp.base}/api/admin/bots/bootstrap-token`, { method: 'POST' }), 401);
  expectError(
    await http(`${sp.base}/api/admin/bots/bootstrap-token`, {
      method: 'POST',
      headers: { 'x-provision-bootstrap-secret': 'nope' },
    }),
    401,
  );
  const first = expectStatus(
    await http(`${sp.base}/api/admin/bots/bootstrap-token`, {
      method: 'POST',
      headers: { 'x-provision-bootstrap-secret': SECRET },
    }),
    201,
  ).body;
  assert.match(first.token.token, /^cb_[0-9a-f]{64}$/);
  assert.is(first.token.prefix, first.token.token.slice(0, 11));
  assert.is(first.token.scope, 'bot:provision');
  assert.is(first.bot.username, 'integration-provisioning');
  assert.is(first.bot.is_bot, true);
  const second = expectStatus(
    await http(`${sp.base}/api/admin/bots/bootstrap-token`, {
      method: 'POST',
      headers: { 'x-provision-bootstrap-secret': SECRET },
    }),
    201,
  ).body;
  assert.is(second.bot.id, first.bot.id);
  assert.is.not(second.token.token, first.token.token);
  ctx.provision = second.token.token;
  // The bot is no admin: an admin route refuses it, as it refuses every bot token.
  expectError(await botCall(sp, first.token.token, 'GET', '/api/admin/invites'), 403);
  const me = await http(`${sp.base}/api/users/${first.bot.id}`, { headers: bearer(ctx.admin) });
  assert.is(me.body.is_bot ?? true, true);
  const log = await logText(ctx.s);
  for (const secret of [SECRET, first.token.token, second.token.token])
    assert.not.ok(log.includes(secret), 'no secret in the log');
  assert.not.ok(ctx.s.logLines.join('\n').includes(first.token.token));
  assert.not.ok(ctx.s.logLines.join('\n').includes(SECRET));
});

test('provision token: create, list, get bots; mint default tokens only; join as member only; nothing else', async (ctx) => {
  const { sp, provision } = ctx;
  const created = expectStatus(
    await botCall(sp, provision, 'POST', '/api/admin/bots', { username: 'helper_bot', display_name: 'Helper' }),
    201,
  ).body;
  assert.is(created.username, 'helper_bot');
  assert.equal(created.tokens, []);
  expectError(await botCall(sp, provision, 'POST', '/api/admin/bots', { username: 'helper_bot' }), 409);
  expectError(await botCall(sp, provision, 'POST', '/api/admin/bots', { username: 'bad name!' }), 400);
  ctx.botId = created.id;
  const list = expectStatus(await botCall(sp, provision, 'GET', '/api/admin/bots'), 200).body;
  assert.ok(list.bots.some((b: { id: string }) => b.id === created.id));
  assert.is(list.total, 2);
  expectStatus(await botCall(sp, provision, 'GET', `/api/admin/bots/${created.id}`), 200);
  expectError(await botCall(sp, provision, 'GET', '/api/admin/bots/00000000-0000-4000-8000-000000000000'), 404);
  const minted = expectStatus(
    await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/tokens`, {
      label: 'main',
      expires_in_hours: 720,
    }),
    201,
  ).body;
  assert.is(minted.scope, 'default');
  assert.match(minted.token, /^cb_[0-9a-f]{64}$/);
  expectError(await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/tokens`, { scope: 'metrics' }), 403);
  expectError(await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/tokens`, { scope: 'admin' }), 400);
  // Joining: member only; the bot joins the public channels, not the private group's.
  expectError(
    await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/communities`, {
      community_id: ctx.cid,
      role: 'admin',
    }),
    403,
  );
  const joined = expectStatus(
    await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/communities`, {
      community_id: ctx.cid,
      role: 'member',
    }),
    200,
  ).body;
  assert.is(joined.role, 'member');
  assert.equal(joined.channels_joined, [ctx.ch]);
  expectError(
    await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/communities`, {
      community_id: '00000000-0000-4000-8000-000000000000',
    }),
    404,
  );
  assert.equal(
    (await botCall(sp, provision, 'GET', `/api/admin/bots/${created.id}/communities`)).body.communities.map(
      (c: { community_id: string }) => c.community_id,
    ),
    [ctx.cid],
  );
  assert.ok(
    (await botCall(sp, provision, 'GET', '/api/admin/communities')).body.communities.some(
      (c: { id: string }) => c.id === ctx.cid,
    ),
  );
  // Refused: deleting bots, revoking tokens, removing from communities, integrations, messages, communities.
  expectError(await botCall(sp, provision, 'DELETE', `/api/admin/bots/${created.id}`), 403);
  expectError(await botCall(sp, provision, 'POST', `/api/admin/bots/${created.id}/tokens/${minted.id}/revoke`), 403);
  expectError(await botCall(sp, provision, 'DELETE', `/api/admin/bots/${created.id}/communities/${ctx.cid}`), 403);
  expectError(await botCall(sp, provision, 'GET', '/api/admin/integrations'), 403);
  expectError(await botCall(sp, provision, 'POST', `/api/channels/${ctx.ch}/messages`, { ciphertext: 'x' }), 403);
  expectError(await botCall(sp, provision, 'POST', '/api/communities', { name: 'x' }), 403);
  expectError(await botCall(sp, provision, 'GET', '/api/v1/metrics/cockpit'), 403);
});

test('a default bot: both headers 400; rate-limit headers on every response; posts in member channels only; keys, bundles, sender keys', async (ctx) => {
  const { sp, admin, ann, botId } = ctx;
  const token = (await sp.ok(admin, 'POST', `/api/admin/bots/${botId}/tokens`, {}, 201)).token as string;
  expectError(await botCall(sp, token, 'GET', '/api/communities', undefined, bearer(admin)), 400);
  expectError(await botCall(sp, 'cb_' + '0'.repeat(64), 'GET', '/api/communities'), 401);
  expectError(await botCall(sp, 'nonsense', 'GET', '/api/communities'), 401);
  const list = expectStatus(await botCall(sp, token, 'GET', '/api/communities'), 200);
  assert.is(list.headers.get('x-ratelimit-limit'), '60');
  assert.is(list.headers.get('x-ratelimit-remaining'), '59');
  assert.ok(Number(list.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
  const refused = await botCall(sp, token, 'GET', `/api/channels/${ctx.other}/messages`);
  expectError(refused, 403);
  assert.is(refused.headers.get('x-ratelimit-remaining'), '58', 'error responses carry the headers too');
  // Keys: the bot has none until it registers them.
  const keys = clientKeys(3);
  const body = {
    identity_key: wire(keys.identity.publicKey),
    signed_prekey: {
      key_id: keys.signedPrekey.keyId,
      public_key: wire(keys.signedPrekey.publicKey),
      signature: wire(keys.signedPrekey.signature),
    },
    one_time_prekeys: keys.oneTimePrekeys.map((k) => ({ key_id: k.keyId, public_key: wire(k.publicKey) })),
  };
  expectError(
    await botCall(sp, token, 'POST', '/api/keys/register', { ...body, identity_key: Array(32).fill(0) }),
    400,
  );
  expectStatus(await botCall(sp, token, 'POST', '/api/keys/register', body), 201);
  expectError(await botCall(sp, token, 'POST', '/api/keys/register', body), 409);
  assert.is((await botCall(sp, token, 'GET', '/api/keys/prekeys/count')).body.count, 3);
  expectStatus(
    await botCall(sp, token, 'POST', '/api/keys/prekeys/one-time', {
      prekeys: [{ key_id: 50, public_key: wire(clientKeys(1).oneTimePrekeys[0]!.publicKey) }],
    }),
    200,
  );
  expectStatus(await botCall(sp, token, 'GET', `/api/keys/${ann.id}/bundle`), 200);
  assert.ok((await sp.ok(ann, 'GET', `/api/keys/${botId}/bundle`)).identity_key);
  const distribution = { chain_id: 7, iteration: 0, chain_key: Array(32).fill(3), sender_id: botId };
  expectStatus(
    await botCall(sp, token, 'POST', `/api/channels/${ctx.ch}/sender-keys`, { chain_id: 7, distribution }),
    201,
  );
  assert.ok(
    (await botCall(sp, token, 'GET', `/api/channels/${ctx.ch}/sender-keys`)).body.distributions?.length ?? true,
  );
  expectError(
    await botCall(sp, token, 'POST', `/api/channels/${ctx.other}/sender-keys`, { chain_id: 7, distribution }),
    403,
  );
  // Posting: its member channel yes, another no.
  const posted = expectStatus(
    await botCall(sp, token, 'POST', `/api/channels/${ctx.ch}/messages`, { ciphertext: 'from the bot' }),
    201,
  ).body;
  assert.is(posted.sender_id, botId);
  expectError(await botCall(sp, token, 'POST', `/api/channels/${ctx.other}/messages`, { ciphertext: 'x' }), 403);
  // Use is recorded (coalesced).
  const seen = await sp.ok(admin, 'GET', `/api/admin/bots/${botId}`);
  assert.ok(seen.tokens.find((t: { prefix: string }) => t.prefix === token.slice(0, 11)).last_used_at);
  const uses = await ctx.s.db.pool.query(
    `SELECT count(*)::int AS n FROM events WHERE type = 'BotTokenUsed' AND data->>'token_id' = $1`,
    [seen.tokens.find((t: { prefix: string }) => t.prefix === token.slice(0, 11)).id],
  );
  assert.is(uses.rows[0].n, 1, 'one use event, not one per request');
});

test('per-token limit: the override, 429 rate_limited with Retry-After and headers, free again after the window', async ({
  s,
  sp,
  admin,
  botId,
}) => {
  const token = (await sp.ok(admin, 'POST', `/api/admin/bots/${botId}/tokens`, { rate_limit_per_window: 3 }, 201))
    .token as string;
  for (let i = 0; i < 3; i++) expectStatus(await botCall(sp, token, 'GET', '/api/communities'), 200);
  const limited = await botCall(sp, token, 'GET', '/api/communities');
  expectError(limited, 429);
  assert.is(limited.body.code, 'rate_limited');
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.is(limited.headers.get('x-ratelimit-limit'), '3');
  assert.is(limited.headers.get('x-ratelimit-remaining'), '0');
  assert.ok(limited.headers.get('x-ratelimit-reset'));
  s.clock.advance(10_001);
  expectStatus(await botCall(sp, token, 'GET', '/api/communities'), 200);
});

test('expiry and revocation (admin JWT only); unknown bot and token 404', async ({ s, sp, admin, ann, botId }) => {
  const expiring = await sp.ok(admin, 'POST', `/api/admin/bots/${botId}/tokens`, { expires_in_hours: 1 }, 201);
  expectStatus(await botCall(sp, expiring.token, 'GET', '/api/communities'), 200);
  s.clock.advance(3_600_001);
  await relogin(sp, admin, ann);
  expectError(await botCall(sp, expiring.token, 'GET', '/api/communities'), 401);
  const revocable = await sp.ok(admin, 'POST', `/api/admin/bots/${botId}/tokens`, {}, 201);
  expectStatus(await botCall(sp, revocable.token, 'GET', '/api/communities'), 200);
  expectError(await sp.call(ann, 'POST', `/api/admin/bots/${botId}/tokens/${revocable.id}/revoke`), 403);
  expectError(
    await botCall(sp, revocable.token, 'POST', `/api/admin/bots/${botId}/tokens/${revocable.id}/revoke`),
    403,
  );
  const revoked = await sp.ok(admin, 'POST', `/api/admin/bots/${botId}/tokens/${revocable.id}/revoke`);
  assert.is(revoked.status, 'revoked');
  expectError(await botCall(sp, revocable.token, 'GET', '/api/communities'), 401);
  expectError(
    await sp.call(admin, 'POST', `/api/admin/bots/${botId}/tokens/00000000-0000-4000-8000-000000000000/revoke`),
    404,
  );
  const bot = await sp.ok(admin, 'GET', `/api/admin/bots/${botId}`);
  assert.equal(bot.tokens.map((t: { status: string }) => t.status).sort(), [
    'active',
    'active',
    'active',
    'expired',
    'revoked',
  ]);
});

test('integrations and the cockpit: metrics tokens only; JWTs and default bots 403', async ({
  sp,
  admin,
  ann,
  botId,
}) => {
  expectError(await sp.call(ann, 'POST', '/api/admin/integrations', { label: 'Grafana' }), 403);
  const created = await sp.ok(
    admin,
    'POST',
    '/api/admin/integrations',
    { label: 'Grafana Cloud!', scope: 'metrics' },
    201,
  );
  assert.is(created.bot.username, 'integration-grafana_cloud');
  assert.is(created.token.scope, 'metrics');
  const again = await sp.ok(
    admin,
    'POST',
    '/api/admin/integrations',
    { label: 'Grafana Cloud!', scope: 'metrics', expires_in_hours: 1 },
    201,
  );
  assert.is(again.bot.id, created.bot.id);
  expectError(await sp.call(admin, 'POST', '/api/admin/integrations', { label: 'x', scope: 'default' }), 400);
  const cockpit = expectStatus(await botCall(sp, created.token.token, 'GET', '/api/v1/metrics/cockpit'), 200).body;
  assert.ok(cockpit.workspaces >= 1 && cockpit.members >= 3 && cockpit.channels >= 2 && cockpit.messages >= 1);
  assert.is(cockpit.health.status, 'ok');
  assert.type(cockpit.version, 'string');
  assert.not.ok(JSON.stringify(cockpit).includes('from the bot'), 'no content');
  expectError(await sp.call(admin, 'GET', '/api/v1/metrics/cockpit'), 403);
  const dflt = (await sp.ok(admin, 'POST', `/api/admin/bots/${botId}/tokens`, {}, 201)).token;
  expectError(await botCall(sp, dflt, 'GET', '/api/v1/metrics/cockpit'), 403);
  expectError(await botCall(sp, created.token.token, 'GET', '/api/communities'), 403);
  const list = await sp.ok(admin, 'GET', '/api/admin/integrations');
  const mine = list.integrations.filter((i: { bot_id: string }) => i.bot_id === created.bot.id);
  assert.is(mine.length, 2);
  assert.ok(mine.every((i: { scope: string; prefix: string }) => i.scope === 'metrics' && i.prefix.startsWith('cb_')));
  assert.ok(list.integrations.some((i: { scope: string }) => i.scope === 'bot:provision'));
  assert.ok(list.integrations.find((i: { token_id: string }) => i.token_id === created.token.id).last_used_at);
  assert.not.ok(JSON.stringify(list).includes(created.token.token));
});

test("delete (admin JWT only): the bot's tokens stop at once; removal from a community", async ({
  sp,
  admin,
  provision,
  cid,
}) => {
  const bot = expectStatus(
    await botCall(sp, provision, 'POST', '/api/admin/bots', { username: 'doomed_bot' }),
    201,
  ).body;
  const token = expectStatus(await botCall(sp, provision, 'POST', `/api/admin/bots/${bot.id}/tokens`, {}), 201).body
    .token;
  expectStatus(
    await botCall(sp, provision, 'POST', `/api/admin/bots/${bot.id}/communities`, { community_id: cid }),
    200,
  );
  expectError(
    await sp.call(admin, 'DELETE', `/api/admin/bots/${bot.id}/communities/00000000-0000-4000-8000-000000000000`),
    404,
  );
  await sp.ok(admin, 'DELETE', `/api/admin/bots/${bot.id}/communities/${cid}`, undefined, 204);
  assert.equal((await sp.ok(admin, 'GET', `/api/admin/bots/${bot.id}/communities`)).communities, []);
  expectStatus(await botCall(sp, token, 'GET', '/api/communities'), 200);
  await sp.ok(admin, 'DELETE', `/api/admin/bots/${bot.id}`, undefined, 204);
  expectError(await botCall(sp, token, 'GET', '/api/communities'), 401);
  expectError(await sp.call(admin, 'GET', `/api/admin/bots/${bot.id}`), 404);
  expectError(await sp.call(admin, 'DELETE', `/api/admin/bots/${bot.id}`), 404);
});

test('bootstrap answers 404 when no secret is configured', async ({ s, sp }) => {
  await s.restart({ CHATSVC_BOOTSTRAP_SECRET: undefined });
  expectError(
    await http(`${sp.base}/api/admin/bots/bootstrap-token`, {
      method: 'POST',
      headers: { 'x-provision-bootstrap-secret': SECRET },
    }),
    404,
  );
});

test('creating a bot: its username reservation and the bot in one log transaction where the store allows; an orphaned reservation is taken over', async (ctx) => {
  const { s, sp } = ctx;
  const bot = await sp.ok(ctx.admin, 'POST', '/api/admin/bots', { username: 'together_bot' }, 201);
  const reservation = await s.platform.store.readStream('chat.username_reservation-together_bot');
  assert.equal(
    reservation.map((e) => e.data.owner_id),
    [bot.id],
  );
  if (s.platform.commands.canRunTogether) {
    const { rows } = await s.db.pool.query(
      'SELECT DISTINCT transaction_id::text FROM events WHERE stream_id = ANY($1::text[])',
      [['chat.username_reservation-together_bot', chatUserStream(bot.id)]],
    );
    assert.is(rows.length, 1, 'one transaction');
  }
  // A reservation whose bot was never created (a creation that stopped half way, or a log written before): the next creation completes it under its id.
  const orphan = randomUUID();
  await s.platform.commands.record(
    'chat.username_reservation-orphan_bot',
    { type: 'UniqueValueReserved', data: { kind: 'chat_username', owner_id: orphan } },
    { actor: { kind: 'system', id: 'test' }, correlationId: null },
    { expected: 'no_stream' },
  );
  const resumed = await sp.ok(ctx.admin, 'POST', '/api/admin/bots', { username: 'orphan_bot' }, 201);
  assert.is(resumed.id, orphan);
  expectError(await sp.call(ctx.admin, 'POST', '/api/admin/bots', { username: 'orphan_bot' }), 409);
});

test.run();
