// The authorisation matrix of bots, webhooks, feedback, announcements and the admin surface:
// every route × (instance owner, instance admin, user, a bot token of each scope, an expired, a
// revoked and a suspended bot's token, both headers at once), one real HTTP request per cell.
// Refusals are checked on every route (a refusal changes nothing), permitted cells on every read.
// A test checks the table covers every such route the chat app answers. The two public routes
// (bootstrap-token: deploy secret; webhook execute: URL token) have their own suites.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp } from '../../main/apps.ts';
import { bearer, type ChatAccount } from '../support/chat.ts';
import { http, startTestApps, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';

const PRINCIPALS = [
  'owner',
  'admin',
  'user',
  'bot_default',
  'bot_metrics',
  'bot_provision',
  'bot_expired',
  'bot_revoked',
  'bot_suspended',
  'both',
] as const;
type P = (typeof PRINCIPALS)[number];
const ADMIN: P[] = ['owner', 'admin'];
const PROVISION: P[] = ['owner', 'admin', 'bot_provision'];
const USERS: P[] = ['owner', 'admin', 'user', 'bot_default'];

interface World {
  ids: Record<string, string>;
}
interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  allow: P[];
  at(w: World): string;
}
const r = (method: Route['method'], path: string, allow: P[], at: (w: World) => string): Route => ({
  method,
  path,
  allow,
  at,
});
const Z = '00000000-0000-4000-8000-000000000000';

