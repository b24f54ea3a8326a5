// The registry's authorisation matrix (spec 3, "Authentication" and "Endpoints"): every route
// the app answers × (admin session, read-only session, a token per scope, a token with every
// scope but the one the route needs, a revoked token, an expired token, nobody), each cell one
// real HTTP request with its expected status and error code. Sessions are real OIDC sessions
// from a real provider. The expected cells come from the spec's endpoint table (`ROUTES` below,
// written from the spec, not from the code); a test checks the table covers every route.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SCOPES, type Scope } from '../../domain/registry/catalog.ts';
import { createApp } from '../../main/apps.ts';
import { setCookies } from '../support/principals.ts';
import { startTestProvider, type TestProvider } from '../support/oidc-provider.ts';
import { http, startTestApps, type TestServices } from '../support/services.ts';

const PUBLIC_URL = 'http://registry.example.test';
const DAY = 86_400_000;

type Rule = { scope: Scope } | 'admin' | 'any' | 'session' | 'anonymous' | 'login';

interface World {
  s: TestServices;
  setup: Record<string, string>;
  seq: number;
  ids: { deployment: string; subscription: string; token: string };
}

interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  rule: Rule;
  /** Status of a permitted call. */
  ok: number;
  /** The concrete path of a call (fresh fixtures for deletes). */
  at?(w: World): Promise<string> | string;
  body?(w: World): unknown;
}

const api = (w: World, path: string) => `${w.s.registry}${path}`;
async function fresh(w: World, path: string, json: unknown): Promise<{ id: string; slug?: string }> {
  const r = await http(api(w, path), { headers: w.setup, json });
  if (r.status !== 201) throw new Error(`fixture ${path}: ${r.status} ${r.text}`);
  return r.body;
}
const n = (w: World) => ++w.seq;

