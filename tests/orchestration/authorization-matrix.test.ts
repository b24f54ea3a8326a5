// The authorisation matrix of the orchestration service (spec 1, "Authentication", "Accounts and
// keys", "Errors"): every route the app has today × every kind of principal, each cell one real
// HTTP request against the real server, with the expected status (and, for 401/403/404/409, the
// `error` code and `message`).
//
// To cover a new route: add it to `routes` and give it a cell in every row of `expect` (the type
// makes a missing cell a compile error); add it to `optOutExpect` where enforcement matters.
//
// Order matters in three places, and the runner takes care of it:
// - Rows run top to bottom, and every key row comes before the session rows: a session's
//   `POST /api/v1/me/api-key/rotate` rotates that account's key (and the admin session's admin
//   rotation rotates the key of `target`, which no row uses as its credential).
// - Within a row, a route marked `endsSession` (logout) runs last, so it cannot end the session
//   the other cells of that row use.
// - `/auth/register` succeeds only while no local password account exists. The first test below
//   takes that one 201 on the fresh server (and shows the 409 after it); the matrix then creates
//   password accounts for its sessions anyway, so every admin-key cell of the matrix is 409
//   `already_registered`.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BOOTSTRAP_ADMIN_ID, RUNNER_ID } from '../../domain/orchestration/users/decider.ts';
import { browser, createAccount, login, type Account, type Session } from '../support/principals.ts';
import { http, startTestApps, type Reply, type TestServices } from '../support/services.ts';

// ---------------------------------------------------------------------------------------------
// The world a table runs against: one server, its configured keys, the accounts and sessions.

