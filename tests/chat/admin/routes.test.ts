// The admin surface through real HTTP: users (search and paging, suspend with immediate effect on
// tokens, sessions and bots, unsuspend, admin grant and revoke, password reset, delete), purges,
// message quarantine, the audit log, reports, announcements; and rebuilt read models equal the
// live ones.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { startChannelWorld, stopChannelWorld, type World } from '../../support/channel-world.ts';
import { http } from '../../support/services.ts';
import { expectStatus, Spaces } from '../../support/spaces.ts';

// Three accounts only: the user listing counts them.
type Ctx = World<'absent'>;
const test = suite<Ctx>('chat admin surface');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_admin', { out: 'absent' }));
});
test.after((ctx) => stopChannelWorld(ctx));

const bot = (sp: Spaces, token: string, method: string, path: string, json?: unknown) =>
  http(`${sp.base}${path}`, { method, headers: { 'x-bot-token': token }, ...(json !== undefined ? { json } : {}) });

test('users: list and search with paging; non-admins and bots 403', async ({ sp, owner, ann }) => {
  expectError(await sp.call(ann, 'GET', '/api/admin/users'), 403);
  const all = await sp.ok(owner, 'GET', '/api/admin/users?limit=2');
  assert.is(all.total, 3);
  assert.is(all.users.length, 2);
  assert.is((await sp.ok(owner, 'GET', '/api/admin/users?limit=2&page=2')).users.length, 1);
  const found = await sp.ok(owner, 'GET', `/api/admin/users?q=${ann.username.slice(0, 6)}`);
  assert.equal(
    found.users.map((u: { id: string }) => u.id),
    [ann.id],
  );
  const b = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'adm_probe' }, 201);
  const token = (await sp.ok(owner, 'POST', `/api/admin/bots/${b.id}/tokens`, {}, 201)).token;
  expectError(await bot(sp, token, 'GET', '/api/admin/users'), 403);
});

test('suspend: refused at once (requests, refresh, login, the bots it created); unsuspend; owner protected', async ({
  sp,
  owner,
  ann,
  bob,
}) => {
  await sp.ok(owner, 'PUT', `/api/admin/users/${ann.id}/admin`, { is_admin: true });
  const annBot = await sp.ok(ann, 'POST', '/api/admin/bots', { username: 'anns_bot' }, 201);
  const annBotToken = (await sp.ok(ann, 'POST', `/api/admin/bots/${annBot.id}/tokens`, {}, 201)).token;
  expectStatus(await bot(sp, annBotToken, 'GET', '/api/communities'), 200);
  expectError(await sp.call(owner, 'POST', `/api/admin/users/${bob.id}/suspend`, {}), 400);
  const suspended = await sp.ok(owner, 'POST', `/api/admin/users/${ann.id}/suspend`, { reason: 'spam' });
  assert.is(suspended.suspended, true);
  assert.is(suspended.suspend_reason, 'spam');
  expectError(await sp.call(ann, 'GET', '/api/communities'), 401);
  expectError(await sp.call(null, 'POST', '/api/auth/refresh', { refresh_token: ann.refresh }), 401);
  expectError(await sp.call(null, 'POST', '/api/auth/login', { username: ann.username, password: ann.password }), 403);
  expectError(await bot(sp, annBotToken, 'GET', '/api/communities'), 401);
  // The bot itself suspended: its tokens are refused too.
  const b2 = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'solo_bot' }, 201);
  const t2 = (await sp.ok(owner, 'POST', `/api/admin/bots/${b2.id}/tokens`, {}, 201)).token;
  await sp.ok(owner, 'POST', `/api/admin/users/${b2.id}/suspend`, { reason: 'noisy' });
  expectError(await bot(sp, t2, 'GET', '/api/communities'), 401);
  await sp.ok(owner, 'POST', `/api/admin/users/${ann.id}/unsuspend`);
  expectStatus(await bot(sp, annBotToken, 'GET', '/api/communities'), 200);
  ann.access = (
    await sp.ok(null, 'POST', '/api/auth/login', { username: ann.username, password: ann.password })
  ).access_token;
  expectStatus(await sp.call(ann, 'GET', '/api/communities'), 200);
  // Owner protected; unknown 404; an admin cannot act on themselves here.
  expectError(await sp.call(ann, 'POST', `/api/admin/users/${owner.id}/suspend`, { reason: 'x' }), 403);
  expectError(await sp.call(ann, 'PUT', `/api/admin/users/${owner.id}/admin`, { is_admin: false }), 403);
  expectError(
    await sp.call(owner, 'POST', '/api/admin/users/00000000-0000-4000-8000-000000000000/suspend', { reason: 'x' }),
    404,
  );
  expectError(await sp.call(owner, 'POST', `/api/admin/users/${owner.id}/suspend`, { reason: 'x' }), 403);
});

