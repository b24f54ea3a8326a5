// The authorisation matrix, generated from the routes: every operation each service documents,
// called as every kind of principal, each answer checked against the access rules the route
// states (its `x-access`, api/shared/route-policy.ts). The rules' meaning is written once per
// service below; the walk is tests/support/authorization-matrix.ts. In-process requests, one
// database per world, bodies empty and ids of nothing, so an admitted call stops at its own
// validation or lookup.
//
// What a cell shows is admission only. The exact refusal bodies, the order of refusals within a
// route and what an admitted call does are the slices' own suites (tests/orchestration/users/,
// auth/guards, agents/credential, log/ws for the sockets' upgrades, ...).

import { randomUUID } from 'node:crypto';
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SCOPES } from '../../domain/registry/catalog.ts';
import { createApp } from '../../main/apps.ts';
import { agentWithKey, createProject, startAgentApps, type AgentKeys } from '../support/agents.ts';
import {
  concretePath,
  operationsOf,
  runMatrix,
  undeclared,
  type MatrixPrincipal,
  type Operation,
  type RuleTable,
  type Traits,
} from '../support/authorization-matrix.ts';
import { browser, createAccount, login, setCookies } from '../support/principals.ts';
import { interactive, mintToken, REGISTRY_ENV } from '../support/registry.ts';
import { bearer } from '../support/chat.ts';
import { Spaces } from '../support/spaces.ts';
import { http, startTestApps, type TestServices } from '../support/services.ts';

// ---------------------------------------------------------------------------------------------
// Orchestration (spec 1, "Authentication"): what each rule admits.

const ROLE_RANK = { readonly: 0, user: 1, admin: 2 } as const;

const ORCH_RULES: RuleTable = {
  anyone: () => true,
  nobody: () => false,
  'signed-in': (t) => t.signedIn,
  'role:user': (t) => t.signedIn && ROLE_RANK[t.role ?? 'readonly'] >= ROLE_RANK.user,
  admin: (t) => t.signedIn && t.role === 'admin',
  'admin key': (t) => !!t.apiKey && t.role === 'admin',
  session: (t) => !!t.session,
  runner: (t) => !!t.runner,
};

const documentOf = (s: TestServices, service: 'orch' | 'chat' | 'registry') =>
  createApp(service, s.platform).getOpenAPI31Document({ openapi: '3.1.0', info: { title: service, version: '0' } });

/** The sockets answer a plain GET with 426 whoever asks; their upgrades: tests/orchestration/log/ws.test.ts. */
const socket = (op: Operation) => (op.tags.includes('websocket') ? 426 : undefined);
/** Logout ends the caller's session: each principal calls it last. */
const endsSession = (op: Operation) => op.path === '/auth/logout';

const keyed = (key: string) => ({ 'X-API-Key': key });

/** The routes outside the document, with the rule each states where it is declared. */
const UNDOCUMENTED: Operation[] = [
  // api/orchestration/commander-link/routes.ts: no request carries a valid signature in this build.
  { method: 'GET', path: '/api/v1/commander-link/anything', rules: ['nobody'], tags: [] },
  { method: 'POST', path: '/api/v1/commander-link', rules: ['nobody'], tags: [] },
  // api/orchestration/auth/admin-area.ts: the admin area's paths no route takes.
  { method: 'GET', path: '/api/admin/no-such-page', rules: ['admin'], tags: [] },
  { method: 'DELETE', path: '/api/v1/admin/no-such-thing/{id}', rules: ['admin'], tags: [] },
  { method: 'PUT', path: '/api/templates', rules: ['admin'], tags: [] },
];

interface OrchWorld {
  s: TestServices;
  keys: AgentKeys;
  principals: MatrixPrincipal[];
}