interface World {
  s: TestServices;
  adminKey: string;
  runnerKey: string;
  /** Principal accounts by role; `admin` is an admin created through POST /api/v1/admin/users. */
  accounts: Partial<Record<'readonly' | 'user' | 'admin', Account>>;
  sessions: Partial<Record<'readonly' | 'user' | 'admin', Session>>;
  /** A user account that only the admin rotation route targets (no row uses its key). */
  target?: Account;
  /** A user account whose role PATCH /api/v1/admin/users/{id} flips back and forth. */
  throwaway?: Account;
  /** A profile the profile and knowledge routes act on, a snippet of it, and snippets to delete (one per DELETE cell). */
  profile?: { id: string; slug: string };
  snippet?: string;
  deletable: string[];
  /** An estate document that stays (GET /api/v1/knowledge/doc/{id}). */
  estateDocument?: string;
  /** The estate document the row's ingest cell wrote, which its DELETE cell removes. */
  lastIngested?: string;
  /** Projects, tasks and agents: an admin-owned project, a task there, tasks to delete (one per DELETE cell), agents to stop, kill and chat with. */
  project?: string;
  task?: string;
  deletableTasks: string[];
  agents?: { stop: string; kill: string; chat: string };
  /** A tier-1 profile (public chat) and a conversation the admin reads. */
  publicProfile?: string;
  conversation?: string;
  /** Makes every body that must be unique unique. */
  seq: number;
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the world has no ${what}`);
  return value;
}

const account = (w: World, role: keyof World['accounts']) => need(w.accounts[role], `${role} account`);
const session = (w: World, role: keyof World['sessions']) => need(w.sessions[role], `${role} session`);

// ---------------------------------------------------------------------------------------------
// Principals (rows), in the order they run.

interface Principal {
  name: string;
  headers(w: World): Record<string, string>;
  /** The account the request acts as (id and its current key), for checks of successful cells. */
  self?(w: World): { id: string; apiKey: string; update?(key: string): void };
}

const keyed = (key: string) => ({ 'X-API-Key': key });
const accountSelf = (a: Account) => ({ id: a.id, apiKey: a.apiKey, update: (key: string) => { a.apiKey = key; } });

const principals = [
  { name: 'anonymous', headers: () => ({}) },
  { name: 'invalid key', headers: () => keyed('orch_not-a-real-key-00000000000000000000') },
  { name: 'readonly key', headers: (w) => keyed(account(w, 'readonly').apiKey), self: (w) => accountSelf(account(w, 'readonly')) },
  { name: 'user key', headers: (w) => keyed(account(w, 'user').apiKey), self: (w) => accountSelf(account(w, 'user')) },
  { name: 'bootstrap admin key', headers: (w) => keyed(w.adminKey), self: (w) => ({ id: BOOTSTRAP_ADMIN_ID, apiKey: w.adminKey }) },
  { name: 'api admin key', headers: (w) => keyed(account(w, 'admin').apiKey), self: (w) => accountSelf(account(w, 'admin')) },
  { name: 'runner key', headers: (w) => keyed(w.runnerKey), self: (w) => ({ id: RUNNER_ID, apiKey: w.runnerKey }) },
  // Sessions last: their self-rotation changes the key of the account the key rows above used.
  { name: 'readonly session', headers: (w) => browser(w.s, session(w, 'readonly')), self: (w) => accountSelf(account(w, 'readonly')) },
  { name: 'user session', headers: (w) => browser(w.s, session(w, 'user')), self: (w) => accountSelf(account(w, 'user')) },
  { name: 'admin session', headers: (w) => browser(w.s, session(w, 'admin')), self: (w) => accountSelf(account(w, 'admin')) },
] as const satisfies readonly Principal[];

type PrincipalName = (typeof principals)[number]['name'];

// ---------------------------------------------------------------------------------------------
// Routes (columns).

interface Route {
  name: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path(w: World): string;
  body?(w: World): unknown;
  /** Ends the caller's session: runs after the row's other cells. */
  endsSession?: boolean;
  /** Extra checks of a 2xx reply; throw to fail the cell. */
  check?(reply: Reply, w: World, who: Principal): Promise<void> | void;
}

/** After a rotation: the new key works as `userId`, the old one is refused. */
async function keySwapped(w: World, userId: string, oldKey: string, newKey: string): Promise<void> {
  assert.type(newKey, 'string');
  assert.is.not(newKey, oldKey, 'rotation returned the old key');
  const fresh = await http(`${w.s.orch}/api/v1/me`, { headers: keyed(newKey) });
  assert.is(fresh.status, 200, 'the new key works');
  assert.is(fresh.body.id, userId);
  const old = await http(`${w.s.orch}/api/v1/me`, { headers: keyed(oldKey) });
  assert.is(old.status, 401, 'the old key is refused');
  assert.is(old.body.message, 'invalid or inactive API key');
}

const routes = [
  { name: 'GET /api/v1/health', method: 'GET', path: () => '/api/v1/health', check: (r) => assert.is(r.body.status, 'ok') },
  { name: 'GET /api/v1/health/db', method: 'GET', path: () => '/api/v1/health/db', check: (r) => assert.is(r.body.status, 'ok') },
  {
    name: 'GET /api/v1/me', method: 'GET', path: () => '/api/v1/me',
    check: (r, w, who) => {
      const self = need(who.self?.(w), `identity of ${who.name}`);
      assert.is(r.body.id, self.id);
      assert.is(r.body.api_key, self.apiKey);
    },
  },
  {
    name: 'POST /api/v1/me/api-key/rotate', method: 'POST', path: () => '/api/v1/me/api-key/rotate',
    check: async (r, w, who) => {
      const self = need(who.self?.(w), `identity of ${who.name}`);
      assert.is(r.body.user_id, self.id);
      assert.is(r.headers.get('cache-control'), 'no-store');
      await keySwapped(w, self.id, self.apiKey, r.body.api_key);
      self.update?.(r.body.api_key);
    },
  },
  {
    name: 'POST /api/v1/admin/users/{id}/api-key/rotate', method: 'POST',
    path: (w) => `/api/v1/admin/users/${need(w.target, 'target').id}/api-key/rotate`,
    check: async (r, w) => {
      const target = need(w.target, 'target');
      assert.is(r.body.user_id, target.id);
      assert.is(r.headers.get('cache-control'), 'no-store');
      await keySwapped(w, target.id, target.apiKey, r.body.api_key);
      target.apiKey = r.body.api_key;
    },
  },
  {
    name: 'GET /api/v1/admin/users', method: 'GET', path: () => '/api/v1/admin/users',
    check: (r) => {
      assert.ok(Array.isArray(r.body.users));
      assert.ok(r.body.users.some((u: { id: string }) => u.id === BOOTSTRAP_ADMIN_ID));
    },
  },
  {
    name: 'POST /api/v1/admin/users', method: 'POST', path: () => '/api/v1/admin/users',
    body: (w) => {
      const name = `made-${++w.seq}-${randomUUID().slice(0, 8)}`;
      return { username: name, email: `${name}@example.test`, role: 'readonly' };
    },
    check: (r) => {
      assert.is(r.body.role, 'readonly');
      assert.type(r.body.api_key, 'string');
    },
  },
  {
    name: 'PATCH /api/v1/admin/users/{id}', method: 'PATCH',
    path: (w) => `/api/v1/admin/users/${need(w.throwaway, 'throwaway').id}`,
    // Flips the throwaway between user and readonly, so every successful call is a real change.
    body: (w) => ({ role: ++w.seq % 2 ? 'readonly' : 'user' }),
    check: (r, w) => assert.is(r.body.role, w.seq % 2 ? 'readonly' : 'user'),
  },
  {
    name: 'POST /auth/register', method: 'POST', path: () => '/auth/register',
    body: (w) => {
      const name = `reg-${++w.seq}-${randomUUID().slice(0, 8)}`;
      return { username: name, email: `${name}@example.test`, password: `pw-${randomUUID()}` };
    },
  },
  {
    // Not behind authentication: no principal is turned away, so every cell reaches the body
    // validation. The body is deliberately empty: a real login costs a password hash (~0.5 s a
    // cell), and the successful anonymous login is what every session of the setup already is.
    name: 'POST /auth/login', method: 'POST', path: () => '/auth/login', body: () => ({}),
  },
  {
    name: 'POST /auth/logout', method: 'POST', path: () => '/auth/logout', endsSession: true,
    check: async (_r, w, who) => {
      const headers = who.headers(w);
      if (!headers.cookie) return;
      const after = await http(`${w.s.orch}/api/v1/me`, { headers });
      assert.is(after.status, 401, 'the session still works after logout');
    },
  },
  { name: 'GET /api/v1/openapi.json', method: 'GET', path: () => '/api/v1/openapi.json', check: (r) => assert.is(r.body.openapi, '3.1.0') },
  { name: 'GET /api/v1/docs', method: 'GET', path: () => '/api/v1/docs', check: (r) => assert.match(r.text, /SwaggerUIBundle/) },
  { name: 'GET /metrics', method: 'GET', path: () => '/metrics', check: (r) => assert.match(r.text, /orchard_http_requests_total/) },
  {
    name: 'GET /api/me', method: 'GET', path: () => '/api/me',
    check: (r, w, who) => assert.is(r.body.id, need(who.self?.(w), `identity of ${who.name}`).id),
  },
  { name: 'GET /api/admin/users', method: 'GET', path: () => '/api/admin/users', check: (r) => assert.ok(Array.isArray(r.body.users)) },
  // The account console's mirrors: create, change, and both key rotations (the rotation routes
  // refuse and record every non-session caller themselves, as under /api/v1/).
  {
    name: 'POST /api/admin/users', method: 'POST', path: () => '/api/admin/users',
    body: (w) => {
      const name = `web-made-${++w.seq}-${randomUUID().slice(0, 8)}`;
      return { username: name, email: `${name}@example.test`, role: 'readonly' };
    },
    check: (r) => {
      assert.is(r.body.role, 'readonly');
      assert.type(r.body.api_key, 'string');
      assert.is(r.headers.get('cache-control'), 'no-store');
    },
  },
  {
    name: 'PATCH /api/admin/users/{id}', method: 'PATCH',
    path: (w) => `/api/admin/users/${need(w.throwaway, 'throwaway').id}`,
    body: (w) => ({ role: ++w.seq % 2 ? 'readonly' : 'user' }),
    check: (r, w) => assert.is(r.body.role, w.seq % 2 ? 'readonly' : 'user'),
  },
  {
    name: 'POST /api/me/api-key/rotate', method: 'POST', path: () => '/api/me/api-key/rotate',
    check: async (r, w, who) => {
      const self = need(who.self?.(w), `identity of ${who.name}`);
      assert.is(r.body.user_id, self.id);
      assert.is(r.headers.get('cache-control'), 'no-store');
      await keySwapped(w, self.id, self.apiKey, r.body.api_key);
      self.update?.(r.body.api_key);
    },
  },
  {
    name: 'POST /api/admin/users/{id}/api-key/rotate', method: 'POST',
    path: (w) => `/api/admin/users/${need(w.target, 'target').id}/api-key/rotate`,
    check: async (r, w) => {
      const target = need(w.target, 'target');
      assert.is(r.body.user_id, target.id);
      assert.is(r.headers.get('cache-control'), 'no-store');
      await keySwapped(w, target.id, target.apiKey, r.body.api_key);
      target.apiKey = r.body.api_key;
    },
  },
  { name: 'GET /api/admin/{unknown}', method: 'GET', path: () => '/api/admin/no-such-route' },
  { name: 'GET /api/templates', method: 'GET', path: () => '/api/templates', check: (r) => assert.is(r.body.length, 5) },
  { name: 'GET /api/templates/{unknown}', method: 'GET', path: () => '/api/templates/no-such-route' },
  { name: 'GET /api/templates/{slug}', method: 'GET', path: () => '/api/templates/hr-faq', check: (r) => assert.is(r.body.slug, 'hr-faq') },
  {
    name: 'POST /api/templates/{slug}/instantiate', method: 'POST', path: () => '/api/templates/hr-faq/instantiate',
    body: (w) => ({ slug: `web-tmpl-${++w.seq}`, name: 'From the web UI' }), check: (r) => assert.is(r.body.seeded_memory_count, 5),
  },
  // Profiles (admin, the route's own check), bot knowledge (reads: any key; writes: admin), templates.
  { name: 'GET /api/v1/agent-chat/profiles', method: 'GET', path: () => '/api/v1/agent-chat/profiles', check: (r) => assert.ok(Array.isArray(r.body)) },
  {
    name: 'POST /api/v1/agent-chat/profiles', method: 'POST', path: () => '/api/v1/agent-chat/profiles',
    body: (w) => ({ slug: `matrix-${++w.seq}`, name: 'Made by the matrix' }), check: (r) => assert.match(r.body.slug, /^matrix-/),
  },
  { name: 'GET /api/v1/agent-chat/profiles/{slug}', method: 'GET', path: (w) => `/api/v1/agent-chat/profiles/${need(w.profile, 'profile').slug}`, check: (r, w) => assert.is(r.body.id, w.profile!.id) },
  {
    name: 'PUT /api/v1/agent-chat/profiles/{slug}', method: 'PUT', path: (w) => `/api/v1/agent-chat/profiles/${need(w.profile, 'profile').slug}`,
    body: (w) => ({ max_tokens: 1000 + ++w.seq }), check: (r, w) => assert.is(r.body.max_tokens, 1000 + w.seq),
  },
  {
    name: 'GET /api/v1/agent-chat/profiles/{slug}/history', method: 'GET', path: (w) => `/api/v1/agent-chat/profiles/${need(w.profile, 'profile').slug}/history`,
    check: (r) => assert.is(r.body[0].event_type, 'ProfileCreated'),
  },
  { name: 'GET /api/v1/bots/{profile_id}/knowledge', method: 'GET', path: (w) => `/api/v1/bots/${need(w.profile, 'profile').id}/knowledge`, check: (r) => assert.ok(r.body.length > 0) },
  // The chat-service connector (this server has no ORCH_INTEGRATION_ENCRYPTION_KEY: an admin meets 503 after the 401/403).
  { name: 'GET /api/v1/agents/{profile_id}/chatsvc', method: 'GET', path: (w) => `/api/v1/agents/${need(w.profile, 'profile').id}/chatsvc` },
  { name: 'GET /api/admin/agents/{profile_id}/chatsvc', method: 'GET', path: (w) => `/api/admin/agents/${need(w.profile, 'profile').id}/chatsvc` },
  {
    name: 'POST /api/v1/bots/{profile_id}/knowledge', method: 'POST', path: (w) => `/api/v1/bots/${need(w.profile, 'profile').id}/knowledge`,
    body: () => ({ title: 'Matrix', content: 'Written by the matrix.' }), check: (r, w) => assert.is(r.body.profile_id, w.profile!.id),
  },
  {
    name: 'GET /api/v1/bots/{profile_id}/knowledge/search', method: 'GET', path: (w) => `/api/v1/bots/${need(w.profile, 'profile').id}/knowledge/search?q=matrix`,
    check: (r) => assert.ok(r.body.length > 0),
  },
  {
    name: 'GET /api/v1/bots/{profile_id}/knowledge/{id}', method: 'GET', path: (w) => `/api/v1/bots/${need(w.profile, 'profile').id}/knowledge/${need(w.snippet, 'snippet')}`,
    check: (r, w) => assert.is(r.body.id, w.snippet),
  },
  {
    name: 'PATCH /api/v1/bots/{profile_id}/knowledge/{id}', method: 'PATCH', path: (w) => `/api/v1/bots/${need(w.profile, 'profile').id}/knowledge/${need(w.snippet, 'snippet')}`,
    body: (w) => ({ title: `Matrix ${++w.seq}` }), check: (r, w) => assert.is(r.body.title, `Matrix ${w.seq}`),
  },
  {
    name: 'DELETE /api/v1/bots/{profile_id}/knowledge/{id}', method: 'DELETE',
    path: (w) => `/api/v1/bots/${need(w.profile, 'profile').id}/knowledge/${need(w.deletable.pop(), 'snippet to delete')}`,
  },
  // The web console's mirrors of the profile, bot knowledge and private-chat routes: browser sessions only, then the routes' own checks.
  { name: 'GET /api/agent-chat/profiles', method: 'GET', path: () => '/api/agent-chat/profiles', check: (r) => assert.ok(Array.isArray(r.body)) },
  {
    name: 'POST /api/agent-chat/profiles', method: 'POST', path: () => '/api/agent-chat/profiles',
    body: (w) => ({ slug: `web-matrix-${++w.seq}`, name: 'Made on the web by the matrix' }), check: (r) => assert.match(r.body.slug, /^web-matrix-/),
  },
  { name: 'GET /api/agent-chat/profiles/{slug}', method: 'GET', path: (w) => `/api/agent-chat/profiles/${need(w.profile, 'profile').slug}`, check: (r, w) => assert.is(r.body.id, w.profile!.id) },
  {
    name: 'PUT /api/agent-chat/profiles/{slug}', method: 'PUT', path: (w) => `/api/agent-chat/profiles/${need(w.profile, 'profile').slug}`,
    body: (w) => ({ max_tokens: 1000 + ++w.seq }), check: (r, w) => assert.is(r.body.max_tokens, 1000 + w.seq),
  },
  {
    name: 'GET /api/agent-chat/profiles/{slug}/history', method: 'GET', path: (w) => `/api/agent-chat/profiles/${need(w.profile, 'profile').slug}/history`,
    check: (r) => assert.is(r.body[0].event_type, 'ProfileCreated'),
  },
  { name: 'GET /api/bots/{profile_id}/knowledge', method: 'GET', path: (w) => `/api/bots/${need(w.profile, 'profile').id}/knowledge`, check: (r) => assert.ok(r.body.length > 0) },
  {
    name: 'POST /api/bots/{profile_id}/knowledge', method: 'POST', path: (w) => `/api/bots/${need(w.profile, 'profile').id}/knowledge`,
    body: () => ({ title: 'Matrix on the web', content: 'Written by the matrix.' }), check: (r, w) => assert.is(r.body.profile_id, w.profile!.id),
  },
  {
    name: 'GET /api/bots/{profile_id}/knowledge/search', method: 'GET', path: (w) => `/api/bots/${need(w.profile, 'profile').id}/knowledge/search?q=matrix`,
    check: (r) => assert.ok(r.body.length > 0),
  },
  {
    name: 'GET /api/bots/{profile_id}/knowledge/{id}', method: 'GET', path: (w) => `/api/bots/${need(w.profile, 'profile').id}/knowledge/${need(w.snippet, 'snippet')}`,
    check: (r, w) => assert.is(r.body.id, w.snippet),
  },
  {
    name: 'PATCH /api/bots/{profile_id}/knowledge/{id}', method: 'PATCH', path: (w) => `/api/bots/${need(w.profile, 'profile').id}/knowledge/${need(w.snippet, 'snippet')}`,
    body: (w) => ({ title: `Matrix ${++w.seq}` }), check: (r, w) => assert.is(r.body.title, `Matrix ${w.seq}`),
  },
  {
    name: 'DELETE /api/bots/{profile_id}/knowledge/{id}', method: 'DELETE',
    path: (w) => `/api/bots/${need(w.profile, 'profile').id}/knowledge/${need(w.deletable.pop(), 'snippet to delete')}`,
  },
  {
    name: 'POST /api/agent-chat/chat/{slug}', method: 'POST', path: (w) => `/api/agent-chat/chat/${need(w.profile, 'profile').slug}`,
    body: () => ({ message: 'Hello from the matrix on the web' }), check: (r) => assert.is(r.body.visitor_token, undefined),
  },
  { name: 'GET /api/v1/templates', method: 'GET', path: () => '/api/v1/templates', check: (r) => assert.is(r.body.length, 5) },
  { name: 'GET /api/v1/templates/{slug}', method: 'GET', path: () => '/api/v1/templates/sales-sdr', check: (r) => assert.is(r.body.slug, 'sales-sdr') },
  {
    name: 'POST /api/v1/templates/{slug}/instantiate', method: 'POST', path: () => '/api/v1/templates/sales-sdr/instantiate',
    body: (w) => ({ slug: `tmpl-${++w.seq}`, name: 'From a template', seed_memories: false }), check: (r) => assert.is(r.body.seeded_memory_count, 0),
  },
  // Estate knowledge: reads need a key, writes role user. The row's ingest writes the document
  // its DELETE removes.
  {
    name: 'POST /api/v1/knowledge/ingest', method: 'POST', path: () => '/api/v1/knowledge/ingest',
    body: (w) => ({ documents: [{ source_repo: 'matrix', path: `cells/${++w.seq}.md`, content: 'a matrix cell' }] }),
    check: (r, w) => {
      assert.is(r.body.status, 'ok');
      w.lastIngested = r.body.results[0].document_id;
    },
  },
  {
    name: 'POST /api/v1/knowledge/vault', method: 'POST', path: () => '/api/v1/knowledge/vault',
    body: (w) => ({ documents: [{ path: `cells/${++w.seq}.md`, content: 'a vault cell' }] }),
    check: (r) => assert.is(r.body.status, 'ok'),
  },
  {
    name: 'GET /api/v1/knowledge/search', method: 'GET', path: () => '/api/v1/knowledge/search?q=matrix',
    check: (r) => assert.ok(r.body.total_matches >= 1),
  },
  { name: 'GET /api/v1/knowledge/corpus', method: 'GET', path: () => '/api/v1/knowledge/corpus', check: (r) => assert.ok(r.body.documents >= 1) },
  { name: 'GET /api/v1/knowledge/corpus/paths', method: 'GET', path: () => '/api/v1/knowledge/corpus/paths', check: (r) => assert.ok(Array.isArray(r.body.paths)) },
  { name: 'GET /api/v1/knowledge/docs', method: 'GET', path: () => '/api/v1/knowledge/docs', check: (r) => assert.ok(Array.isArray(r.body.documents)) },
  {
    name: 'GET /api/v1/knowledge/doc/{id}', method: 'GET', path: (w) => `/api/v1/knowledge/doc/${need(w.estateDocument, 'estate document')}`,
    check: (r, w) => assert.is(r.body.document.id, w.estateDocument),
  },
  {
    name: 'DELETE /api/v1/knowledge/doc/{id}', method: 'DELETE',
    // Refusals come before the lookup, so a row without its own document uses any id.
    path: (w) => `/api/v1/knowledge/doc/${w.lastIngested ?? '00000000-0000-4000-8000-0000000000ff'}`,
    check: (_r, w) => { w.lastIngested = undefined; },
  },
  {
    name: 'GET /api/v1/knowledge/ingest/status', method: 'GET', path: () => '/api/v1/knowledge/ingest/status',
    check: (r) => assert.ok(Array.isArray(r.body.runs)),
  },
  // Their web-UI mirrors (browser sessions, then the same role checks); the mirror's ingest writes the document its DELETE removes.
  {
    name: 'POST /api/knowledge/ingest', method: 'POST', path: () => '/api/knowledge/ingest',
    body: (w) => ({ documents: [{ source_repo: 'matrix', path: `web/${++w.seq}.md`, content: 'a matrix cell on the web' }] }),
    check: (r, w) => {
      assert.is(r.body.status, 'ok');
      w.lastIngested = r.body.results[0].document_id;
    },
  },
  {
    name: 'POST /api/knowledge/vault', method: 'POST', path: () => '/api/knowledge/vault',
    body: (w) => ({ documents: [{ path: `web/${++w.seq}.md`, content: 'a vault cell on the web' }] }), check: (r) => assert.is(r.body.status, 'ok'),
  },
  { name: 'GET /api/knowledge/search', method: 'GET', path: () => '/api/knowledge/search?q=matrix', check: (r) => assert.ok(r.body.total_matches >= 1) },
  { name: 'GET /api/knowledge/corpus', method: 'GET', path: () => '/api/knowledge/corpus', check: (r) => assert.ok(r.body.documents >= 1) },
  { name: 'GET /api/knowledge/corpus/paths', method: 'GET', path: () => '/api/knowledge/corpus/paths', check: (r) => assert.ok(Array.isArray(r.body.paths)) },
  { name: 'GET /api/knowledge/docs', method: 'GET', path: () => '/api/knowledge/docs', check: (r) => assert.ok(Array.isArray(r.body.documents)) },
  {
    name: 'GET /api/knowledge/doc/{id}', method: 'GET', path: (w) => `/api/knowledge/doc/${need(w.estateDocument, 'estate document')}`,
    check: (r, w) => assert.is(r.body.document.id, w.estateDocument),
  },
  {
    name: 'DELETE /api/knowledge/doc/{id}', method: 'DELETE',
    path: (w) => `/api/knowledge/doc/${w.lastIngested ?? '00000000-0000-4000-8000-0000000000ff'}`,
    check: (_r, w) => { w.lastIngested = undefined; },
  },
  { name: 'GET /api/knowledge/ingest/status', method: 'GET', path: () => '/api/knowledge/ingest/status', check: (r) => assert.ok(Array.isArray(r.body.runs)) },
  { name: 'GET /api/v1/admin/events', method: 'GET', path: () => '/api/v1/admin/events?limit=5', check: (r) => assert.is(r.body.events.length, 5) },
  { name: 'GET /api/v1/admin/events/proof', method: 'GET', path: () => '/api/v1/admin/events/proof?position=1/1', check: (r) => assert.type(r.body.ok, 'boolean') },
  {
    name: 'GET /api/v1/admin/streams/{stream}', method: 'GET', path: () => `/api/v1/admin/streams/user-${BOOTSTRAP_ADMIN_ID}`,
    check: (r) => assert.is(r.body.state.user_id, BOOTSTRAP_ADMIN_ID),
  },
  // The sockets answer a plain GET with 426 whoever asks (the upgrades: tests/orchestration/log/ws.test.ts).
  { name: 'GET /ws', method: 'GET', path: () => '/ws' },
  { name: 'GET /ws/live', method: 'GET', path: () => '/ws/live' },
  // Projects, tasks, agents (role user or higher to write; authority over a task or an agent; the runner's own routes), MCP servers, cockpit, commander link.
  { name: 'POST /api/v1/projects', method: 'POST', path: () => '/api/v1/projects', body: (w) => ({ name: `made-${++w.seq}` }), check: (r, w, who) => assert.is(r.body.owner_id, need(who.self?.(w), 'identity').id) },
  { name: 'GET /api/v1/projects', method: 'GET', path: () => '/api/v1/projects', check: (r) => assert.ok(r.body.total >= 1) },
  { name: 'GET /api/v1/projects/{id}', method: 'GET', path: (w) => `/api/v1/projects/${need(w.project, 'project')}`, check: (r, w) => assert.is(r.body.id, w.project) },
  { name: 'PATCH /api/v1/projects/{id}', method: 'PATCH', path: (w) => `/api/v1/projects/${need(w.project, 'project')}`, body: (w) => ({ name: `matrix-${++w.seq}` }), check: (r, w) => assert.is(r.body.name, `matrix-${w.seq}`) },
  {
    name: 'POST /api/v1/tasks', method: 'POST', path: () => '/api/v1/tasks', body: (w) => ({ project_id: w.project, title: `t${++w.seq}`, priority: 'low' }),
    check: (r, w, who) => assert.is(r.body.created_by_user, need(who.self?.(w), 'identity').id),
  },
  { name: 'GET /api/v1/tasks', method: 'GET', path: () => '/api/v1/tasks', check: (r) => assert.ok(r.body.total >= 1) },
  { name: 'GET /api/v1/tasks/{id}', method: 'GET', path: (w) => `/api/v1/tasks/${need(w.task, 'task')}`, check: (r, w) => assert.is(r.body.id, w.task) },
  { name: 'PATCH /api/v1/tasks/{id}', method: 'PATCH', path: (w) => `/api/v1/tasks/${need(w.task, 'task')}`, body: (w) => ({ title: `m${++w.seq}` }), check: (r, w) => assert.is(r.body.title, `m${w.seq}`) },
  { name: 'DELETE /api/v1/tasks/{id}', method: 'DELETE', path: (w) => `/api/v1/tasks/${need(w.deletableTasks.pop(), 'task to delete')}` },
  {
    name: 'POST /api/v1/tasks/{id}/assign', method: 'POST', path: (w) => `/api/v1/tasks/${need(w.task, 'task')}/assign`, body: (w) => ({ agent_id: w.agents?.chat }),
    check: (r, w) => assert.is(r.body.assigned_agent_id, w.agents!.chat),
  },
  {
    name: 'POST /api/v1/spawn', method: 'POST', path: () => '/api/v1/spawn', body: (w) => ({ name: `m-${++w.seq}`, role: 'tester', project_id: w.project }),
    check: (r) => assert.is(r.body.status, 'queued'),
  },
  { name: 'GET /api/v1/agents', method: 'GET', path: () => '/api/v1/agents', check: (r) => assert.ok(r.body.total >= 3) },
  { name: 'GET /api/v1/agents/{id}', method: 'GET', path: (w) => `/api/v1/agents/${need(w.agents, 'agents').chat}`, check: (r, w) => assert.is(r.body.id, w.agents!.chat) },
  { name: 'POST /api/v1/agents/{id}/stop', method: 'POST', path: (w) => `/api/v1/agents/${need(w.agents, 'agents').stop}/stop`, check: (r) => assert.is(r.body.status, 'stopped') },
  { name: 'POST /api/v1/agents/{id}/kill', method: 'POST', path: (w) => `/api/v1/agents/${need(w.agents, 'agents').kill}/kill`, check: (r) => assert.is(r.body.status, 'killed') },
  {
    name: 'POST /api/v1/agents/{id}/credential/rotate', method: 'POST', path: (w) => `/api/v1/agents/${need(w.agents, 'agents').chat}/credential/rotate`,
    check: (r, w) => assert.is(r.body.agent_id, w.agents!.chat),
  },
  { name: 'POST /api/v1/agents/{id}/chat', method: 'POST', path: (w) => `/api/v1/agents/${need(w.agents, 'agents').chat}/chat`, body: () => ({ message: 'Hello' }), check: (r) => assert.type(r.body.message, 'string') },
  { name: 'GET /api/v1/agents/mcp-servers', method: 'GET', path: () => '/api/v1/agents/mcp-servers', check: (r) => assert.ok(Array.isArray(r.body)) },
  {
    name: 'PUT /api/v1/agents/mcp-servers', method: 'PUT', path: () => '/api/v1/agents/mcp-servers', body: (w) => [{ name: `m${++w.seq}`, command: 'mcp', env: { K: 'v' } }],
    check: (r) => assert.equal(r.body[0].env, { K: '[redacted]' }),
  },
  { name: 'POST /api/v1/runner/recover', method: 'POST', path: () => '/api/v1/runner/recover', body: () => ({ runner_instance: 'matrix' }), check: (r) => assert.ok(Array.isArray(r.body.failed)) },
  { name: 'POST /api/v1/runner/claim', method: 'POST', path: () => '/api/v1/runner/claim', body: () => ({ runner_instance: 'matrix' }), check: (r) => assert.ok('agent' in r.body) },
  {
    name: 'POST /api/v1/runner/agents/{id}/report', method: 'POST', path: (w) => `/api/v1/runner/agents/${need(w.agents, 'agents').chat}/report`,
    body: () => ({ event: 'cost', cost_usd: 0 }), check: (r) => assert.type(r.body.status, 'string'),
  },
  { name: 'GET /api/v1/cockpit/summary', method: 'GET', path: () => '/api/v1/cockpit/summary', check: (r) => assert.is(r.body.cost.window, '30d') },
  // The web console's mirrors of projects, tasks and agents (browser sessions only; the same handlers).
  { name: 'POST /api/projects', method: 'POST', path: () => '/api/projects', body: (w) => ({ name: `web-${++w.seq}` }), check: (r, w, who) => assert.is(r.body.owner_id, need(who.self?.(w), 'identity').id) },
  { name: 'GET /api/projects', method: 'GET', path: () => '/api/projects', check: (r) => assert.ok(r.body.total >= 1) },
  { name: 'GET /api/projects/{id}', method: 'GET', path: (w) => `/api/projects/${need(w.project, 'project')}`, check: (r, w) => assert.is(r.body.id, w.project) },
  { name: 'PATCH /api/projects/{id}', method: 'PATCH', path: (w) => `/api/projects/${need(w.project, 'project')}`, body: (w) => ({ name: `web-${++w.seq}` }), check: (r, w) => assert.is(r.body.name, `web-${w.seq}`) },
  {
    name: 'POST /api/tasks', method: 'POST', path: () => '/api/tasks', body: (w) => ({ project_id: w.project, title: `web${++w.seq}`, priority: 'low' }),
    check: (r, w, who) => assert.is(r.body.created_by_user, need(who.self?.(w), 'identity').id),
  },
  { name: 'GET /api/tasks', method: 'GET', path: () => '/api/tasks', check: (r) => assert.ok(r.body.total >= 1) },
  { name: 'GET /api/tasks/{id}', method: 'GET', path: (w) => `/api/tasks/${need(w.task, 'task')}`, check: (r, w) => assert.is(r.body.id, w.task) },
  { name: 'PATCH /api/tasks/{id}', method: 'PATCH', path: (w) => `/api/tasks/${need(w.task, 'task')}`, body: (w) => ({ title: `web${++w.seq}` }), check: (r, w) => assert.is(r.body.title, `web${w.seq}`) },
  {
    name: 'POST /api/tasks/{id}/assign', method: 'POST', path: (w) => `/api/tasks/${need(w.task, 'task')}/assign`, body: (w) => ({ agent_id: w.agents?.chat }),
    check: (r, w) => assert.is(r.body.assigned_agent_id, w.agents!.chat),
  },
  {
    name: 'POST /api/spawn', method: 'POST', path: () => '/api/spawn', body: (w) => ({ name: `web-${++w.seq}`, role: 'tester', project_id: w.project }),
    check: (r) => assert.is(r.body.status, 'queued'),
  },
  { name: 'GET /api/agents', method: 'GET', path: () => '/api/agents', check: (r) => assert.ok(r.body.total >= 3) },
  { name: 'GET /api/agents/{id}', method: 'GET', path: (w) => `/api/agents/${need(w.agents, 'agents').chat}`, check: (r, w) => assert.is(r.body.id, w.agents!.chat) },
  // Repeating a stop answers the agent as it is (the v1 cells stopped and killed these agents first).
  { name: 'POST /api/agents/{id}/stop', method: 'POST', path: (w) => `/api/agents/${need(w.agents, 'agents').stop}/stop`, check: (r) => assert.is(r.body.status, 'stopped') },
  { name: 'POST /api/agents/{id}/kill', method: 'POST', path: (w) => `/api/agents/${need(w.agents, 'agents').kill}/kill`, check: (r) => assert.is(r.body.status, 'killed') },
  { name: 'GET /api/cockpit/summary', method: 'GET', path: () => '/api/cockpit/summary', check: (r) => assert.is(r.body.cost.window, '30d') },
  { name: 'GET /api/v1/cockpit/cost/daily', method: 'GET', path: () => '/api/v1/cockpit/cost/daily', check: (r) => assert.is(r.body.series.length, 30) },
  { name: 'GET /api/cockpit/cost/daily', method: 'GET', path: () => '/api/cockpit/cost/daily', check: (r) => assert.is(r.body.series.length, 30) },
  // Public: a browser session reads as signed in, a key as not (it is not a browser session).
  { name: 'GET /auth/session', method: 'GET', path: () => '/auth/session', check: (r, w, who) => assert.is(r.body.authenticated, !!who.headers(w).cookie) },
  { name: 'GET /api/v1/commander-link/{path}', method: 'GET', path: () => '/api/v1/commander-link/status' },
  // Managed updates (admin). The matrix server has no manifest host and no sidecar token.
  { name: 'GET /api/v1/admin/updates/status', method: 'GET', path: () => '/api/v1/admin/updates/status', check: (r) => assert.is(r.body.checks_enabled, false) },
  { name: 'POST /api/v1/admin/updates/check', method: 'POST', path: () => '/api/v1/admin/updates/check' },
  { name: 'POST /api/v1/admin/updates/apply', method: 'POST', path: () => '/api/v1/admin/updates/apply', body: () => ({ target_version: '9.9.9' }) },
  { name: 'GET /api/v1/admin/updates/applies', method: 'GET', path: () => '/api/v1/admin/updates/applies', check: (r) => assert.ok(Array.isArray(r.body.applies)) },
  { name: 'GET /api/v1/admin/updates/apply/{apply_id}', method: 'GET', path: () => `/api/v1/admin/updates/apply/${randomUUID()}` },
  { name: 'GET /api/admin/updates/status', method: 'GET', path: () => '/api/admin/updates/status', check: (r) => assert.is(r.body.checks_enabled, false) },
  // Chat: the public route takes anyone; private chat any key or session; the personal
  // assistant's surfaces browser sessions; usage any key; audit and conversations the admin.
  {
    name: 'POST /api/v1/public/agents/chat/{slug}', method: 'POST', path: (w) => `/api/v1/public/agents/chat/${need(w.publicProfile, 'public profile')}`,
    body: () => ({ message: 'Hello from the matrix' }), check: (r) => assert.type(r.body.visitor_token, 'string'),
  },
  {
    name: 'POST /api/v1/agent-chat/chat/{slug}', method: 'POST', path: (w) => `/api/v1/agent-chat/chat/${need(w.profile, 'profile').slug}`,
    body: () => ({ message: 'Hello from the matrix' }), check: (r) => assert.is(r.body.visitor_token, undefined),
  },
  { name: 'POST /api/assistant-user/chat', method: 'POST', path: () => '/api/assistant-user/chat', body: () => ({ message: 'Plan my day' }), check: (r) => assert.type(r.body.conversation_id, 'string') },
  { name: 'GET /api/assistant-user/conversations', method: 'GET', path: () => '/api/assistant-user/conversations', check: (r) => assert.ok(r.body.length >= 1) },
  { name: 'GET /api/v1/agent-chat/usage/summary', method: 'GET', path: () => '/api/v1/agent-chat/usage/summary', check: (r) => assert.ok(r.body.length >= 2) },
  { name: 'GET /api/v1/agent-chat/audit', method: 'GET', path: () => '/api/v1/agent-chat/audit', check: (r) => assert.ok(Array.isArray(r.body)) },
  { name: 'GET /api/agent-chat/audit', method: 'GET', path: () => '/api/agent-chat/audit', check: (r) => assert.ok(Array.isArray(r.body)) },
  { name: 'GET /api/agent-chat/usage/summary', method: 'GET', path: () => '/api/agent-chat/usage/summary', check: (r) => assert.ok(r.body.length >= 2) },
  { name: 'GET /api/v1/agent-chat/conversations', method: 'GET', path: () => '/api/v1/agent-chat/conversations', check: (r) => assert.ok(r.body.length >= 1) },
  {
    name: 'GET /api/v1/agent-chat/conversations/{id}/messages', method: 'GET', path: (w) => `/api/v1/agent-chat/conversations/${need(w.conversation, 'conversation')}/messages`,
    check: (r) => assert.is(r.body.length, 2),
  },
  { name: 'GET /api/agent-chat/conversations', method: 'GET', path: () => '/api/agent-chat/conversations', check: (r) => assert.ok(r.body.length >= 1) },
  {
    name: 'GET /api/agent-chat/conversations/{id}/messages', method: 'GET', path: (w) => `/api/agent-chat/conversations/${need(w.conversation, 'conversation')}/messages`,
    check: (r) => assert.is(r.body.length, 2),
  },
] as const satisfies readonly Route[];

type RouteName = (typeof routes)[number]['name'];

// ---------------------------------------------------------------------------------------------
// Expected cells.

/** A status, or a status with the body's `error` code and (where it is fixed) its `message`. */
type Cell = number | { status: number; error: string; message?: string };

const OK = 200;
const CREATED = 201;
const NO_CONTENT = 204;
const MISSING: Cell = { status: 401, error: 'unauthorized', message: 'missing X-API-Key header' };
const INVALID: Cell = { status: 401, error: 'unauthorized', message: 'invalid or inactive API key' };
const ADMIN_ONLY: Cell = { status: 403, error: 'forbidden', message: 'admin role required' };
const LOGIN_BODY_INVALID: Cell = { status: 400, error: 'validation_failed' };
const NO_ROUTE: Cell = { status: 404, error: 'not_found', message: 'no such route' };
const ROTATE_NEEDS_SESSION: Cell = {
  status: 403, error: 'api_key_rotation_requires_interactive_session',
  message: 'API keys can only be rotated from an interactive session, not with a bearer credential',
};
const ROTATE_NEEDS_ADMIN: Cell = { status: 403, error: 'api_key_rotation_requires_admin', message: 'rotating another account\'s key requires the admin role' };
const SESSION_ONLY: Cell = { status: 403, error: 'session_required' };
const NO_TEMPLATE: Cell = { status: 404, error: 'template_not_found' };
const REGISTRATION_CLOSED: Cell = { status: 409, error: 'already_registered', message: 'registration is closed: a local account already exists' };
const READONLY: Cell = { status: 403, error: 'insufficient_role', message: 'this action needs role user or higher' };
const NOT_AN_UPGRADE: Cell = { status: 426, error: 'upgrade_required' };
const NOT_OWNER: Cell = { status: 403, error: 'project_owner_required' };
const NO_TASK_AUTHORITY: Cell = { status: 403, error: 'task_authority_required' };
const NO_AGENT_AUTHORITY: Cell = { status: 403, error: 'agent_authority_required' };
const RUNNER_ONLY: Cell = { status: 403, error: 'runner_only', message: 'this route serves the runner only' };
const SIGNATURE: Cell = { status: 401, error: 'signature_required' };
const CHECKS_OFF: Cell = { status: 409, error: 'update_checks_off' };
const APPLY_NEEDS_SESSION: Cell = { status: 403, error: 'update_apply_requires_interactive_session' };
const NOT_HEAD: Cell = { status: 409, error: 'target_not_channel_head' };
const NO_APPLY: Cell = { status: 404, error: 'apply_not_found' };
const KEY_MISSING: Cell = { status: 503, error: 'integration_key_missing' };

// Shared shapes of rows.
const nonAdminKey = {
  'GET /api/v1/health': OK,
  'GET /api/v1/health/db': OK,
  'GET /api/v1/me': OK,
  'POST /api/v1/me/api-key/rotate': ROTATE_NEEDS_SESSION,
  'POST /api/v1/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
  'GET /api/v1/admin/users': ADMIN_ONLY,
  'POST /api/v1/admin/users': ADMIN_ONLY,
  'PATCH /api/v1/admin/users/{id}': ADMIN_ONLY,
  'POST /auth/register': ADMIN_ONLY,
  'POST /auth/login': LOGIN_BODY_INVALID,
  'POST /auth/logout': NO_CONTENT,
  'GET /api/v1/openapi.json': OK,
  'GET /api/v1/docs': OK,
  'GET /metrics': OK,
  // The web UI's mirrors serve browser sessions; require_admin comes first under /api/admin/*.
  'GET /api/me': SESSION_ONLY,
  'GET /api/admin/users': ADMIN_ONLY,
  'POST /api/admin/users': ADMIN_ONLY,
  'PATCH /api/admin/users/{id}': ADMIN_ONLY,
  'POST /api/me/api-key/rotate': ROTATE_NEEDS_SESSION,
  'POST /api/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
  'GET /api/admin/{unknown}': ADMIN_ONLY,
  'GET /api/templates': ADMIN_ONLY,
  'GET /api/templates/{unknown}': ADMIN_ONLY,
  'GET /api/templates/{slug}': ADMIN_ONLY,
  'POST /api/templates/{slug}/instantiate': ADMIN_ONLY,
  'GET /api/v1/agents/{profile_id}/chatsvc': ADMIN_ONLY,
  'GET /api/admin/agents/{profile_id}/chatsvc': ADMIN_ONLY,
  'GET /api/v1/agent-chat/profiles': ADMIN_ONLY,
  'POST /api/v1/agent-chat/profiles': ADMIN_ONLY,
  'GET /api/v1/agent-chat/profiles/{slug}': ADMIN_ONLY,
  'PUT /api/v1/agent-chat/profiles/{slug}': ADMIN_ONLY,
  'GET /api/v1/agent-chat/profiles/{slug}/history': ADMIN_ONLY,
  // Knowledge reads take any key; writes are the admin's.
  'GET /api/v1/bots/{profile_id}/knowledge': OK,
  'POST /api/v1/bots/{profile_id}/knowledge': ADMIN_ONLY,
  'GET /api/v1/bots/{profile_id}/knowledge/search': OK,
  'GET /api/v1/bots/{profile_id}/knowledge/{id}': OK,
  'PATCH /api/v1/bots/{profile_id}/knowledge/{id}': ADMIN_ONLY,
  'DELETE /api/v1/bots/{profile_id}/knowledge/{id}': ADMIN_ONLY,
  // The web console's mirrors serve browser sessions only.
  'GET /api/agent-chat/profiles': SESSION_ONLY,
  'POST /api/agent-chat/profiles': SESSION_ONLY,
  'GET /api/agent-chat/profiles/{slug}': SESSION_ONLY,
  'PUT /api/agent-chat/profiles/{slug}': SESSION_ONLY,
  'GET /api/agent-chat/profiles/{slug}/history': SESSION_ONLY,
  'GET /api/bots/{profile_id}/knowledge': SESSION_ONLY,
  'POST /api/bots/{profile_id}/knowledge': SESSION_ONLY,
  'GET /api/bots/{profile_id}/knowledge/search': SESSION_ONLY,
  'GET /api/bots/{profile_id}/knowledge/{id}': SESSION_ONLY,
  'PATCH /api/bots/{profile_id}/knowledge/{id}': SESSION_ONLY,
  'DELETE /api/bots/{profile_id}/knowledge/{id}': SESSION_ONLY,
  'POST /api/agent-chat/chat/{slug}': SESSION_ONLY,
  'GET /api/v1/templates': OK,
  'GET /api/v1/templates/{slug}': OK,
  'POST /api/v1/templates/{slug}/instantiate': ADMIN_ONLY,
  'POST /api/v1/knowledge/ingest': OK,
  'POST /api/v1/knowledge/vault': OK,
  'GET /api/v1/knowledge/search': OK,
  'GET /api/v1/knowledge/corpus': OK,
  'GET /api/v1/knowledge/corpus/paths': OK,
  'GET /api/v1/knowledge/docs': OK,
  'GET /api/v1/knowledge/doc/{id}': OK,
  'DELETE /api/v1/knowledge/doc/{id}': NO_CONTENT,
  'GET /api/v1/knowledge/ingest/status': OK,
  'GET /api/v1/admin/events': ADMIN_ONLY,
  'GET /api/v1/admin/events/proof': ADMIN_ONLY,
  'GET /api/v1/admin/streams/{stream}': ADMIN_ONLY,
  'GET /ws': NOT_AN_UPGRADE,
  'GET /ws/live': NOT_AN_UPGRADE,
  'POST /api/v1/projects': CREATED,
  'GET /api/v1/projects': OK,
  'GET /api/v1/projects/{id}': OK,
  'PATCH /api/v1/projects/{id}': NOT_OWNER,
  'POST /api/v1/tasks': CREATED,
  'GET /api/v1/tasks': OK,
  'GET /api/v1/tasks/{id}': OK,
  'PATCH /api/v1/tasks/{id}': NO_TASK_AUTHORITY,
  'DELETE /api/v1/tasks/{id}': NO_TASK_AUTHORITY,
  'POST /api/v1/tasks/{id}/assign': NO_TASK_AUTHORITY,
  'POST /api/v1/spawn': CREATED,
  'GET /api/v1/agents': OK,
  'GET /api/v1/agents/{id}': OK,
  'POST /api/v1/agents/{id}/stop': NO_AGENT_AUTHORITY,
  'POST /api/v1/agents/{id}/kill': NO_AGENT_AUTHORITY,
  'POST /api/v1/agents/{id}/credential/rotate': ROTATE_NEEDS_SESSION,
  'POST /api/v1/agents/{id}/chat': OK,
  'GET /api/v1/agents/mcp-servers': ADMIN_ONLY,
  'PUT /api/v1/agents/mcp-servers': ADMIN_ONLY,
  'POST /api/v1/runner/recover': RUNNER_ONLY,
  'POST /api/v1/runner/claim': RUNNER_ONLY,
  'POST /api/v1/runner/agents/{id}/report': RUNNER_ONLY,
  'GET /api/v1/cockpit/summary': OK,
  'GET /api/cockpit/summary': SESSION_ONLY,
  'GET /api/v1/cockpit/cost/daily': OK,
  'GET /api/cockpit/cost/daily': SESSION_ONLY,
  'POST /api/projects': SESSION_ONLY,
  'GET /api/projects': SESSION_ONLY,
  'GET /api/projects/{id}': SESSION_ONLY,
  'PATCH /api/projects/{id}': SESSION_ONLY,
  'POST /api/tasks': SESSION_ONLY,
  'GET /api/tasks': SESSION_ONLY,
  'GET /api/tasks/{id}': SESSION_ONLY,
  'PATCH /api/tasks/{id}': SESSION_ONLY,
  'POST /api/tasks/{id}/assign': SESSION_ONLY,
  'POST /api/spawn': SESSION_ONLY,
  'GET /api/agents': SESSION_ONLY,
  'GET /api/agents/{id}': SESSION_ONLY,
  'POST /api/agents/{id}/stop': SESSION_ONLY,
  'POST /api/agents/{id}/kill': SESSION_ONLY,
  'GET /auth/session': OK,
  'GET /api/v1/commander-link/{path}': SIGNATURE,
  'GET /api/v1/admin/updates/status': ADMIN_ONLY,
  'POST /api/v1/admin/updates/check': ADMIN_ONLY,
  'POST /api/v1/admin/updates/apply': ADMIN_ONLY,
  'GET /api/v1/admin/updates/applies': ADMIN_ONLY,
  'GET /api/v1/admin/updates/apply/{apply_id}': ADMIN_ONLY,
  'GET /api/admin/updates/status': ADMIN_ONLY,
  'POST /api/v1/public/agents/chat/{slug}': OK,
  'POST /api/v1/agent-chat/chat/{slug}': OK,
  'POST /api/assistant-user/chat': SESSION_ONLY,
  'GET /api/assistant-user/conversations': SESSION_ONLY,
  'GET /api/v1/agent-chat/usage/summary': OK,
  'GET /api/v1/agent-chat/audit': ADMIN_ONLY,
  'GET /api/agent-chat/audit': SESSION_ONLY,
  'GET /api/agent-chat/usage/summary': SESSION_ONLY,
  'GET /api/v1/agent-chat/conversations': ADMIN_ONLY,
  'GET /api/v1/agent-chat/conversations/{id}/messages': ADMIN_ONLY,
  'POST /api/knowledge/ingest': SESSION_ONLY,
  'POST /api/knowledge/vault': SESSION_ONLY,
  'GET /api/knowledge/search': SESSION_ONLY,
  'GET /api/knowledge/corpus': SESSION_ONLY,
  'GET /api/knowledge/corpus/paths': SESSION_ONLY,
  'GET /api/knowledge/docs': SESSION_ONLY,
  'GET /api/knowledge/doc/{id}': SESSION_ONLY,
  'DELETE /api/knowledge/doc/{id}': SESSION_ONLY,
  'GET /api/knowledge/ingest/status': SESSION_ONLY,
  'GET /api/agent-chat/conversations': SESSION_ONLY,
  'GET /api/agent-chat/conversations/{id}/messages': SESSION_ONLY,
} as const satisfies Record<RouteName, Cell>;

/** A readonly account reads the estate but does not write it. */
const readonlyWrites = {
  'POST /api/v1/projects': READONLY,
  'PATCH /api/v1/projects/{id}': READONLY,
  'POST /api/v1/tasks': READONLY,
  'PATCH /api/v1/tasks/{id}': READONLY,
  'DELETE /api/v1/tasks/{id}': READONLY,
  'POST /api/v1/tasks/{id}/assign': READONLY,
  'POST /api/v1/spawn': READONLY,
  'POST /api/v1/knowledge/ingest': READONLY,
  'POST /api/v1/knowledge/vault': READONLY,
  'DELETE /api/v1/knowledge/doc/{id}': READONLY,
} as const;

/** A readonly session on the web console's mirrors: reads yes, writes no. */
const readonlyMirrorWrites = {
  'POST /api/projects': READONLY,
  'PATCH /api/projects/{id}': READONLY,
  'POST /api/tasks': READONLY,
  'PATCH /api/tasks/{id}': READONLY,
  'POST /api/tasks/{id}/assign': READONLY,
  'POST /api/spawn': READONLY,
  'POST /api/knowledge/ingest': READONLY,
  'POST /api/knowledge/vault': READONLY,
  'DELETE /api/knowledge/doc/{id}': READONLY,
} as const;

const adminKey = {
  ...nonAdminKey,
  'GET /api/v1/agents/{profile_id}/chatsvc': KEY_MISSING,
  'GET /api/admin/agents/{profile_id}/chatsvc': SESSION_ONLY,
  'GET /api/v1/admin/users': OK,
  'POST /api/v1/admin/users': CREATED,
  'PATCH /api/v1/admin/users/{id}': OK,
  // Registration's one 201 was taken by the first test; local password accounts exist anyway.
  'POST /auth/register': REGISTRATION_CLOSED,
  'GET /api/admin/users': SESSION_ONLY,
  'POST /api/admin/users': SESSION_ONLY,
  'PATCH /api/admin/users/{id}': SESSION_ONLY,
  'GET /api/admin/{unknown}': NO_ROUTE,
  // The templates mirror serves browser sessions; a keyed admin uses /api/v1/templates.
  'GET /api/templates': SESSION_ONLY,
  'GET /api/templates/{unknown}': SESSION_ONLY,
  'GET /api/templates/{slug}': SESSION_ONLY,
  'POST /api/templates/{slug}/instantiate': SESSION_ONLY,
  'GET /api/v1/agent-chat/profiles': OK,
  'POST /api/v1/agent-chat/profiles': CREATED,
  'GET /api/v1/agent-chat/profiles/{slug}': OK,
  'PUT /api/v1/agent-chat/profiles/{slug}': OK,
  'GET /api/v1/agent-chat/profiles/{slug}/history': OK,
  'POST /api/v1/bots/{profile_id}/knowledge': CREATED,
  'PATCH /api/v1/bots/{profile_id}/knowledge/{id}': OK,
  'DELETE /api/v1/bots/{profile_id}/knowledge/{id}': NO_CONTENT,
  'POST /api/v1/templates/{slug}/instantiate': CREATED,
  'GET /api/v1/admin/events': OK,
  'GET /api/v1/admin/events/proof': OK,
  'GET /api/v1/admin/streams/{stream}': OK,
  'PATCH /api/v1/projects/{id}': OK,
  'PATCH /api/v1/tasks/{id}': OK,
  'DELETE /api/v1/tasks/{id}': NO_CONTENT,
  'POST /api/v1/tasks/{id}/assign': OK,
  'POST /api/v1/agents/{id}/stop': OK,
  'POST /api/v1/agents/{id}/kill': OK,
  'GET /api/v1/agents/mcp-servers': OK,
  'PUT /api/v1/agents/mcp-servers': OK,
  'GET /api/v1/admin/updates/status': OK,
  'POST /api/v1/admin/updates/check': CHECKS_OFF,
  'POST /api/v1/admin/updates/apply': APPLY_NEEDS_SESSION,
  'GET /api/v1/admin/updates/applies': OK,
  'GET /api/v1/admin/updates/apply/{apply_id}': NO_APPLY,
  'GET /api/admin/updates/status': SESSION_ONLY,
  'GET /api/v1/agent-chat/audit': OK,
  'GET /api/v1/agent-chat/conversations': OK,
  'GET /api/v1/agent-chat/conversations/{id}/messages': OK,
} as const satisfies Record<RouteName, Cell>;

const nonAdminSession = {
  ...nonAdminKey,
  // Rotates the session's own key (after every key row has run).
  'POST /api/v1/me/api-key/rotate': OK,
  'POST /api/v1/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_ADMIN,
  'POST /api/me/api-key/rotate': OK,
  'POST /api/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_ADMIN,
  // Registration takes the admin API key header only; a session is not a key.
  'POST /auth/register': MISSING,
  'GET /api/me': OK,
  'GET /api/cockpit/summary': OK,
  'GET /api/cockpit/cost/daily': OK,
  'GET /api/agent-chat/audit': ADMIN_ONLY,
  // Usage is any account's read (the route has no admin check); its mirror keeps that.
  'GET /api/agent-chat/usage/summary': OK,
  'POST /api/v1/agents/{id}/credential/rotate': ROTATE_NEEDS_ADMIN,
  'POST /api/projects': CREATED,
  'GET /api/projects': OK,
  'GET /api/projects/{id}': OK,
  'PATCH /api/projects/{id}': NOT_OWNER,
  'POST /api/tasks': CREATED,
  'GET /api/tasks': OK,
  'GET /api/tasks/{id}': OK,
  'PATCH /api/tasks/{id}': NO_TASK_AUTHORITY,
  'POST /api/tasks/{id}/assign': NO_TASK_AUTHORITY,
  'POST /api/spawn': CREATED,
  'GET /api/agents': OK,
  'GET /api/agents/{id}': OK,
  'POST /api/agents/{id}/stop': NO_AGENT_AUTHORITY,
  'POST /api/agents/{id}/kill': NO_AGENT_AUTHORITY,
  'POST /api/assistant-user/chat': OK,
  'GET /api/assistant-user/conversations': OK,
  // The mirrors: profiles are the admin's (the route's own check); knowledge reads are open, writes the admin's.
  'GET /api/agent-chat/profiles': ADMIN_ONLY,
  'POST /api/agent-chat/profiles': ADMIN_ONLY,
  'GET /api/agent-chat/profiles/{slug}': ADMIN_ONLY,
  'PUT /api/agent-chat/profiles/{slug}': ADMIN_ONLY,
  'GET /api/agent-chat/profiles/{slug}/history': ADMIN_ONLY,
  'GET /api/bots/{profile_id}/knowledge': OK,
  'POST /api/bots/{profile_id}/knowledge': ADMIN_ONLY,
  'GET /api/bots/{profile_id}/knowledge/search': OK,
  'GET /api/bots/{profile_id}/knowledge/{id}': OK,
  'PATCH /api/bots/{profile_id}/knowledge/{id}': ADMIN_ONLY,
  'DELETE /api/bots/{profile_id}/knowledge/{id}': ADMIN_ONLY,
  'POST /api/agent-chat/chat/{slug}': OK,
  // Estate knowledge: any account reads, role user writes (readonly: readonlyMirrorWrites); conversations are the admin's.
  'POST /api/knowledge/ingest': OK,
  'POST /api/knowledge/vault': OK,
  'GET /api/knowledge/search': OK,
  'GET /api/knowledge/corpus': OK,
  'GET /api/knowledge/corpus/paths': OK,
  'GET /api/knowledge/docs': OK,
  'GET /api/knowledge/doc/{id}': OK,
  'DELETE /api/knowledge/doc/{id}': NO_CONTENT,
  'GET /api/knowledge/ingest/status': OK,
  'GET /api/agent-chat/conversations': ADMIN_ONLY,
  'GET /api/agent-chat/conversations/{id}/messages': ADMIN_ONLY,
} as const satisfies Record<RouteName, Cell>;

const expect: Record<PrincipalName, Record<RouteName, Cell>> = {
  anonymous: {
    'GET /api/v1/health': OK,
    'GET /api/v1/health/db': OK,
    'GET /api/v1/me': MISSING,
    'POST /api/v1/me/api-key/rotate': MISSING,
    'POST /api/v1/admin/users/{id}/api-key/rotate': MISSING,
    'GET /api/v1/admin/users': MISSING,
    'POST /api/v1/admin/users': MISSING,
    'PATCH /api/v1/admin/users/{id}': MISSING,
    'POST /auth/register': MISSING,
    'POST /auth/login': LOGIN_BODY_INVALID,
    'POST /auth/logout': NO_CONTENT,
    'GET /api/v1/openapi.json': MISSING,
    'GET /api/v1/docs': MISSING,
    'GET /metrics': OK,
    'GET /api/me': MISSING,
    'GET /api/admin/users': MISSING,
    'POST /api/admin/users': MISSING,
    'PATCH /api/admin/users/{id}': MISSING,
    'POST /api/me/api-key/rotate': MISSING,
    'POST /api/admin/users/{id}/api-key/rotate': MISSING,
    'GET /api/admin/{unknown}': MISSING,
    'GET /api/templates': MISSING,
    'GET /api/templates/{unknown}': MISSING,
    'GET /api/templates/{slug}': MISSING,
    'POST /api/templates/{slug}/instantiate': MISSING,
    'GET /api/v1/agent-chat/profiles': MISSING,
    'POST /api/v1/agent-chat/profiles': MISSING,
    'GET /api/v1/agent-chat/profiles/{slug}': MISSING,
    'PUT /api/v1/agent-chat/profiles/{slug}': MISSING,
    'GET /api/v1/agent-chat/profiles/{slug}/history': MISSING,
    'GET /api/v1/bots/{profile_id}/knowledge': MISSING,
    'POST /api/v1/bots/{profile_id}/knowledge': MISSING,
    'GET /api/v1/agents/{profile_id}/chatsvc': MISSING,
    'GET /api/admin/agents/{profile_id}/chatsvc': MISSING,
    'GET /api/v1/bots/{profile_id}/knowledge/search': MISSING,
    'GET /api/v1/bots/{profile_id}/knowledge/{id}': MISSING,
    'PATCH /api/v1/bots/{profile_id}/knowledge/{id}': MISSING,
    'DELETE /api/v1/bots/{profile_id}/knowledge/{id}': MISSING,
    'GET /api/agent-chat/profiles': MISSING,
    'POST /api/agent-chat/profiles': MISSING,
    'GET /api/agent-chat/profiles/{slug}': MISSING,
    'PUT /api/agent-chat/profiles/{slug}': MISSING,
    'GET /api/agent-chat/profiles/{slug}/history': MISSING,
    'GET /api/bots/{profile_id}/knowledge': MISSING,
    'POST /api/bots/{profile_id}/knowledge': MISSING,
    'GET /api/bots/{profile_id}/knowledge/search': MISSING,
    'GET /api/bots/{profile_id}/knowledge/{id}': MISSING,
    'PATCH /api/bots/{profile_id}/knowledge/{id}': MISSING,
    'DELETE /api/bots/{profile_id}/knowledge/{id}': MISSING,
    'POST /api/agent-chat/chat/{slug}': MISSING,
    'GET /api/v1/templates': MISSING,
    'GET /api/v1/templates/{slug}': MISSING,
    'POST /api/v1/templates/{slug}/instantiate': MISSING,
    'POST /api/v1/knowledge/ingest': MISSING,
    'POST /api/v1/knowledge/vault': MISSING,
    'GET /api/v1/knowledge/search': MISSING,
    'GET /api/v1/knowledge/corpus': MISSING,
    'GET /api/v1/knowledge/corpus/paths': MISSING,
    'GET /api/v1/knowledge/docs': MISSING,
    'GET /api/v1/knowledge/doc/{id}': MISSING,
    'DELETE /api/v1/knowledge/doc/{id}': MISSING,
    'GET /api/v1/knowledge/ingest/status': MISSING,
    'GET /api/v1/admin/events': MISSING,
    'GET /api/v1/admin/events/proof': MISSING,
    'GET /api/v1/admin/streams/{stream}': MISSING,
    'GET /ws': NOT_AN_UPGRADE,
    'GET /ws/live': NOT_AN_UPGRADE,
    'POST /api/v1/projects': MISSING,
    'GET /api/v1/projects': MISSING,
    'GET /api/v1/projects/{id}': MISSING,
    'PATCH /api/v1/projects/{id}': MISSING,
    'POST /api/v1/tasks': MISSING,
    'GET /api/v1/tasks': MISSING,
    'GET /api/v1/tasks/{id}': MISSING,
    'PATCH /api/v1/tasks/{id}': MISSING,
    'DELETE /api/v1/tasks/{id}': MISSING,
    'POST /api/v1/tasks/{id}/assign': MISSING,
    'POST /api/v1/spawn': MISSING,
    'GET /api/v1/agents': MISSING,
    'GET /api/v1/agents/{id}': MISSING,
    'POST /api/v1/agents/{id}/stop': MISSING,
    'POST /api/v1/agents/{id}/kill': MISSING,
    'POST /api/v1/agents/{id}/credential/rotate': MISSING,
    'POST /api/v1/agents/{id}/chat': MISSING,
    'GET /api/v1/agents/mcp-servers': MISSING,
    'PUT /api/v1/agents/mcp-servers': MISSING,
    'POST /api/v1/runner/recover': MISSING,
    'POST /api/v1/runner/claim': MISSING,
    'POST /api/v1/runner/agents/{id}/report': MISSING,
    'GET /api/v1/cockpit/summary': MISSING,
    'GET /api/cockpit/summary': MISSING,
    'GET /api/v1/cockpit/cost/daily': MISSING,
    'GET /api/cockpit/cost/daily': MISSING,
    'POST /api/projects': MISSING,
    'GET /api/projects': MISSING,
    'GET /api/projects/{id}': MISSING,
    'PATCH /api/projects/{id}': MISSING,
    'POST /api/tasks': MISSING,
    'GET /api/tasks': MISSING,
    'GET /api/tasks/{id}': MISSING,
    'PATCH /api/tasks/{id}': MISSING,
    'POST /api/tasks/{id}/assign': MISSING,
    'POST /api/spawn': MISSING,
    'GET /api/agents': MISSING,
    'GET /api/agents/{id}': MISSING,
    'POST /api/agents/{id}/stop': MISSING,
    'POST /api/agents/{id}/kill': MISSING,
    'GET /auth/session': OK,
    'GET /api/v1/commander-link/{path}': SIGNATURE,
    'GET /api/v1/admin/updates/status': MISSING,
    'POST /api/v1/admin/updates/check': MISSING,
    'POST /api/v1/admin/updates/apply': MISSING,
    'GET /api/v1/admin/updates/applies': MISSING,
    'GET /api/v1/admin/updates/apply/{apply_id}': MISSING,
    'GET /api/admin/updates/status': MISSING,
    'POST /api/v1/public/agents/chat/{slug}': OK,
    'POST /api/v1/agent-chat/chat/{slug}': MISSING,
    'POST /api/assistant-user/chat': MISSING,
    'GET /api/assistant-user/conversations': MISSING,
    'GET /api/v1/agent-chat/usage/summary': MISSING,
    'GET /api/v1/agent-chat/audit': MISSING,
    'GET /api/agent-chat/audit': MISSING,
    'GET /api/agent-chat/usage/summary': MISSING,
    'GET /api/v1/agent-chat/conversations': MISSING,
    'GET /api/v1/agent-chat/conversations/{id}/messages': MISSING,
    'POST /api/knowledge/ingest': MISSING,
    'POST /api/knowledge/vault': MISSING,
    'GET /api/knowledge/search': MISSING,
    'GET /api/knowledge/corpus': MISSING,
    'GET /api/knowledge/corpus/paths': MISSING,
    'GET /api/knowledge/docs': MISSING,
    'GET /api/knowledge/doc/{id}': MISSING,
    'DELETE /api/knowledge/doc/{id}': MISSING,
    'GET /api/knowledge/ingest/status': MISSING,
    'GET /api/agent-chat/conversations': MISSING,
    'GET /api/agent-chat/conversations/{id}/messages': MISSING,
  },
  'invalid key': {
    'GET /api/v1/health': OK,
    'GET /api/v1/health/db': OK,
    'GET /api/v1/me': INVALID,
    // A presented key is a bearer credential, valid or not: the rotation routes refuse it as such.
    'POST /api/v1/me/api-key/rotate': ROTATE_NEEDS_SESSION,
    'POST /api/v1/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
    'GET /api/v1/admin/users': INVALID,
    'POST /api/v1/admin/users': INVALID,
    'PATCH /api/v1/admin/users/{id}': INVALID,
    'POST /auth/register': INVALID,
    'POST /auth/login': LOGIN_BODY_INVALID,
    'POST /auth/logout': NO_CONTENT,
    'GET /api/v1/openapi.json': INVALID,
    'GET /api/v1/docs': INVALID,
    'GET /metrics': OK,
    'GET /api/me': INVALID,
    'GET /api/admin/users': INVALID,
    'POST /api/admin/users': INVALID,
    'PATCH /api/admin/users/{id}': INVALID,
    'POST /api/me/api-key/rotate': ROTATE_NEEDS_SESSION,
    'POST /api/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
    'GET /api/admin/{unknown}': INVALID,
    'GET /api/templates': INVALID,
    'GET /api/templates/{unknown}': INVALID,
    'GET /api/templates/{slug}': INVALID,
    'POST /api/templates/{slug}/instantiate': INVALID,
    'GET /api/v1/agent-chat/profiles': INVALID,
    'POST /api/v1/agent-chat/profiles': INVALID,
    'GET /api/v1/agent-chat/profiles/{slug}': INVALID,
    'PUT /api/v1/agent-chat/profiles/{slug}': INVALID,
    'GET /api/v1/agent-chat/profiles/{slug}/history': INVALID,
    'GET /api/v1/bots/{profile_id}/knowledge': INVALID,
    'POST /api/v1/bots/{profile_id}/knowledge': INVALID,
    'GET /api/v1/agents/{profile_id}/chatsvc': INVALID,
    'GET /api/admin/agents/{profile_id}/chatsvc': INVALID,
    'GET /api/v1/bots/{profile_id}/knowledge/search': INVALID,
    'GET /api/v1/bots/{profile_id}/knowledge/{id}': INVALID,
    'PATCH /api/v1/bots/{profile_id}/knowledge/{id}': INVALID,
    'DELETE /api/v1/bots/{profile_id}/knowledge/{id}': INVALID,
    'GET /api/agent-chat/profiles': INVALID,
    'POST /api/agent-chat/profiles': INVALID,
    'GET /api/agent-chat/profiles/{slug}': INVALID,
    'PUT /api/agent-chat/profiles/{slug}': INVALID,
    'GET /api/agent-chat/profiles/{slug}/history': INVALID,
    'GET /api/bots/{profile_id}/knowledge': INVALID,
    'POST /api/bots/{profile_id}/knowledge': INVALID,
    'GET /api/bots/{profile_id}/knowledge/search': INVALID,
    'GET /api/bots/{profile_id}/knowledge/{id}': INVALID,
    'PATCH /api/bots/{profile_id}/knowledge/{id}': INVALID,
    'DELETE /api/bots/{profile_id}/knowledge/{id}': INVALID,
    'POST /api/agent-chat/chat/{slug}': INVALID,
    'GET /api/v1/templates': INVALID,
    'GET /api/v1/templates/{slug}': INVALID,
    'POST /api/v1/templates/{slug}/instantiate': INVALID,
    'POST /api/v1/knowledge/ingest': INVALID,
    'POST /api/v1/knowledge/vault': INVALID,
    'GET /api/v1/knowledge/search': INVALID,
    'GET /api/v1/knowledge/corpus': INVALID,
    'GET /api/v1/knowledge/corpus/paths': INVALID,
    'GET /api/v1/knowledge/docs': INVALID,
    'GET /api/v1/knowledge/doc/{id}': INVALID,
    'DELETE /api/v1/knowledge/doc/{id}': INVALID,
    'GET /api/v1/knowledge/ingest/status': INVALID,
    'GET /api/v1/admin/events': INVALID,
    'GET /api/v1/admin/events/proof': INVALID,
    'GET /api/v1/admin/streams/{stream}': INVALID,
    'GET /ws': NOT_AN_UPGRADE,
    'GET /ws/live': NOT_AN_UPGRADE,
    'POST /api/v1/projects': INVALID,
    'GET /api/v1/projects': INVALID,
    'GET /api/v1/projects/{id}': INVALID,
    'PATCH /api/v1/projects/{id}': INVALID,
    'POST /api/v1/tasks': INVALID,
    'GET /api/v1/tasks': INVALID,
    'GET /api/v1/tasks/{id}': INVALID,
    'PATCH /api/v1/tasks/{id}': INVALID,
    'DELETE /api/v1/tasks/{id}': INVALID,
    'POST /api/v1/tasks/{id}/assign': INVALID,
    'POST /api/v1/spawn': INVALID,
    'GET /api/v1/agents': INVALID,
    'GET /api/v1/agents/{id}': INVALID,
    'POST /api/v1/agents/{id}/stop': INVALID,
    'POST /api/v1/agents/{id}/kill': INVALID,
    'POST /api/v1/agents/{id}/credential/rotate': ROTATE_NEEDS_SESSION,
    'POST /api/v1/agents/{id}/chat': INVALID,
    'GET /api/v1/agents/mcp-servers': INVALID,
    'PUT /api/v1/agents/mcp-servers': INVALID,
    'POST /api/v1/runner/recover': INVALID,
    'POST /api/v1/runner/claim': INVALID,
    'POST /api/v1/runner/agents/{id}/report': INVALID,
    'GET /api/v1/cockpit/summary': INVALID,
    'GET /api/cockpit/summary': INVALID,
    'GET /api/v1/cockpit/cost/daily': INVALID,
    'GET /api/cockpit/cost/daily': INVALID,
    'POST /api/projects': INVALID,
    'GET /api/projects': INVALID,
    'GET /api/projects/{id}': INVALID,
    'PATCH /api/projects/{id}': INVALID,
    'POST /api/tasks': INVALID,
    'GET /api/tasks': INVALID,
    'GET /api/tasks/{id}': INVALID,
    'PATCH /api/tasks/{id}': INVALID,
    'POST /api/tasks/{id}/assign': INVALID,
    'POST /api/spawn': INVALID,
    'GET /api/agents': INVALID,
    'GET /api/agents/{id}': INVALID,
    'POST /api/agents/{id}/stop': INVALID,
    'POST /api/agents/{id}/kill': INVALID,
    'GET /auth/session': OK,
    'GET /api/v1/commander-link/{path}': SIGNATURE,
    'GET /api/v1/admin/updates/status': INVALID,
    'POST /api/v1/admin/updates/check': INVALID,
    'POST /api/v1/admin/updates/apply': INVALID,
    'GET /api/v1/admin/updates/applies': INVALID,
    'GET /api/v1/admin/updates/apply/{apply_id}': INVALID,
    'GET /api/admin/updates/status': INVALID,
    'POST /api/v1/public/agents/chat/{slug}': OK,
    'POST /api/v1/agent-chat/chat/{slug}': INVALID,
    'POST /api/assistant-user/chat': INVALID,
    'GET /api/assistant-user/conversations': INVALID,
    'GET /api/v1/agent-chat/usage/summary': INVALID,
    'GET /api/v1/agent-chat/audit': INVALID,
    'GET /api/agent-chat/audit': INVALID,
    'GET /api/agent-chat/usage/summary': INVALID,
    'GET /api/v1/agent-chat/conversations': INVALID,
    'GET /api/v1/agent-chat/conversations/{id}/messages': INVALID,
    'POST /api/knowledge/ingest': INVALID,
    'POST /api/knowledge/vault': INVALID,
    'GET /api/knowledge/search': INVALID,
    'GET /api/knowledge/corpus': INVALID,
    'GET /api/knowledge/corpus/paths': INVALID,
    'GET /api/knowledge/docs': INVALID,
    'GET /api/knowledge/doc/{id}': INVALID,
    'DELETE /api/knowledge/doc/{id}': INVALID,
    'GET /api/knowledge/ingest/status': INVALID,
    'GET /api/agent-chat/conversations': INVALID,
    'GET /api/agent-chat/conversations/{id}/messages': INVALID,
  },
  'readonly key': { ...nonAdminKey, ...readonlyWrites },
  'user key': nonAdminKey,
  'bootstrap admin key': adminKey,
  'api admin key': adminKey,
  // The runner acts with role user, never admin; GET /api/v1/me shows its service principal.
  'runner key': {
    ...nonAdminKey,
    'POST /api/v1/runner/recover': OK,
    'POST /api/v1/runner/claim': OK,
    'POST /api/v1/runner/agents/{id}/report': OK,
  },
  'readonly session': { ...nonAdminSession, ...readonlyWrites, ...readonlyMirrorWrites },
  'user session': nonAdminSession,
  'admin session': {
    ...adminKey,
    'POST /api/v1/me/api-key/rotate': OK,
    'POST /api/v1/admin/users/{id}/api-key/rotate': OK,
    'POST /auth/register': MISSING,
    'GET /api/me': OK,
    'GET /api/admin/users': OK,
    'POST /api/admin/users': CREATED,
    'PATCH /api/admin/users/{id}': OK,
    'POST /api/me/api-key/rotate': OK,
    'POST /api/admin/users/{id}/api-key/rotate': OK,
    'GET /api/templates': OK,
    'GET /api/templates/{unknown}': NO_TEMPLATE,
    'GET /api/templates/{slug}': OK,
    'POST /api/templates/{slug}/instantiate': CREATED,
    'POST /api/v1/agents/{id}/credential/rotate': OK,
    'POST /api/v1/admin/updates/apply': NOT_HEAD,
    'GET /api/admin/updates/status': OK,
    'POST /api/assistant-user/chat': OK,
    'GET /api/assistant-user/conversations': OK,
    'GET /api/admin/agents/{profile_id}/chatsvc': KEY_MISSING,
    'GET /api/cockpit/summary': OK,
    'GET /api/cockpit/cost/daily': OK,
    'GET /api/agent-chat/audit': OK,
    'GET /api/agent-chat/usage/summary': OK,
    'POST /api/projects': CREATED,
    'GET /api/projects': OK,
    'GET /api/projects/{id}': OK,
    'PATCH /api/projects/{id}': OK,
    'POST /api/tasks': CREATED,
    'GET /api/tasks': OK,
    'GET /api/tasks/{id}': OK,
    'PATCH /api/tasks/{id}': OK,
    'POST /api/tasks/{id}/assign': OK,
    'POST /api/spawn': CREATED,
    'GET /api/agents': OK,
    'GET /api/agents/{id}': OK,
    'POST /api/agents/{id}/stop': OK,
    'POST /api/agents/{id}/kill': OK,
    'GET /api/agent-chat/profiles': OK,
    'POST /api/agent-chat/profiles': CREATED,
    'GET /api/agent-chat/profiles/{slug}': OK,
    'PUT /api/agent-chat/profiles/{slug}': OK,
    'GET /api/agent-chat/profiles/{slug}/history': OK,
    'GET /api/bots/{profile_id}/knowledge': OK,
    'POST /api/bots/{profile_id}/knowledge': CREATED,
    'GET /api/bots/{profile_id}/knowledge/search': OK,
    'GET /api/bots/{profile_id}/knowledge/{id}': OK,
    'PATCH /api/bots/{profile_id}/knowledge/{id}': OK,
    'DELETE /api/bots/{profile_id}/knowledge/{id}': NO_CONTENT,
    'POST /api/agent-chat/chat/{slug}': OK,
    'POST /api/knowledge/ingest': OK,
    'POST /api/knowledge/vault': OK,
    'GET /api/knowledge/search': OK,
    'GET /api/knowledge/corpus': OK,
    'GET /api/knowledge/corpus/paths': OK,
    'GET /api/knowledge/docs': OK,
    'GET /api/knowledge/doc/{id}': OK,
    'DELETE /api/knowledge/doc/{id}': NO_CONTENT,
    'GET /api/knowledge/ingest/status': OK,
    'GET /api/agent-chat/conversations': OK,
    'GET /api/agent-chat/conversations/{id}/messages': OK,
  },
};

// With ORCH_ENFORCE_ADMIN_ROLE=false: require_admin only turns away anonymous callers, while the
// admin rotation route keeps its own admin check (it hands out keys).
const optOutExpect: Partial<Record<PrincipalName, Partial<Record<RouteName, Cell>>>> = {
  anonymous: {
    'GET /api/v1/admin/users': MISSING,
    'POST /api/v1/admin/users/{id}/api-key/rotate': MISSING,
    'GET /api/admin/{unknown}': MISSING,
  },
  'user key': {
    'GET /api/v1/admin/users': OK,
    'GET /api/admin/users': SESSION_ONLY,
    'POST /api/v1/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
    'POST /api/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
    'GET /api/admin/{unknown}': NO_ROUTE,
    // Profile routes, knowledge writes and instantiation check the admin role themselves.
    'GET /api/v1/agent-chat/profiles': ADMIN_ONLY,
    'POST /api/v1/agent-chat/profiles': ADMIN_ONLY,
    'PUT /api/v1/agent-chat/profiles/{slug}': ADMIN_ONLY,
    'GET /api/v1/agent-chat/profiles/{slug}/history': ADMIN_ONLY,
    'POST /api/v1/bots/{profile_id}/knowledge': ADMIN_ONLY,
    'DELETE /api/v1/bots/{profile_id}/knowledge/{id}': ADMIN_ONLY,
    'POST /api/v1/templates/{slug}/instantiate': ADMIN_ONLY,
    'GET /api/templates': SESSION_ONLY,
    // The connector checks the admin role itself; its mirror wants a session first.
    'GET /api/v1/agents/{profile_id}/chatsvc': ADMIN_ONLY,
    'GET /api/admin/agents/{profile_id}/chatsvc': SESSION_ONLY,
    // The raw log holds every account's personal data: its routes check the admin role themselves.
    'GET /api/v1/admin/events': ADMIN_ONLY,
    'GET /api/v1/admin/events/proof': ADMIN_ONLY,
    'GET /api/v1/admin/streams/{stream}': ADMIN_ONLY,
    // Audit and conversations check the admin role themselves.
    'GET /api/v1/agent-chat/audit': ADMIN_ONLY,
    'GET /api/v1/agent-chat/conversations': ADMIN_ONLY,
    'GET /api/v1/agent-chat/conversations/{id}/messages': ADMIN_ONLY,
  },
  'runner key': {
    'GET /api/v1/admin/users': OK,
    'POST /api/v1/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_SESSION,
    'GET /api/admin/{unknown}': NO_ROUTE,
  },
  'user session': {
    'GET /api/v1/admin/users': OK,
    'GET /api/admin/users': OK,
    'POST /api/v1/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_ADMIN,
    // The rotation mirror keeps its own admin check; account creation follows require_admin.
    'POST /api/admin/users/{id}/api-key/rotate': ROTATE_NEEDS_ADMIN,
    'POST /api/admin/users': CREATED,
    'GET /api/admin/{unknown}': NO_ROUTE,
    'GET /api/templates': OK,
    'GET /api/templates/{slug}': OK,
    'POST /api/templates/{slug}/instantiate': ADMIN_ONLY,
    'PUT /api/v1/agent-chat/profiles/{slug}': ADMIN_ONLY,
    'PATCH /api/v1/bots/{profile_id}/knowledge/{id}': ADMIN_ONLY,
    // Their web-UI mirrors keep the routes' own admin checks.
    'GET /api/agent-chat/profiles': ADMIN_ONLY,
    'PUT /api/agent-chat/profiles/{slug}': ADMIN_ONLY,
    'POST /api/bots/{profile_id}/knowledge': ADMIN_ONLY,
    'GET /api/agent-chat/conversations': ADMIN_ONLY,
  },
};

// ---------------------------------------------------------------------------------------------
// The runner: every cell of a table, mismatches collected (so one run shows all of them).

function describe(cell: Cell): string {
  return typeof cell === 'number' ? String(cell) : `${cell.status} ${cell.error}${cell.message === undefined ? '' : ` "${cell.message}"`}`;
}

async function runTable(w: World, table: Partial<Record<PrincipalName, Partial<Record<RouteName, Cell>>>>): Promise<string[]> {
  const mismatches: string[] = [];
  for (const who of principals as readonly Principal[]) {
    const row = table[who.name as PrincipalName];
    if (!row) continue;
    const cells = (routes as readonly Route[]).filter((r) => r.name in row);
    for (const route of [...cells.filter((r) => !r.endsSession), ...cells.filter((r) => r.endsSession)]) {
      const want = row[route.name as RouteName]!;
      const body = route.body?.(w);
      const reply = await http(`${w.s.orch}${route.path(w)}`, {
        method: route.method, headers: who.headers(w), ...(body === undefined ? {} : { json: body }),
      });
      const where = `${who.name} × ${route.name}`;
      const status = typeof want === 'number' ? want : want.status;
      if (reply.status !== status) {
        mismatches.push(`${where}: expected ${describe(want)}, got ${reply.status} ${reply.text.slice(0, 200)}`);
        continue;
      }
      if (typeof want !== 'number') {
        if (reply.body?.error !== want.error || (want.message !== undefined && reply.body?.message !== want.message)) {
          mismatches.push(`${where}: expected ${describe(want)}, got ${reply.status} ${reply.text.slice(0, 200)}`);
        }
        continue;
      }
      if (route.check && status < 300) {
        try {
          await route.check(reply, w, who);
        } catch (error) {
          mismatches.push(`${where}: ${status} as expected, but ${(error as Error).message}`);
        }
      }
    }
  }
  return mismatches;
}

function assertNoMismatches(mismatches: string[]): void {
  assert.ok(mismatches.length === 0, `${mismatches.length} cell(s) differ:\n  ${mismatches.join('\n  ')}`);
}

// ---------------------------------------------------------------------------------------------
// Servers: the admin key through ADMIN_API_KEY_FILE (the form that lets the runner register) and
// a different runner key.

const ADMIN_KEY = `orch_matrix-admin-${randomUUID()}`;
const RUNNER_KEY = `orch_matrix-runner-${randomUUID()}`;

async function startServer(label: string, dir: string, env: Record<string, string> = {}): Promise<TestServices> {
  const file = path.join(dir, `${label}-admin.key`);
  await writeFile(file, `${ADMIN_KEY}\n`, { mode: 0o600 });
  return startTestApps(label, { ADMIN_API_KEY_FILE: file, ORCH_RUNNER_API_KEY: RUNNER_KEY, ...env });
}

/** An account without a password (nothing to hash): for targets of admin routes, never a principal. */
async function createKeyOnlyAccount(s: TestServices, name: string): Promise<Account> {
  const email = `${name}@example.test`;
  const r = await http(`${s.orch}/api/v1/admin/users`, { headers: keyed(ADMIN_KEY), json: { username: name, email, role: 'user' } });
  if (r.status !== 201) throw new Error(`create account: ${r.status} ${r.text}`);
  return { id: r.body.id, username: name, email, password: '', apiKey: r.body.api_key, role: 'user' };
}

/** Accounts in parallel (password hashing runs on the threadpool), then one login per session. */
async function buildWorld(s: TestServices, roles: { keys: Array<keyof World['accounts']>; sessions: Array<keyof World['sessions']> }): Promise<World> {
  const w: World = { s, adminKey: ADMIN_KEY, runnerKey: RUNNER_KEY, accounts: {}, sessions: {}, seq: 0, deletable: [], deletableTasks: [] };
  const wanted = [...new Set([...roles.keys, ...roles.sessions])];
  const [target, throwaway, ...made] = await Promise.all([
    createKeyOnlyAccount(s, `target-${randomUUID().slice(0, 8)}`),
    createKeyOnlyAccount(s, `throwaway-${randomUUID().slice(0, 8)}`),
    ...wanted.map((role) => createAccount(s, ADMIN_KEY, role)),
  ]);
  w.target = target;
  w.throwaway = throwaway;
  const slug = `matrix-bot-${randomUUID().slice(0, 8)}`;
  const profile = await http(`${s.orch}/api/v1/agent-chat/profiles`, { headers: keyed(ADMIN_KEY), json: { slug, name: 'Matrix bot' } });
  if (profile.status !== 201) throw new Error(`create profile: ${profile.status} ${profile.text}`);
  w.profile = { id: profile.body.id, slug };
  const snippet = async () => {
    const r = await http(`${s.orch}/api/v1/bots/${profile.body.id}/knowledge`, { headers: keyed(ADMIN_KEY), json: { title: 'Matrix', content: 'A matrix snippet.' } });
    if (r.status !== 201) throw new Error(`add snippet: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  w.snippet = await snippet();
  // Two DELETE routes (/api/v1/ and its mirror): two snippets per row.
  for (let i = 0; i < 2 * principals.length; i++) w.deletable.push(await snippet());
  const stored = await http(`${s.orch}/api/v1/knowledge/ingest`, {
    headers: keyed(ADMIN_KEY), json: { documents: [{ source_repo: 'matrix', path: 'stays/here.md', content: 'matrix document that stays' }] },
  });
  if (stored.status !== 200 || stored.body.status !== 'ok') throw new Error(`estate document: ${stored.status} ${stored.text}`);
  w.estateDocument = stored.body.results[0].document_id;
  const project = await http(`${s.orch}/api/v1/projects`, { headers: keyed(ADMIN_KEY), json: { name: 'matrix', max_concurrent_agents: 1 } });
  if (project.status !== 201) throw new Error(`create project: ${project.status} ${project.text}`);
  w.project = project.body.id;
  const task = async () => {
    const r = await http(`${s.orch}/api/v1/tasks`, { headers: keyed(ADMIN_KEY), json: { project_id: w.project, title: 'Matrix task', priority: 'low' } });
    if (r.status !== 201) throw new Error(`create task: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  w.task = await task();
  for (let i = 0; i < principals.length; i++) w.deletableTasks.push(await task());
  const agent = async (name: string) => {
    const r = await http(`${s.orch}/api/v1/spawn`, { headers: keyed(ADMIN_KEY), json: { name, role: 'builder', project_id: w.project } });
    if (r.status !== 201) throw new Error(`spawn: ${r.status} ${r.text}`);
    return r.body.id as string;
  };
  w.agents = { stop: await agent('matrix-stop'), kill: await agent('matrix-kill'), chat: await agent('matrix-chat') };
  const front = `matrix-front-${randomUUID().slice(0, 8)}`;
  const frontProfile = await http(`${s.orch}/api/v1/agent-chat/profiles`, { headers: keyed(ADMIN_KEY), json: { slug: front, name: 'Matrix front desk', security_tier: 1 } });
  if (frontProfile.status !== 201) throw new Error(`create public profile: ${frontProfile.status} ${frontProfile.text}`);
  w.publicProfile = front;
  const turn = await http(`${s.orch}/api/v1/public/agents/chat/${front}`, { json: { message: 'first turn' } });
  if (turn.status !== 200) throw new Error(`public chat: ${turn.status} ${turn.text}`);
  w.conversation = turn.body.conversation_id;
  wanted.forEach((role, i) => { w.accounts[role] = made[i]!; });
  const sessions = await Promise.all(roles.sessions.map((role) => login(s, account(w, role))));
  roles.sessions.forEach((role, i) => { w.sessions[role] = sessions[i]!; });
  return w;
}

// ---------------------------------------------------------------------------------------------

const test = suite<{ dir: string; s: TestServices; optOut?: TestServices }>('e2e authorisation matrix');

test.before(async (ctx) => {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-authz-'));
  ctx.s = await startServer('authz-matrix', ctx.dir);
});

test.after(async (ctx) => {
  await ctx.optOut?.close();
  await ctx.s?.close();
  if (ctx.dir) await rm(ctx.dir, { recursive: true, force: true });
});

test('the runner principal is registered (the admin key came from a file)', async ({ s }) => {
  const me = await http(`${s.orch}/api/v1/me`, { headers: keyed(RUNNER_KEY) });
  assert.is(me.status, 200);
  assert.is(me.body.id, RUNNER_ID);
});

test('POST /auth/register on the fresh server: 201 for the admin key, then 409', async ({ s }) => {
  // Must run before any local password account exists (the matrix creates several).
  const first = await http(`${s.orch}/auth/register`, {
    headers: keyed(ADMIN_KEY), json: { username: 'first-admin', email: 'first-admin@example.test', password: `pw-${randomUUID()}` },
  });
  assert.is(first.status, 201, first.text);
  assert.equal(Object.keys(first.body).sort(), ['email', 'id', 'role', 'username']);
  assert.is(first.body.role, 'admin');
  const second = await http(`${s.orch}/auth/register`, {
    headers: keyed(ADMIN_KEY), json: { username: 'second-admin', email: 'second-admin@example.test', password: `pw-${randomUUID()}` },
  });
  assert.is(second.status, 409, second.text);
  assert.is(second.body.error, 'already_registered');
});

test('every route × every principal answers as the table says', async ({ s }) => {
  for (const row of Object.values(expect)) assert.equal(Object.keys(row).sort(), routes.map((r) => r.name).sort());
  const w = await buildWorld(s, { keys: ['readonly', 'user', 'admin'], sessions: ['readonly', 'user', 'admin'] });
  assertNoMismatches(await runTable(w, expect));
});

test('ORCH_ENFORCE_ADMIN_ROLE=false: a user key reaches admin routes; admin key rotation still needs an admin session', async (ctx) => {
  ctx.optOut = await startServer('authz-optout', ctx.dir, { ORCH_ENFORCE_ADMIN_ROLE: 'false' });
  const w = await buildWorld(ctx.optOut, { keys: ['user'], sessions: ['user'] });
  assertNoMismatches(await runTable(w, optOutExpect));
});

test.run();