const ROUTES: Route[] = [
  { method: 'GET', path: '/health', rule: 'anonymous', ok: 200 },
  { method: 'GET', path: '/api/v1/auth/login', rule: 'login', ok: 302 },
  { method: 'GET', path: '/api/v1/auth/callback', rule: 'login', ok: 401 },
  { method: 'GET', path: '/api/v1/auth/me', rule: 'any', ok: 200 },
  { method: 'POST', path: '/api/v1/auth/logout', rule: 'session', ok: 204 },
  { method: 'GET', path: '/api/v1/openapi.json', rule: 'any', ok: 200 },
  { method: 'GET', path: '/api/v1/docs', rule: 'any', ok: 200 },
  { method: 'GET', path: '/api/v1/docs/swagger-ui.css', rule: 'any', ok: 200 },
  { method: 'GET', path: '/api/v1/docs/swagger-ui-bundle.js', rule: 'any', ok: 200 },
  { method: 'GET', path: '/api/v1/customers', rule: { scope: 'customers:read' }, ok: 200 },
  {
    method: 'POST',
    path: '/api/v1/customers',
    rule: { scope: 'customers:write' },
    ok: 201,
    body: (w) => ({ slug: `m-${n(w)}`, name: 'Matrix' }),
  },
  {
    method: 'GET',
    path: '/api/v1/customers/{slug}',
    rule: { scope: 'customers:read' },
    ok: 200,
    at: () => '/api/v1/customers/acme',
  },
  {
    method: 'PATCH',
    path: '/api/v1/customers/{slug}',
    rule: { scope: 'customers:write' },
    ok: 200,
    at: () => '/api/v1/customers/acme',
    body: (w) => ({ notes: `n${n(w)}` }),
  },
  {
    method: 'DELETE',
    path: '/api/v1/customers/{slug}',
    rule: 'admin',
    ok: 204,
    at: async (w) =>
      `/api/v1/customers/${(await fresh(w, '/api/v1/customers', { slug: `gone-${n(w)}`, name: 'Gone' })).slug}`,
  },
  {
    method: 'GET',
    path: '/api/v1/customers/{slug}/deployments',
    rule: { scope: 'customers:read' },
    ok: 200,
    at: () => '/api/v1/customers/acme/deployments',
  },
  {
    method: 'GET',
    path: '/api/v1/customers/{slug}/subscriptions',
    rule: { scope: 'customers:read' },
    ok: 200,
    at: () => '/api/v1/customers/acme/subscriptions',
  },
  {
    method: 'POST',
    path: '/api/v1/customers/{slug}/contacts',
    rule: { scope: 'contacts:write' },
    ok: 201,
    at: () => '/api/v1/customers/acme/contacts',
    body: (w) => ({ name: 'C', email: `c${n(w)}@acme.test` }),
  },
  {
    method: 'GET',
    path: '/api/v1/customers/{slug}/touchpoints',
    rule: { scope: 'customers:read' },
    ok: 200,
    at: () => '/api/v1/customers/acme/touchpoints',
  },
  {
    method: 'POST',
    path: '/api/v1/customers/{slug}/touchpoints',
    rule: { scope: 'contacts:write' },
    ok: 201,
    at: () => '/api/v1/customers/acme/touchpoints',
    body: () => ({ kind: 'note', summary: 's', occurred_at: '2026-01-01T00:00:00Z' }),
  },
  {
    method: 'GET',
    path: '/api/v1/customers/{slug}/agreements',
    rule: { scope: 'customers:read' },
    ok: 200,
    at: () => '/api/v1/customers/acme/agreements',
  },
  {
    method: 'POST',
    path: '/api/v1/customers/{slug}/agreements',
    rule: { scope: 'customers:write' },
    ok: 201,
    at: () => '/api/v1/customers/acme/agreements',
    body: () => ({ kind: 'nda', title: 'NDA', signed_at: '2026-01-01' }),
  },
  {
    method: 'GET',
    path: '/api/v1/customers/{slug}/usage',
    rule: { scope: 'customers:read' },
    ok: 200,
    at: () => '/api/v1/customers/acme/usage',
  },
  {
    method: 'POST',
    path: '/api/v1/customers/{slug}/usage',
    rule: { scope: 'subscriptions:write' },
    ok: 201,
    at: () => '/api/v1/customers/acme/usage',
    body: () => ({
      product: 'chat',
      metric: 'seats',
      quantity: 1,
      period_start: '2026-01-01T00:00:00Z',
      period_end: '2026-02-01T00:00:00Z',
    }),
  },
  { method: 'GET', path: '/api/v1/deployments', rule: { scope: 'deployments:read' }, ok: 200 },
  {
    method: 'POST',
    path: '/api/v1/deployments',
    rule: { scope: 'deployments:write' },
    ok: 201,
    body: () => ({ customer_slug: 'acme', product: 'chat', version: '1.0.0' }),
  },
  {
    method: 'GET',
    path: '/api/v1/deployments/{id}',
    rule: { scope: 'deployments:read' },
    ok: 200,
    at: (w) => `/api/v1/deployments/${w.ids.deployment}`,
  },
  {
    method: 'PATCH',
    path: '/api/v1/deployments/{id}',
    rule: { scope: 'deployments:write' },
    ok: 200,
    at: (w) => `/api/v1/deployments/${w.ids.deployment}`,
    body: (w) => ({ version: `1.${n(w)}.0` }),
  },
  { method: 'GET', path: '/api/v1/subscriptions', rule: { scope: 'subscriptions:read' }, ok: 200 },
  {
    method: 'POST',
    path: '/api/v1/subscriptions',
    rule: { scope: 'subscriptions:write' },
    ok: 201,
    body: () => ({ customer_slug: 'acme', product: 'chat', mrr_cents: 100 }),
  },
  {
    method: 'GET',
    path: '/api/v1/subscriptions/{id}',
    rule: { scope: 'subscriptions:read' },
    ok: 200,
    at: (w) => `/api/v1/subscriptions/${w.ids.subscription}`,
  },
  {
    method: 'PATCH',
    path: '/api/v1/subscriptions/{id}',
    rule: { scope: 'subscriptions:write' },
    ok: 200,
    at: (w) => `/api/v1/subscriptions/${w.ids.subscription}`,
    body: (w) => ({ mrr_cents: n(w) }),
  },
  {
    method: 'POST',
    path: '/api/v1/leads',
    rule: { scope: 'customers:write' },
    ok: 201,
    body: (w) => ({ name: `Lead ${n(w)}`, email: `lead${w.seq}@x.test` }),
  },
  { method: 'GET', path: '/api/v1/summary', rule: { scope: 'customers:read' }, ok: 200 },
  { method: 'GET', path: '/api/v1/summary/trend', rule: { scope: 'customers:read' }, ok: 200 },
  { method: 'GET', path: '/api/v1/summary/rollout', rule: { scope: 'deployments:read' }, ok: 200 },
  { method: 'GET', path: '/api/v1/status', rule: { scope: 'customers:read' }, ok: 200 },
  { method: 'GET', path: '/api/v1/events', rule: { scope: 'customers:read' }, ok: 200 },
  { method: 'GET', path: '/api/v1/signals', rule: { scope: 'customers:read' }, ok: 200 },
  { method: 'GET', path: '/api/v1/admin/tokens', rule: 'admin', ok: 200 },
  {
    method: 'POST',
    path: '/api/v1/admin/tokens',
    rule: 'admin',
    ok: 201,
    body: () => ({ name: 'matrix', scopes: ['customers:read'] }),
  },
  {
    method: 'GET',
    path: '/api/v1/admin/tokens/{id}',
    rule: 'admin',
    ok: 200,
    at: (w) => `/api/v1/admin/tokens/${w.ids.token}`,
  },
  {
    method: 'DELETE',
    path: '/api/v1/admin/tokens/{id}',
    rule: 'admin',
    ok: 204,
    at: async (w) =>
      `/api/v1/admin/tokens/${(await fresh(w, '/api/v1/admin/tokens', { name: 'doomed', scopes: ['customers:read'] })).id}`,
  },
];

