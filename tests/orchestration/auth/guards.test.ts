// The shared guards and helpers every later route uses: the role guard (`readonly` gets 403
// `insufficient_role`), pagination (defaults, clamps, body fields), the web-UI mirrors (browser
// sessions only, CSRF-checked), and 429 with Retry-After and `retry_after`.

import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { requireRole } from '../../../api/orchestration/auth/guards.ts';
import { authenticate, type OrchEnv } from '../../../api/orchestration/auth/principal.ts';
import { OrchError } from '../../../api/orchestration/router.ts';
import { createBaseApp } from '../../../api/shared/base.ts';
import { rateLimited } from '../../../api/shared/http-errors.ts';
import { page, pageFields, pageQuery } from '../../../api/shared/pagination.ts';
import { createLogger } from '../../../infra/logging.ts';
import { orchDeps } from '../../../main/apps.ts';
import { browser, createAccount, login, type Account, type Session } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_guards-admin-key-000000000000000000';

interface Ctx {
  s: TestServices;
  readonly: Account;
  user: Account;
  admin: Account;
  adminSession: Session;
  readonlySession: Session;
  probe: OpenAPIHono<OrchEnv>;
}

const test = suite<Ctx>('shared guards and helpers');
test.before(async (ctx) => {
  ctx.s = await startTestApps('guards', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.readonly = await createAccount(ctx.s, ADMIN_KEY, 'readonly');
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user');
  ctx.admin = await createAccount(ctx.s, ADMIN_KEY, 'admin');
  ctx.adminSession = await login(ctx.s, ctx.admin);
  ctx.readonlySession = await login(ctx.s, ctx.readonly);
  // A probe app with the real principal resolution and the guards under test, as a later slice uses them.
  const deps = orchDeps(ctx.s.platform);
  const probe = createBaseApp<{ principal: never; apiKeyPresented: boolean }>({
    service: 'orch',
    errorSchema: OrchError,
    log: createLogger({ level: 'error', sink: () => {} }),
    errorBody: ({ code, message, extra }) => ({ error: code, message, ...extra }),
  }) as unknown as OpenAPIHono<OrchEnv>;
  probe.use('*', authenticate(deps));
  probe.openapi(
    createRoute({
      method: 'post',
      path: '/write',
      middleware: [requireRole('user')] as const,
      responses: { 200: { description: 'ok' } },
    }),
    (c) => c.json({ ok: true }, 200),
  );
  probe.openapi(
    createRoute({
      method: 'get',
      path: '/items',
      request: { query: pageQuery({ defaultLimit: 20, maxLimit: 100 }) },
      responses: {
        200: {
          description: 'a page',
          content: { 'application/json': { schema: z.object({ items: z.array(z.number()), ...pageFields }) } },
        },
      },
    }),
    (c) => {
      const q = c.req.valid('query');
      const all = Array.from({ length: 250 }, (_, i) => i);
      return c.json(page('items', all.slice(q.offset, q.offset + q.limit), all.length, q), 200);
    },
  );
  probe.get('/slow-down', () => {
    throw rateLimited(7.2, 'slow down');
  });
  ctx.probe = probe;
});
test.after(async ({ s }) => s?.close());

test('requireRole(user): readonly 403 insufficient_role, user and admin pass, anonymous 401', async ({
  probe,
  readonly,
  user,
  admin,
  readonlySession,
  s,
}) => {
  const call = (headers: Record<string, string>) =>
    probe.request('/write', { method: 'POST', headers }, { incoming: { socket: { remoteAddress: '127.0.0.1' } } });
  const refused = await call({ 'X-API-Key': readonly.apiKey });
  assert.is(refused.status, 403);
  assert.equal(await refused.json(), { error: 'insufficient_role', message: 'this action needs role user or higher' });
  const viaSession = await call({ cookie: readonlySession.cookie });
  assert.is(viaSession.status, 403);
  assert.is((await call({ 'X-API-Key': user.apiKey })).status, 200);
  assert.is((await call({ 'X-API-Key': admin.apiKey })).status, 200);
  const anonymous = await call({});
  assert.is(anonymous.status, 401);
  assert.is(((await anonymous.json()) as { message: string }).message, 'missing X-API-Key header');
  assert.is(
    ((await (await call({ 'X-API-Key': 'orch_nope' })).json()) as { message: string }).message,
    'invalid or inactive API key',
  );
  void s;
});

test('pagination: default, clamps, unreadable values fall back, body carries total/limit/offset', async ({ probe }) => {
  const get = async (query: string) =>
    (await probe.request(`/items${query}`)).json() as Promise<{
      items: number[];
      total: number;
      limit: number;
      offset: number;
    }>;
  const first = await get('');
  assert.equal([first.limit, first.offset, first.total, first.items.length, first.items[0]], [20, 0, 250, 20, 0]);
  assert.equal(
    [(await get('?limit=1000')).limit, (await get('?limit=0')).limit, (await get('?limit=-5')).limit],
    [100, 1, 1],
  );
  assert.equal(
    [(await get('?limit=abc')).limit, (await get('?offset=-3')).offset, (await get('?offset=x')).offset],
    [20, 0, 0],
  );
  const last = await get('?limit=100&offset=200');
  assert.equal([last.items.length, last.items[0], last.offset], [50, 200, 200]);
  assert.is((await get('?unknown=1')).limit, 20); // unknown query parameters are dropped
});

test('every 429: Retry-After header and retry_after in the body (whole seconds, rounded up)', async ({ probe }) => {
  const r = await probe.request('/slow-down');
  assert.is(r.status, 429);
  assert.is(r.headers.get('retry-after'), '8');
  assert.equal(await r.json(), { error: 'rate_limited', message: 'slow down', retry_after: 8 });
});

test('web-UI mirrors: the same handler under /api/..., for browser sessions only', async ({
  s,
  adminSession,
  admin,
}) => {
  const me = await http(`${s.orch}/api/me`, { headers: { cookie: adminSession.cookie } });
  assert.is(me.status, 200);
  assert.is(me.body.username, admin.username);
  const v1 = await http(`${s.orch}/api/v1/me`, { headers: { cookie: adminSession.cookie } });
  assert.equal(me.body, v1.body);
  const keyed = await http(`${s.orch}/api/me`, { headers: { 'X-API-Key': admin.apiKey } });
  assert.is(keyed.status, 403);
  assert.is(keyed.body.error, 'session_required');
  const anonymous = await http(`${s.orch}/api/me`);
  assert.is(anonymous.status, 401);
  assert.is(anonymous.body.message, 'missing X-API-Key header');
  const list = await http(`${s.orch}/api/admin/users?limit=2`, { headers: { cookie: adminSession.cookie } });
  assert.is(list.status, 200);
  assert.is(list.body.limit, 2);
});

test('web-UI mirrors: writes pass the CSRF check; require_admin applies under /api/admin/*', async ({
  s,
  adminSession,
  readonlySession,
  user,
}) => {
  const body = { role: 'readonly' };
  const noToken = await http(`${s.orch}/api/admin/users/${user.id}`, {
    method: 'PATCH',
    headers: { cookie: adminSession.cookie },
    json: body,
  });
  assert.is(noToken.status, 403);
  assert.is(noToken.body.error, 'csrf_failed');
  const crossSite = await http(`${s.orch}/api/admin/users/${user.id}`, {
    method: 'PATCH',
    headers: { ...browser(s, adminSession), 'sec-fetch-site': 'cross-site' },
    json: body,
  });
  assert.is(crossSite.body.error, 'csrf_failed');
  const ok = await http(`${s.orch}/api/admin/users/${user.id}`, {
    method: 'PATCH',
    headers: browser(s, adminSession),
    json: body,
  });
  assert.is(ok.status, 200);
  assert.is(ok.body.role, 'readonly');
  const notAdmin = await http(`${s.orch}/api/admin/users`, { headers: { cookie: readonlySession.cookie } });
  assert.is(notAdmin.status, 403);
  assert.equal(notAdmin.body, { error: 'forbidden', message: 'admin role required' });
  const created = await http(`${s.orch}/api/admin/users`, {
    headers: browser(s, adminSession),
    json: { username: 'via-mirror', email: 'via-mirror@example.test', role: 'user' },
  });
  assert.is(created.status, 201);
  assert.match(created.body.api_key, /^orch_/);
  assert.is(created.headers.get('cache-control'), 'no-store');
});

test.run();