async function localWorld(): Promise<OrchWorld> {
  const { s, keys } = await startAgentApps('authz_local');
  const account = (role: 'readonly' | 'user' | 'admin') => createAccount(s, keys.adminKey, role);
  const [readonly, user, admin] = await Promise.all([account('readonly'), account('user'), account('admin')]);
  // Sessions belong to accounts of their own: a session's self-rotation changes its account's key.
  const sessions = await Promise.all(
    (['readonly', 'user', 'admin'] as const).map(async (role) => ({
      role,
      session: await login(s, await account(role)),
    })),
  );
  const agent = await agentWithKey(s, keys, await createProject(s, keys.adminKey));
  const principals: MatrixPrincipal[] = [
    { name: 'anonymous', traits: { signedIn: false }, headers: () => ({}) },
    {
      name: 'invalid key',
      traits: { signedIn: false },
      headers: () => keyed('orch_not-a-real-key-00000000000000000000'),
    },
    {
      name: 'readonly key',
      traits: { signedIn: true, role: 'readonly', apiKey: true },
      headers: () => keyed(readonly.apiKey),
    },
    { name: 'user key', traits: { signedIn: true, role: 'user', apiKey: true }, headers: () => keyed(user.apiKey) },
    { name: 'admin key', traits: { signedIn: true, role: 'admin', apiKey: true }, headers: () => keyed(admin.apiKey) },
    {
      name: 'bootstrap admin key',
      traits: { signedIn: true, role: 'admin', apiKey: true },
      headers: () => keyed(keys.adminKey),
    },
    // The runner and agents act with role user, never admin.
    {
      name: 'runner key',
      traits: { signedIn: true, role: 'user', apiKey: true, runner: true },
      headers: () => keyed(keys.runnerKey),
    },
    {
      name: 'agent credential',
      traits: { signedIn: true, role: 'user', apiKey: true },
      headers: () => keyed(agent.apiKey),
    },
    ...sessions.map(({ role, session }) => ({
      name: `${role} session`,
      traits: { signedIn: true, role, session: true } satisfies Traits,
      headers: () => browser(s, session),
    })),
  ];
  return { s, keys, principals };
}

/** Forward-auth SSO: identities asserted by a trusted proxy, each signed in on its first request. */
async function forwardAuthWorld(): Promise<OrchWorld> {
  const { s, keys } = await startAgentApps('authz_sso', {
    ORCH_FORWARD_AUTH: 'true',
    ORCH_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32',
  });
  const identity = async (role: 'readonly' | 'user' | 'admin', groups: string): Promise<MatrixPrincipal> => {
    const user = `sso-${role}-${randomUUID().slice(0, 8)}`;
    const idp = { 'X-Idp-Username': user, 'X-Idp-Email': `${user}@corp.example`, 'X-Idp-Groups': groups };
    const first = await http(`${s.orch}/auth/session`, { headers: idp });
    assert.is(first.body.authenticated, true, `${role} identity signs in`);
    const cookies = setCookies(first);
    const session = {
      sessionId: cookies.orch_sess!.value,
      csrf: cookies.orch_csrf!.value,
      cookie: `orch_sess=${cookies.orch_sess!.value}; orch_csrf=${cookies.orch_csrf!.value}`,
    };
    return {
      name: `forward-auth ${role}`,
      traits: { signedIn: true, role, session: true },
      headers: () => ({ ...idp, ...browser(s, session) }),
    };
  };
  const principals = [
    { name: 'anonymous', traits: { signedIn: false }, headers: () => ({}) },
    { name: 'admin key', traits: { signedIn: true, role: 'admin', apiKey: true }, headers: () => keyed(keys.adminKey) },
    await identity('readonly', ''),
    await identity('user', 'orch-user'),
    await identity('admin', 'orch-admin|orch-user'),
  ] satisfies MatrixPrincipal[];
  return { s, keys, principals };
}

// ---------------------------------------------------------------------------------------------
// Registry (spec 3, "Authentication"): interactive users (forward-auth here; OIDC sessions are the
// same principal, tests/registry/authorization-matrix.test.ts) and machine tokens of each scope.

/** An interactive user reads what any scope guards; only an admin writes, except to end its own session. */
const REGISTRY_RULES: RuleTable = {
  anyone: () => true,
  'signed-in': (t) => t.signedIn,
  admin: (t) => !!t.session && t.role === 'admin',
  session: (t) => !!t.session,
  ...Object.fromEntries(
    SCOPES.map((scope) => [
      `scope:${scope}`,
      (t: Traits, op: Operation) =>
        t.scopes ? t.scopes.includes(scope) : !!t.session && (t.role === 'admin' || op.method === 'GET'),
    ]),
  ),
};

interface RegistryWorld {
  s: TestServices;
  principals: MatrixPrincipal[];
}