test('admin grant and revoke take effect on the next request; bots cannot be admins', async ({
  sp,
  owner,
  ann,
  bob,
}) => {
  expectError(await sp.call(bob, 'GET', '/api/admin/users'), 403);
  await sp.ok(owner, 'PUT', `/api/admin/users/${bob.id}/admin`, { is_admin: true });
  expectStatus(await sp.call(bob, 'GET', '/api/admin/users'), 200);
  await sp.ok(ann, 'PUT', `/api/admin/users/${bob.id}/admin`, { is_admin: false });
  expectError(await sp.call(bob, 'GET', '/api/admin/users'), 403);
  const b = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'not_admin_bot' }, 201);
  expectError(await sp.call(owner, 'PUT', `/api/admin/users/${b.id}/admin`, { is_admin: true }), 400);
  expectError(
    await sp.call(owner, 'PUT', `/api/admin/users/${b.id}/password`, { new_password: 'long-enough-password' }),
    400,
  );
});

test('password reset ends the sessions; the new password logs in', async ({ s, sp, owner, bob }) => {
  expectError(await sp.call(owner, 'PUT', `/api/admin/users/${bob.id}/password`, { new_password: 'short' }), 400);
  await sp.ok(owner, 'PUT', `/api/admin/users/${bob.id}/password`, { new_password: 'a-brand-new-password' }, 204);
  expectError(await sp.call(bob, 'GET', '/api/communities'), 401);
  expectError(await sp.call(null, 'POST', '/api/auth/login', { username: bob.username, password: bob.password }), 401);
  bob.password = 'a-brand-new-password';
  bob.access = (
    await sp.ok(null, 'POST', '/api/auth/login', { username: bob.username, password: bob.password })
  ).access_token;
});

test('quarantine hides a message from every reader until released; purges hard-delete', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  chid: ch,
  cid,
}) => {
  const m1 = await sp.post(ann, ch, 'first');
  const m2 = await sp.post(bob, ch, 'second');
  const m3 = await sp.post(bob, ch, 'third');
  expectError(await sp.call(bob, 'POST', `/api/admin/messages/${m1.id}/quarantine`), 403);
  await sp.ok(owner, 'POST', `/api/admin/messages/${m1.id}/quarantine`, { reason: 'review' });
  let ids = (await sp.ok(bob, 'GET', `/api/channels/${ch}/messages`)).messages.map((m: { id: string }) => m.id);
  assert.not.ok(ids.includes(m1.id));
  expectError(await sp.call(bob, 'GET', `/api/channels/${ch}/threads/${m1.id}`), 404);
  await sp.ok(owner, 'POST', `/api/admin/messages/${m1.id}/unquarantine`);
  ids = (await sp.ok(bob, 'GET', `/api/channels/${ch}/messages`)).messages.map((m: { id: string }) => m.id);
  assert.ok(ids.includes(m1.id));
  expectError(await sp.call(owner, 'POST', '/api/admin/messages/00000000-0000-4000-8000-000000000000/quarantine'), 404);
  // Purge one message, then a user's messages.
  assert.is((await sp.ok(owner, 'POST', `/api/admin/purge/message/${m1.id}`)).messages_purged, 1);
  expectError(await sp.call(owner, 'POST', `/api/admin/purge/message/${m1.id}`), 404);
  assert.is((await sp.ok(owner, 'POST', `/api/admin/purge/user/${bob.id}/messages`)).messages_purged, 2);
  const rows = await s.db.pool.query('SELECT count(*)::int AS n FROM chat_messages WHERE id = ANY($1::uuid[])', [
    [m1.id, m2.id, m3.id],
  ]);
  assert.is(rows.rows[0].n, 0);
  // Purge the channel.
  const g = await sp.group(owner, cid, 'public', 'Doomed');
  const doomed = await sp.channel(owner, g, [ann]);
  await sp.post(ann, doomed, 'gone soon');
  assert.is((await sp.ok(owner, 'POST', `/api/admin/purge/channel/${doomed}`)).messages_purged, 1);
  expectError(await sp.call(ann, 'GET', `/api/channels/${doomed}`), 404);
  expectError(await sp.call(owner, 'POST', `/api/admin/purge/channel/${doomed}`), 404);
  // The Purged events keep no content.
  const purged = await s.db.pool.query(`SELECT data::text AS d FROM events WHERE type = 'Purged'`);
  assert.is(purged.rows.length, 3);
  assert.ok(purged.rows.every((r: { d: string }) => !r.d.includes('first') && !r.d.includes('gone soon')));
});