// --- principals (rows) -----------------------------------------------------------------------

type Principal =
  | { name: string; kind: 'admin' | 'readonly'; headers: Record<string, string> }
  | {
      name: string;
      kind: 'token';
      scopes: Scope[] | "all but the route's";
      headers: Record<string, string> | ((route: Route) => Record<string, string>);
    }
  | { name: string; kind: 'revoked' | 'expired' | 'none'; headers: Record<string, string> };

/** What the spec's rules say a principal gets from a route: [status, error code]. */
function expected(p: Principal, route: Route): [number, string | null] {
  const write = route.method !== 'GET';
  if (route.rule === 'anonymous' || route.rule === 'login') return [route.ok, route.ok === 401 ? 'login_failed' : null];
  if (p.kind === 'none' || p.kind === 'revoked' || p.kind === 'expired') return [401, 'unauthorized'];
  if (p.kind === 'token') {
    if (route.rule === 'admin') return [403, 'interactive_admin_only'];
    if (route.rule === 'session') return [403, 'session_required'];
    if (route.rule === 'any') return [route.ok, null];
    const scopes =
      p.scopes === "all but the route's"
        ? SCOPES.filter((s) => s !== (route.rule as { scope: Scope }).scope)
        : p.scopes;
    return scopes.includes(route.rule.scope) ? [route.ok, null] : [403, 'insufficient_scope'];
  }
  if (p.kind === 'admin') return [route.ok, null];
  // Read-only: any GET except the admin-only routes; no write (logout is the session's own).
  if (route.rule === 'admin') return [403, 'admin_required'];
  if (route.rule === 'session') return [route.ok, null];
  return write ? [403, 'read_only'] : [route.ok, null];
}

const test = suite<{ s: TestServices; idp: TestProvider; w: World; rows: Principal[] }>(
  'registry authorisation matrix',
);