async function registryWorld(): Promise<RegistryWorld> {
  const s = await startTestApps('authz_registry', REGISTRY_ENV);
  const admin = await interactive(s, 'matrix-admin', 'admin');
  const reader = await interactive(s, 'matrix-reader', 'readonly');
  const tokens = await Promise.all(SCOPES.map(async (scope) => ({ scope, token: await mintToken(s, admin, [scope]) })));
  const principals: MatrixPrincipal[] = [
    { name: 'anonymous', traits: { signedIn: false }, headers: () => ({}) },
    {
      name: 'invalid token',
      traits: { signedIn: false },
      headers: () => ({ authorization: 'Bearer reg_not-a-real-token' }),
    },
    ...tokens.map(({ scope, token }) => ({
      name: `token ${scope}`,
      traits: { signedIn: true, apiKey: true, scopes: [scope] },
      headers: () => token.headers,
    })),
    {
      name: 'forward-auth read-only',
      traits: { signedIn: true, role: 'readonly', session: true },
      headers: () => reader.headers,
    },
    {
      name: 'forward-auth admin',
      traits: { signedIn: true, role: 'admin', session: true },
      headers: () => admin.headers,
    },
  ];
  return { s, principals };
}

// ---------------------------------------------------------------------------------------------
// Chat (spec 2, "Authentication", "Bots"): access tokens of a user and of the instance admin, and
// bot tokens of each scope. A rule names the credentials it takes (`user or bot default`); what a
// member of a space may do there is tests/chat/authorization-matrix.test.ts.

const jwtUser = (t: Traits) => t.signedIn && !t.scopes;
const bot = (scope: string) => (t: Traits) => !!t.scopes?.includes(scope);
const instanceAdmin = (t: Traits) => jwtUser(t) && t.role === 'admin';

const CHAT_RULES: RuleTable = {
  anyone: () => true,
  // The credential is the URL or a header secret: who else the caller is plays no part (the routes' own suites check those).
  'capability URL': () => true,
  'deploy secret': () => true,
  user: jwtUser,
  'user or bot default': (t) => jwtUser(t) || bot('default')(t),
  'user or bot bot:provision': (t) => jwtUser(t) || bot('bot:provision')(t),
  'bot metrics': bot('metrics'),
  'instance admin': instanceAdmin,
  'instance admin or bot bot:provision': (t) => instanceAdmin(t) || bot('bot:provision')(t),
};

interface ChatWorld {
  s: TestServices;
  principals: MatrixPrincipal[];
}

async function chatWorld(): Promise<ChatWorld> {
  const s = await startTestApps('authz_chat', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  const sp = new Spaces(s);
  // The first account registered owns the instance.
  const owner = await sp.register('own');
  const user = await sp.register('usr');
  const made = await sp.ok(owner, 'POST', '/api/admin/bots', { username: `mx_${randomUUID().slice(0, 8)}` }, 201);
  const token = async (scope: string) =>
    (await sp.ok(owner, 'POST', `/api/admin/bots/${made.id}/tokens`, { scope, rate_limit_per_window: 100_000 }, 201))
      .token as string;
  const bots = await Promise.all(
    ['default', 'metrics', 'bot:provision'].map(async (scope) => ({ scope, token: await token(scope) })),
  );
  const principals: MatrixPrincipal[] = [
    { name: 'anonymous', traits: { signedIn: false }, headers: () => ({}) },
    { name: 'invalid token', traits: { signedIn: false }, headers: () => ({ authorization: 'Bearer not-a-token' }) },
    { name: 'user', traits: { signedIn: true, role: 'user' }, headers: () => bearer(user) },
    { name: 'instance owner', traits: { signedIn: true, role: 'admin' }, headers: () => bearer(owner) },
    ...bots.map(({ scope, token: t }) => ({
      name: `bot ${scope}`,
      traits: { signedIn: true, scopes: [scope] },
      headers: () => ({ 'x-bot-token': t }),
    })),
  ];
  return { s, principals };
}

const test = suite<{ local?: OrchWorld; sso?: OrchWorld; registry?: RegistryWorld; chat?: ChatWorld }>(
  'authorisation matrix, generated from the routes',
);
test.before(async (ctx) => {
  // One world after another: the machine is shared, and each world's setup is short.
  ctx.local = await localWorld();
  ctx.sso = await forwardAuthWorld();
  ctx.registry = await registryWorld();
  ctx.chat = await chatWorld();
});
test.after(async ({ local, sso, registry, chat }) => {
  await local?.s.close();
  await sso?.s.close();
  await registry?.s.close();
  await chat?.s.close();
});

test('every route of the three services states an access rule the matrix knows', ({ local, registry, chat }) => {
  const orch = operationsOf(documentOf(local!.s, 'orch'));
  assert.ok(orch.length > 100, `${orch.length} operations`);
  assert.equal(undeclared(orch, ORCH_RULES), []);
  assert.equal(undeclared(operationsOf(documentOf(registry!.s, 'registry')), REGISTRY_RULES), []);
  assert.equal(undeclared(operationsOf(documentOf(chat!.s, 'chat')), CHAT_RULES), []);
});

// ---------------------------------------------------------------------------------------------
// The matrix itself: it cannot pass over a route without a rule, and its verdicts can fail (before
// the full matrices, whose logout cells end the sessions).

test('a route added without a rule is reported, and one with a rule the table does not know', ({ local }) => {
  const app = createApp('orch', local!.s.platform) as unknown as OpenAPIHono;
  app.openapi(
    createRoute({ method: 'get', path: '/api/v1/sneaky', responses: { 200: { description: 'not declared' } } }),
    (c) => c.text('open'),
  );
  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/odd',
      middleware: [(async (_c: unknown, next: () => Promise<void>) => next()) as never],
      responses: { 200: { description: 'x' } },
    }),
    (c) => c.text('open'),
  );
  const ops = operationsOf(app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'orch', version: '0' } }));
  assert.equal(undeclared(ops, ORCH_RULES), ['GET /api/v1/sneaky: no access rule', 'POST /api/v1/odd: no access rule']);
  assert.equal(
    undeclared(ops, { anyone: () => true }).filter((line) => line.startsWith('GET /api/v1/me:')),
    ["GET /api/v1/me: rule signed-in is not in the matrix's table"],
  );
});