test('reports: list, review as resolved or dismissed (ann is an admin by now, bob not)', async ({
  sp,
  owner,
  ann,
  bob,
}) => {
  await sp.ok(ann, 'POST', '/api/reports', { target_type: 'user', target_id: bob.id, reason: 'rude' }, 201);
  const open = await sp.ok(owner, 'GET', '/api/admin/reports?status=open');
  assert.is(open.reports.length, 1);
  const id = open.reports[0].id;
  expectError(await sp.call(owner, 'POST', `/api/admin/reports/${id}/review`, { status: 'open' }), 400);
  expectError(await sp.call(bob, 'POST', `/api/admin/reports/${id}/review`, { status: 'resolved' }), 403);
  const reviewed = await sp.ok(owner, 'POST', `/api/admin/reports/${id}/review`, {
    status: 'dismissed',
    note: 'banter',
  });
  assert.is(reviewed.status, 'dismissed');
  assert.is(reviewed.reviewed_by, owner.id);
  assert.is((await sp.ok(owner, 'GET', '/api/admin/reports?status=open')).reports.length, 0);
  expectError(
    await sp.call(owner, 'POST', '/api/admin/reports/00000000-0000-4000-8000-000000000000/review', {
      status: 'resolved',
    }),
    404,
  );
});

test('announcements: admins publish; users list and dismiss; expired ones drop out', async ({
  s,
  sp,
  owner,
  ann,
  bob,
}) => {
  expectError(await sp.call(bob, 'POST', '/api/admin/announcements', { title: 't', body: 'b' }), 403);
  const a = await sp.ok(owner, 'POST', '/api/admin/announcements', { title: 'Maintenance', body: 'Sunday 02:00' }, 201);
  await sp.ok(
    owner,
    'POST',
    '/api/admin/announcements',
    { title: 'Soon gone', body: 'x', expires_at: new Date(s.clock.now().getTime() + 60_000).toISOString() },
    201,
  );
  assert.is((await sp.ok(ann, 'GET', '/api/announcements')).announcements.length, 2);
  await sp.ok(ann, 'POST', `/api/announcements/${a.id}/dismiss`, undefined, 204);
  await sp.ok(ann, 'POST', `/api/announcements/${a.id}/dismiss`, undefined, 204);
  assert.equal(
    (await sp.ok(ann, 'GET', '/api/announcements')).announcements.map((x: { title: string }) => x.title),
    ['Soon gone'],
  );
  s.clock.advance(61_000);
  ann.access = (
    await sp.ok(null, 'POST', '/api/auth/login', { username: ann.username, password: ann.password })
  ).access_token;
  assert.equal((await sp.ok(ann, 'GET', '/api/announcements')).announcements, []);
  expectError(await sp.call(ann, 'POST', '/api/announcements/00000000-0000-4000-8000-000000000000/dismiss'), 404);
  assert.is((await sp.ok(await relog(sp, owner), 'GET', '/api/admin/announcements')).announcements.length, 2);
});

async function relog(sp: Spaces, a: ChatAccount): Promise<ChatAccount> {
  a.access = (
    await sp.ok(null, 'POST', '/api/auth/login', { username: a.username, password: a.password })
  ).access_token;
  return a;
}

test('audit log: every admin action, filtered by action and user, no secrets', async ({ s, sp, owner, ann, bob }) => {
  await relog(sp, owner);
  const all = await sp.ok(owner, 'GET', '/api/admin/audit-log?limit=200');
  const actions = new Set(all.entries.map((e: { action: string }) => e.action));
  for (const a of [
    'user_suspended',
    'user_unsuspended',
    'admin_role_changed',
    'password_replaced',
    'purged',
    'message_quarantined',
    'message_unquarantined',
    'report_reviewed',
    'announcement_published',
    'bot_registered',
    'bot_token_minted',
  ]) {
    assert.ok(actions.has(a), a);
  }
  const suspensions = await sp.ok(owner, 'GET', `/api/admin/audit-log?action=user_suspended&user_id=${ann.id}`);
  assert.is(suspensions.total, 1);
  assert.is(suspensions.entries[0].actor_id, owner.id);
  assert.is(suspensions.entries[0].details.reason, 'spam');
  assert.not.ok(JSON.stringify(all).includes('scrypt$'));
  assert.not.ok(JSON.stringify(all).includes('token_hash'));
  expectError(await sp.call(bob, 'GET', '/api/admin/audit-log'), 403);
  void s;
});

test('rebuilt read models equal the live ones', async ({ s }) => {
  const tables = [
    'chat_users',
    'chat_bot_tokens',
    'chat_bot_token_usage',
    'chat_messages',
    'chat_message_versions',
    'chat_channels',
    'chat_reports',
    'chat_admin_audit',
    'chat_announcements',
    'chat_announcement_dismissals',
  ];
  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(
        tables.map(async (t) => [
          t,
          (await s.db.pool.query(`SELECT * FROM ${t}`)).rows.map((r) => JSON.stringify(r)).sort(),
        ]),
      ),
    );
  const live = await snapshot();
  await s.platform.engine.stop();
  for (const name of [
    'chat_users',
    'chat_bot_tokens',
    'chat_bot_token_usage',
    'chat_messages',
    'chat_channels',
    'chat_reports',
    'chat_admin_audit',
    'chat_announcements',
  ]) {
    assert.ok((await s.platform.engine.rebuild(name)) > 0, name);
  }
  assert.equal(await snapshot(), live);
});

test.run();
