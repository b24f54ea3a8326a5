// Machine tokens through real HTTP: administration by interactive admins only (plaintext shown
// once, stored hashed with a prefix), scopes from the spec (unknown 422), expiry 1-365 days
// (default 90), revoked or expired 401, last_used_at kept (coalesced), and the per-token rate
// limit (429 with Retry-After).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TOKEN_USE_COALESCE_MS } from '../../../api/registry/auth/token-use.ts';
import { eventCount, interactive, mintToken, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';

const DAY = 86_400_000;
const test = suite<{ s: TestServices; admin: Interactive; url: string }>('registry machine tokens');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_tokens', { ...REGISTRY_ENV, REGISTRY_TOKEN_RATE_PER_MIN: '5' });
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
  ctx.url = `${ctx.s.registry}/api/v1/admin/tokens`;
});
test.after(async ({ s }) => s?.close());

test('create: registry_sk_ token shown once (no-store), stored only hashed with a prefix; default expiry 90 days', async ({
  s,
  admin,
  url,
}) => {
  const r = await http(url, {
    headers: admin.headers,
    json: { name: 'ci', scopes: ['customers:read', 'deployments:write'] },
  });
  assert.is(r.status, 201);
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.match(r.body.token, /^registry_sk_[A-Za-z0-9_-]{43}$/);
  assert.is(r.body.prefix, r.body.token.slice(0, 18));
  assert.equal(r.body.scopes, ['customers:read', 'deployments:write']);
  assert.is(r.body.status, 'active');
  assert.is(r.body.created_by, 'forward_auth:ada');
  assert.is(Math.round((Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)) / DAY), 90);
  const log = await logText(s);
  assert.not.ok(log.includes(r.body.token), 'the plaintext never reaches the log');
  assert.not.ok(log.includes(r.body.token.slice(12)), 'nor its random part');
  const { rows } = await s.db.pool.query('SELECT token_hash FROM registry_tokens WHERE id = $1', [r.body.id]);
  assert.match(rows[0].token_hash, /^[0-9a-f]{64}$/);
  const listed = await http(url, { headers: admin.headers });
  assert.is(listed.status, 200);
  assert.is(listed.body.total, 1);
  assert.not.ok(listed.text.includes(r.body.token), 'lists never show the plaintext');
  const one = await http(`${url}/${r.body.id}`, { headers: admin.headers });
  assert.is(one.status, 200);
  assert.is(one.body.token, undefined);
  assert.is(one.body.prefix, r.body.prefix);
});

test('create: unknown scope, no scope, expiry outside 1-365 days, unknown fields: 422; nothing written', async ({
  s,
  admin,
  url,
}) => {
  const before = await eventCount(s);
  for (const body of [
    { name: 'x', scopes: ['customers:admin'] },
    { name: 'x', scopes: ['customers:read', 'everything'] },
    { name: 'x', scopes: [] },
    { name: 'x' },
    { name: 'x', scopes: ['customers:read', 'customers:read'] },
    { name: 'x', scopes: ['customers:read'], expires_in_days: 0 },
    { name: 'x', scopes: ['customers:read'], expires_in_days: 366 },
    { name: 'x', scopes: ['customers:read'], expires_in_days: 1.5 },
    { name: 'x', scopes: ['customers:read'], never_expires: true },
    { scopes: ['customers:read'] },
  ]) {
    const r = await http(url, { headers: admin.headers, json: body });
    assert.is(r.status, 422, JSON.stringify(body));
    assert.is(r.body.error.code, 'validation_failed');
  }
  assert.is(await eventCount(s), before);
  for (const days of [1, 365]) {
    const r = await http(url, {
      headers: admin.headers,
      json: { name: `d${days}`, scopes: ['customers:read'], expires_in_days: days },
    });
    assert.is(r.status, 201);
    assert.is(Math.round((Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)) / DAY), days);
  }
});

test('administration is interactive-admin only: every token (whatever its scopes) gets 403, a read-only user 403, nobody 401', async ({
  s,
  admin,
  url,
}) => {
  const all = await mintToken(s, admin, [
    'customers:read',
    'customers:write',
    'contacts:write',
    'deployments:read',
    'deployments:write',
    'subscriptions:read',
    'subscriptions:write',
  ]);
  const reader = await interactive(s, 'rita', 'readonly');
  const id = (await http(url, { headers: admin.headers })).body.items[0].id;
  for (const [method, path, json] of [
    ['GET', url, undefined],
    ['POST', url, { name: 'x', scopes: ['customers:read'] }],
    ['GET', `${url}/${id}`, undefined],
    ['DELETE', `${url}/${id}`, undefined],
  ] as const) {
    const byToken = await http(path, { method, headers: all.headers, json });
    assert.is(byToken.status, 403, `${method} ${path}`);
    assert.is(byToken.body.error.code, 'interactive_admin_only');
    const byReader = await http(path, { method, headers: reader.headers, json });
    assert.is(byReader.status, 403);
    assert.is(byReader.body.error.code, 'admin_required');
    assert.is((await http(path, { method, json })).status, 401);
  }
});