test('a route that lets in a principal its rule refuses is a mismatch', async ({ local }) => {
  const { s, principals } = local!;
  // GET /api/v1/me admits any signed-in caller; a table saying it is the admin's must catch the others.
  const ops = operationsOf(documentOf(s, 'orch')).filter((op) => op.method === 'GET' && op.path === '/api/v1/me');
  const { mismatches } = await runMatrix({
    origin: s.orch,
    ops,
    principals,
    table: { ...ORCH_RULES, 'signed-in': ORCH_RULES.admin! },
  });
  assert.equal(
    mismatches.map((m) => m.split(' × ')[0]),
    ['readonly key', 'user key', 'runner key', 'agent credential', 'readonly session', 'user session'],
  );
  assert.is(concretePath('/api/v1/tasks/{id}'), '/api/v1/tasks/00000000-0000-4000-8000-0000000ab5e7');
});

test('orchestration: every route × every principal (keys, runner, agent, password sessions)', async ({ local }) => {
  const { s, principals } = local!;
  const ops = [...operationsOf(documentOf(s, 'orch')), ...UNDOCUMENTED];
  const { cells, mismatches } = await runMatrix({
    origin: s.orch,
    ops,
    principals,
    table: ORCH_RULES,
    last: endsSession,
    fixed: socket,
  });
  assert.ok(cells >= ops.length * principals.length);
  assert.equal(mismatches, [], mismatches.join('\n'));
});

test('orchestration under forward-auth SSO: every route × every identity', async ({ sso }) => {
  const { s, principals } = sso!;
  const ops = [...operationsOf(documentOf(s, 'orch')), ...UNDOCUMENTED];
  const { mismatches } = await runMatrix({
    origin: s.orch,
    ops,
    principals,
    table: ORCH_RULES,
    last: endsSession,
    fixed: socket,
  });
  assert.equal(mismatches, [], mismatches.join('\n'));
});

test('registry: every route × every principal (tokens of each scope, forward-auth identities)', async ({
  registry,
}) => {
  const { s, principals } = registry!;
  const ops = operationsOf(documentOf(s, 'registry'));
  const { mismatches } = await runMatrix({
    origin: s.registry,
    ops,
    principals,
    table: REGISTRY_RULES,
    last: (op) => op.path === '/api/v1/auth/logout',
  });
  assert.equal(mismatches, [], mismatches.join('\n'));
});

test('chat: every route × every principal (a user, the instance owner, a bot token of each scope)', async ({
  chat,
}) => {
  const { s, principals } = chat!;
  const ops = operationsOf(documentOf(s, 'chat'));
  // Session ending and account deletion end the caller's credentials: each principal calls them last.
  const last = (op: Operation) => ['/api/account/delete', '/api/account/sessions/revoke-all'].includes(op.path);
  const { mismatches } = await runMatrix({ origin: s.chat, ops, principals, table: CHAT_RULES, last, fixed: socket });
  assert.equal(mismatches, [], mismatches.join('\n'));
});

test.run();