const ROUTES: Route[] = [
  r('GET', '/api/admin/bots', PROVISION, () => '/api/admin/bots'),
  r('POST', '/api/admin/bots', PROVISION, () => '/api/admin/bots'),
  r('GET', '/api/admin/bots/{id}', PROVISION, (w) => `/api/admin/bots/${w.ids.bot}`),
  r('DELETE', '/api/admin/bots/{id}', ADMIN, (w) => `/api/admin/bots/${w.ids.bot}`),
  r('POST', '/api/admin/bots/{id}/tokens', PROVISION, (w) => `/api/admin/bots/${w.ids.bot}/tokens`),
  r(
    'POST',
    '/api/admin/bots/{id}/tokens/{tid}/revoke',
    ADMIN,
    (w) => `/api/admin/bots/${w.ids.bot}/tokens/${w.ids.token}/revoke`,
  ),
  r('POST', '/api/admin/bots/{id}/communities', PROVISION, (w) => `/api/admin/bots/${w.ids.bot}/communities`),
  r('GET', '/api/admin/bots/{id}/communities', PROVISION, (w) => `/api/admin/bots/${w.ids.bot}/communities`),
  r(
    'DELETE',
    '/api/admin/bots/{id}/communities/{cid}',
    ADMIN,
    (w) => `/api/admin/bots/${w.ids.bot}/communities/${w.ids.c}`,
  ),
  r('GET', '/api/admin/communities', PROVISION, () => '/api/admin/communities'),
  r('GET', '/api/admin/integrations', ADMIN, () => '/api/admin/integrations'),
  r('POST', '/api/admin/integrations', ADMIN, () => '/api/admin/integrations'),
  r('GET', '/api/v1/metrics/cockpit', ['bot_metrics'], () => '/api/v1/metrics/cockpit'),
  r('POST', '/api/keys/register', USERS, () => '/api/keys/register'),
  r('POST', '/api/channels/{id}/webhooks', ADMIN, (w) => `/api/channels/${w.ids.ch}/webhooks`),
  r('GET', '/api/channels/{id}/webhooks', ADMIN, (w) => `/api/channels/${w.ids.ch}/webhooks`),
  r('PATCH', '/api/webhooks/{id}', ADMIN, (w) => `/api/webhooks/${w.ids.hook}`),
  r('DELETE', '/api/webhooks/{id}', ADMIN, (w) => `/api/webhooks/${w.ids.hook}`),
  r('GET', '/api/admin/users', ADMIN, () => '/api/admin/users'),
  r('POST', '/api/admin/users/{id}/suspend', ADMIN, (w) => `/api/admin/users/${w.ids.victim}/suspend`),
  r('POST', '/api/admin/users/{id}/unsuspend', ADMIN, (w) => `/api/admin/users/${w.ids.victim}/unsuspend`),
  r('DELETE', '/api/admin/users/{id}', ADMIN, (w) => `/api/admin/users/${w.ids.victim}`),
  r('PUT', '/api/admin/users/{id}/admin', ADMIN, (w) => `/api/admin/users/${w.ids.victim}/admin`),
  r('PUT', '/api/admin/users/{id}/password', ADMIN, (w) => `/api/admin/users/${w.ids.victim}/password`),
  r('POST', '/api/admin/purge/message/{id}', ADMIN, () => `/api/admin/purge/message/${Z}`),
  r('POST', '/api/admin/purge/user/{id}/messages', ADMIN, (w) => `/api/admin/purge/user/${w.ids.victim}/messages`),
  r('POST', '/api/admin/purge/channel/{id}', ADMIN, (w) => `/api/admin/purge/channel/${w.ids.ch}`),
  r('POST', '/api/admin/messages/{id}/quarantine', ADMIN, () => `/api/admin/messages/${Z}/quarantine`),
  r('POST', '/api/admin/messages/{id}/unquarantine', ADMIN, () => `/api/admin/messages/${Z}/unquarantine`),
  r('GET', '/api/admin/audit-log', ADMIN, () => '/api/admin/audit-log'),
  r('GET', '/api/admin/reports', ADMIN, () => '/api/admin/reports'),
  r('POST', '/api/admin/reports/{id}/review', ADMIN, () => `/api/admin/reports/${Z}/review`),
  r('GET', '/api/admin/announcements', ADMIN, () => '/api/admin/announcements'),
  r('POST', '/api/admin/announcements', ADMIN, () => '/api/admin/announcements'),
  r('GET', '/api/announcements', USERS, () => '/api/announcements'),
  r('POST', '/api/announcements/{id}/dismiss', USERS, () => `/api/announcements/${Z}/dismiss`),
  r('POST', '/api/feedback', USERS, () => '/api/feedback'),
  r('GET', '/api/admin/feedback', ADMIN, () => '/api/admin/feedback'),
  r('PATCH', '/api/admin/feedback/{id}', ADMIN, () => `/api/admin/feedback/${Z}`),
  r('GET', '/api/admin/feedback/{id}/screenshot', ADMIN, () => `/api/admin/feedback/${Z}/screenshot`),
  r('GET', '/api/admin/invites', ADMIN, () => '/api/admin/invites'),
  r('POST', '/api/admin/invites', ADMIN, () => '/api/admin/invites'),
  r('DELETE', '/api/admin/invites/{id}', ADMIN, () => `/api/admin/invites/${Z}`),
];

/** Permitted reads that answer 404 by design (an id that does not exist). */
const OK_STATUS: Record<string, number> = { 'GET /api/admin/feedback/{id}/screenshot': 404 };
const COVERED =
  /^\/api\/(admin\/(bots|communities|integrations|users|purge|messages|audit-log|reports|announcements|feedback|invites)|v1\/metrics|announcements|feedback|webhooks|keys\/register|channels\/\{id\}\/webhooks)/;
const PUBLIC = new Set(['POST /api/admin/bots/bootstrap-token', 'POST /api/webhooks/execute/{token}']);