test.before(async (ctx) => {
  ctx.idp = await startTestProvider(`${PUBLIC_URL}/api/v1/auth/callback`, {
    root: { email: 'root@example.test', name: 'Root', groups: ['registry-admin'] },
    alice: { email: 'alice@example.test', name: 'Alice', groups: ['registry-admin'] },
    bob: { email: 'bob@example.test', name: 'Bob', groups: ['staff'] },
  });
  ctx.s = await startTestApps('registry_matrix', {
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    REGISTRY_OIDC_ISSUER: ctx.idp.issuer,
    REGISTRY_OIDC_CLIENT_ID: ctx.idp.clientId,
    REGISTRY_OIDC_CLIENT_SECRET: ctx.idp.clientSecret,
  });
  const s = ctx.s;
  const session = async (account: string) => {
    const login = await http(`${s.registry}/api/v1/auth/login`);
    const back = await ctx.idp.signIn(login.headers.get('location')!, account);
    const cb = await http(`${s.registry}/api/v1/auth/callback${back.search}`, {
      headers: { cookie: `registry_oidc=${setCookies(login).registry_oidc!.value}` },
    });
    const c = setCookies(cb);
    if (cb.status !== 302 || !c.registry_sess) throw new Error(`sign-in ${account}: ${cb.status} ${cb.text}`);
    const csrf = c.registry_csrf!.value;
    return {
      cookie: `registry_sess=${c.registry_sess.value}; registry_csrf=${csrf}`,
      'x-csrf-token': csrf,
      origin: PUBLIC_URL,
      host: 'registry.example.test',
      'sec-fetch-site': 'same-origin',
    };
  };
  const w: World = { s, setup: await session('root'), seq: 0, ids: { deployment: '', subscription: '', token: '' } };
  const mint = async (scopes: readonly string[], days?: number) => {
    const r = (await fresh(w, '/api/v1/admin/tokens', {
      name: 'row',
      scopes,
      ...(days ? { expires_in_days: days } : {}),
    })) as { id: string; token?: string };
    return { id: r.id, headers: { authorization: `Bearer ${(r as { token: string }).token}` } };
  };
  // The expired token first: time then moves on a day and a bit; everything else is made after.
  const expiring = await mint(['customers:read'], 1);
  s.clock.advance(DAY + 60_000);
  w.setup = await session('root');
  await fresh(w, '/api/v1/customers', { slug: 'acme', name: 'Acme' });
  w.ids.deployment = (
    await fresh(w, '/api/v1/deployments', { customer_slug: 'acme', product: 'chat', version: '1.0.0' })
  ).id;
  w.ids.subscription = (await fresh(w, '/api/v1/subscriptions', { customer_slug: 'acme', product: 'chat' })).id;
  const revoked = await mint(['customers:read', 'customers:write']);
  assert.is(
    (await http(api(w, `/api/v1/admin/tokens/${revoked.id}`), { method: 'DELETE', headers: w.setup })).status,
    204,
  );
  w.ids.token = revoked.id;
  const perScope: Principal[] = [];
  for (const scope of SCOPES)
    perScope.push({ name: `token ${scope}`, kind: 'token', scopes: [scope], headers: (await mint([scope])).headers });
  const allBut = Object.fromEntries(
    await Promise.all(SCOPES.map(async (scope) => [scope, (await mint(SCOPES.filter((x) => x !== scope))).headers])),
  );
  const every = (await mint(SCOPES)).headers;
  ctx.w = w;
  ctx.rows = [
    { name: 'nobody', kind: 'none', headers: {} },
    { name: 'revoked token', kind: 'revoked', headers: revoked.headers },
    { name: 'expired token', kind: 'expired', headers: expiring.headers },
    ...perScope,
    {
      name: "token without the route's scope",
      kind: 'token',
      scopes: "all but the route's",
      headers: (route) => (typeof route.rule === 'object' ? allBut[route.rule.scope]! : every),
    },
    { name: 'read-only session', kind: 'readonly', headers: await session('bob') },
    { name: 'admin session', kind: 'admin', headers: await session('alice') },
  ];
});
test.after(async ({ s, idp }) => {
  await s?.close();
  await idp?.close();
});

test('the table covers every route the registry answers', ({ s }) => {
  const app = createApp('registry', s.platform);
  const answered = new Set(
    app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, '{$1}')}`),
  );
  const covered = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
  assert.equal([...answered].filter((r) => !covered.has(r)).sort(), []);
  assert.equal([...covered].filter((r) => !answered.has(r)).sort(), []);
});

test('every route × every principal', async ({ w, rows }) => {
  const failures: string[] = [];
  let cells = 0;
  for (const p of rows) {
    // Logout ends the row's session: it goes last.
    const ordered = [...ROUTES.filter((r) => r.rule !== 'session'), ...ROUTES.filter((r) => r.rule === 'session')];
    for (const route of ordered) {
      const [status, code] = expected(p, route);
      // Every cell gets real fixtures (a fresh one for deletes), so a refusal is the rule's, never a 404's.
      const path = route.at ? await route.at(w) : route.path;
      const headers = typeof p.headers === 'function' ? p.headers(route) : p.headers;
      const r = await http(api(w, path), { method: route.method, headers, json: route.body?.(w) });
      cells += 1;
      const codeSeen = r.body?.error?.code ?? null;
      if (r.status !== status || (code && codeSeen !== code)) {
        failures.push(
          `${p.name} × ${route.method} ${route.path}: expected ${status}${code ? ` ${code}` : ''}, got ${r.status} ${codeSeen ?? ''} ${r.status >= 400 ? (r.body?.error?.message ?? '') : ''}`,
        );
      }
    }
  }
  assert.equal(failures, []);
  assert.is(cells, rows.length * ROUTES.length);
});

test.run();