test('a token calls exactly the routes its scopes cover', async ({ s, admin }) => {
  const deployer = await mintToken(s, admin, ['deployments:read']);
  assert.is((await http(`${s.registry}/api/v1/deployments`, { headers: deployer.headers })).status, 200);
  assert.is((await http(`${s.registry}/api/v1/summary/rollout`, { headers: deployer.headers })).status, 200);
  const refused = await http(`${s.registry}/api/v1/customers`, { headers: deployer.headers });
  assert.is(refused.status, 403);
  assert.equal(refused.body.error, {
    code: 'insufficient_scope',
    message: 'this route needs the scope customers:read',
    required_scope: 'customers:read',
  });
  assert.is(
    (
      await http(`${s.registry}/api/v1/deployments`, {
        headers: deployer.headers,
        json: { customer_slug: 'x', product: 'chat', version: '1' },
      })
    ).status,
    403,
  );
});

test('revoked: 401 from the next request on; revoking again is a no-op; unknown id 404', async ({ s, admin, url }) => {
  const token = await mintToken(s, admin, ['customers:read']);
  assert.is((await http(`${s.registry}/api/v1/customers`, { headers: token.headers })).status, 200);
  assert.is((await http(`${url}/${token.id}`, { method: 'DELETE', headers: admin.headers })).status, 204);
  const r = await http(`${s.registry}/api/v1/customers`, { headers: token.headers });
  assert.is(r.status, 401);
  assert.equal(r.body.error, { code: 'unauthorized', message: 'this token has been revoked' });
  const before = await eventCount(s);
  assert.is((await http(`${url}/${token.id}`, { method: 'DELETE', headers: admin.headers })).status, 204);
  assert.is(await eventCount(s), before);
  assert.is((await http(`${url}/${token.id}`, { headers: admin.headers })).body.status, 'revoked');
  for (const missing of ['00000000-0000-4000-8000-00000000dead', 'x']) {
    const r404 = await http(`${url}/${missing}`, { method: 'DELETE', headers: admin.headers });
    assert.is(r404.status, 404);
    assert.is(r404.body.error.code, 'token_not_found');
  }
});

test('invalid tokens: 401 (wrong prefix, unknown, malformed header)', async ({ s }) => {
  for (const header of ['Bearer registry_sk_nope', 'Bearer orch_abc', 'Basic dXNlcjpwdw==', 'Bearer']) {
    const r = await http(`${s.registry}/api/v1/customers`, { headers: { authorization: header } });
    assert.is(r.status, 401, header);
    assert.is(r.body.error.code, 'unauthorized');
  }
  const none = await http(`${s.registry}/api/v1/customers`);
  assert.is(none.status, 401);
  assert.match(none.body.error.message, /authentication required/);
});

test('last_used_at: set on use, then coalesced (one event a minute per token)', async ({ s, admin, url }) => {
  const token = await mintToken(s, admin, ['customers:read']);
  assert.is((await http(`${url}/${token.id}`, { headers: admin.headers })).body.last_used_at, null);
  assert.is((await http(`${s.registry}/api/v1/customers`, { headers: token.headers })).status, 200);
  const first = (await http(`${url}/${token.id}`, { headers: admin.headers })).body.last_used_at;
  assert.ok(first);
  for (let i = 0; i < 3; i++)
    assert.is((await http(`${s.registry}/api/v1/customers`, { headers: token.headers })).status, 200);
  const uses = async () =>
    (
      await s.db.pool.query(
        `SELECT count(*)::int AS n FROM events WHERE type = 'RegistryTokenUsed' AND data->>'token_id' = $1`,
        [token.id],
      )
    ).rows[0].n;
  assert.is(await uses(), 1);
  assert.is((await http(`${url}/${token.id}`, { headers: admin.headers })).body.last_used_at, first);
  s.clock.advance(TOKEN_USE_COALESCE_MS + 1000);
  assert.is((await http(`${s.registry}/api/v1/customers`, { headers: token.headers })).status, 200);
  assert.is(await uses(), 2);
  assert.ok((await http(`${url}/${token.id}`, { headers: admin.headers })).body.last_used_at > first);
});

test('rate limit per token (REGISTRY_TOKEN_RATE_PER_MIN=5): 429 with Retry-After; another token is unaffected', async ({
  s,
  admin,
}) => {
  const busy = await mintToken(s, admin, ['customers:read']);
  const other = await mintToken(s, admin, ['customers:read']);
  const statuses: number[] = [];
  let last;
  for (let i = 0; i < 7; i++) {
    last = await http(`${s.registry}/api/v1/customers`, { headers: busy.headers });
    statuses.push(last.status);
  }
  assert.equal(statuses, [200, 200, 200, 200, 200, 429, 429]);
  assert.is(last!.body.error.code, 'rate_limited');
  assert.ok(Number(last!.headers.get('retry-after')) >= 1);
  assert.is(last!.body.error.retry_after, Number(last!.headers.get('retry-after')));
  assert.is((await http(`${s.registry}/api/v1/customers`, { headers: other.headers })).status, 200);
  s.clock.advance(61_000);
  assert.is((await http(`${s.registry}/api/v1/customers`, { headers: busy.headers })).status, 200);
});

test('expired: 401 once the expiry passes, and listed as expired', async ({ s, admin, url }) => {
  const token = await mintToken(s, admin, ['customers:read'], { expires_in_days: 1 });
  assert.is((await http(`${s.registry}/api/v1/customers`, { headers: token.headers })).status, 200);
  s.clock.advance(DAY + 60_000);
  const r = await http(`${s.registry}/api/v1/customers`, { headers: token.headers });
  assert.is(r.status, 401);
  assert.equal(r.body.error, { code: 'unauthorized', message: 'this token has expired' });
  assert.is((await http(`${url}/${token.id}`, { headers: admin.headers })).body.status, 'expired');
});

test.run();