interface Ctx {
  s: TestServices;
  sp: Spaces;
  w: World;
  who: Record<'owner' | 'admin' | 'user', ChatAccount>;
  tokens: Record<string, string>;
}
const test = suite<Ctx>('chat bots and admin: authorisation matrix');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_admin_matrix', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  const sp = (ctx.sp = new Spaces(ctx.s));
  const owner = await sp.register('own');
  const admin = await sp.register('adm');
  const user = await sp.register('usr');
  const victim = await sp.register('vic');
  await sp.ok(owner, 'PUT', `/api/admin/users/${admin.id}/admin`, { is_admin: true });
  const c = await sp.community(owner);
  await sp.join(c, owner, [user, victim]);
  const g = await sp.group(owner, c);
  const ch = await sp.channel(owner, g, [user, victim]);
  const bot = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'mx_bot' }, 201);
  await sp.ok(owner, 'POST', `/api/admin/bots/${bot.id}/communities`, { community_id: c });
  const mint = async (id: string, body: Record<string, unknown>) =>
    sp.ok(owner, 'POST', `/api/admin/bots/${id}/tokens`, body, 201);
  const tokens: Record<string, string> = {};
  tokens.bot_default = (await mint(bot.id, {})).token;
  tokens.bot_metrics = (await mint(bot.id, { scope: 'metrics' })).token;
  tokens.bot_provision = (await mint(bot.id, { scope: 'bot:provision' })).token;
  tokens.bot_expired = (await mint(bot.id, { expires_in_hours: 1 })).token;
  const revoked = await mint(bot.id, {});
  tokens.bot_revoked = revoked.token;
  await sp.ok(owner, 'POST', `/api/admin/bots/${bot.id}/tokens/${revoked.id}/revoke`);
  const suspended = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'sus_bot' }, 201);
  tokens.bot_suspended = (await mint(suspended.id, {})).token;
  await sp.ok(owner, 'POST', `/api/admin/users/${suspended.id}/suspend`, { reason: 'matrix' });
  const hook = await sp.ok(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'M' }, 201);
  ctx.s.clock.advance(2 * 3_600_000);
  for (const a of [owner, admin, user])
    a.access = (
      await sp.ok(null, 'POST', '/api/auth/login', { username: a.username, password: a.password })
    ).access_token;
  ctx.who = { owner, admin, user };
  ctx.tokens = tokens;
  ctx.w = { ids: { c, ch, bot: bot.id, token: revoked.id, hook: hook.id, victim: victim.id } };
});
test.after(async ({ s }) => s?.close());

test('the table covers every bot, webhook, feedback, announcement and admin route the chat app answers', ({ s }) => {
  const app = createApp('chat', s.platform);
  const answered = new Set(
    app.routes
      .filter((x) => x.method !== 'ALL')
      .map((x) => `${x.method} ${x.path.replace(/:([^/]+)/g, '{$1}')}`)
      .filter(
        (x) =>
          COVERED.test(x.split(' ')[1]!) &&
          !PUBLIC.has(x) &&
          !/^\S+ \/api\/admin\/(files|storage-stats|blocked-hashes|updates)/.test(x),
      ),
  );
  const covered = new Set(ROUTES.map((x) => `${x.method} ${x.path}`));
  assert.equal([...answered].filter((x) => !covered.has(x)).sort(), []);
  assert.equal([...covered].filter((x) => !answered.has(x)).sort(), []);
});

test('every route × every principal: refusals everywhere, permitted reads', async ({ sp, w, who, tokens }) => {
  const failures: string[] = [];
  let cells = 0;
  for (const route of ROUTES) {
    for (const p of PRINCIPALS) {
      const allowed = route.allow.includes(p);
      if (allowed && route.method !== 'GET') continue;
      const headers: Record<string, string> =
        p === 'owner' || p === 'admin' || p === 'user'
          ? bearer(who[p])
          : p === 'both'
            ? { ...bearer(who.owner), 'x-bot-token': tokens.bot_default! }
            : { 'x-bot-token': tokens[p]! };
      const expected = allowed
        ? (OK_STATUS[`${route.method} ${route.path}`] ?? 200)
        : p === 'both'
          ? 400
          : p === 'bot_expired' || p === 'bot_revoked' || p === 'bot_suspended'
            ? 401
            : 403;
      const res = await http(`${sp.base}${route.at(w)}`, {
        method: route.method,
        headers,
        ...(route.method === 'GET' || route.method === 'DELETE'
          ? {}
          : { json: route.path.endsWith('/webhooks') ? { name: 'x' } : {} }),
      });
      cells += 1;
      if (res.status !== expected)
        failures.push(
          `${route.method} ${route.path} as ${p}: expected ${expected}, got ${res.status} ${res.text.slice(0, 120)}`,
        );
    }
  }
  assert.equal(failures, []);
  assert.ok(cells > 300, `${cells} cells`);
});

test.run();
