// The admin audit log records every moderation action, through real HTTP: each action done by a
// moderator or admin appears once with its actor, target, action and time; what members do to
// their own things (leaving, deleting or closing their own, renaming themselves) does not; the
// route's authorisation (instance owners and admins only; community moderators, members, bots of
// every scope and anonymous callers refused); and a rebuild of the table equals the live one.

import { upcast } from '../../../infra/eventstore/upcasters.ts';
import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { auditEntryOf } from '../../../projections/chat/admin-audit.ts';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { fileUpload } from '../../support/multipart.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { expectStatus, Spaces } from '../../support/spaces.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  owner: ChatAccount;
  mod: ChatAccount;
  ann: ChatAccount;
  bob: ChatAccount;
  cal: ChatAccount;
  cid: string;
  gid: string;
  ch: string;
}
const test = suite<Ctx>('chat admin audit: moderation actions');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_moderation_audit', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  const sp = (ctx.sp = new Spaces(ctx.s));
  ctx.owner = await sp.register('own'); // the first account: the instance owner
  ctx.mod = await sp.register('mod');
  ctx.ann = await sp.register('ann');
  ctx.bob = await sp.register('bob');
  ctx.cal = await sp.register('cal');
  ctx.cid = await sp.community(ctx.owner);
  await sp.join(ctx.cid, ctx.owner, [ctx.mod], 'moderator');
  await sp.join(ctx.cid, ctx.owner, [ctx.ann, ctx.bob, ctx.cal]);
  ctx.gid = await sp.group(ctx.owner, ctx.cid);
  ctx.ch = await sp.channel(ctx.owner, ctx.gid, [ctx.mod, ctx.ann, ctx.bob, ctx.cal]);
});
test.after(async ({ s }) => s?.close());

interface Entry {
  action: string;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, any>;
  created_at: string;
}

/** The audit entries with this action (and target), newest first, read as the instance owner. */
async function entries(sp: Spaces, owner: ChatAccount, action: string, target?: string): Promise<Entry[]> {
  const q = new URLSearchParams({ action, limit: '200', ...(target ? { user_id: target } : {}) });
  const all = (await sp.ok(owner, 'GET', `/api/admin/audit-log?${q}`)).entries as Entry[];
  return target ? all.filter((e) => e.target_id === target) : all;
}

/** Exactly one entry of `action` on `target`, by `actor`, with a time. */
async function one(
  sp: Spaces,
  owner: ChatAccount,
  action: string,
  actor: ChatAccount,
  targetType: string,
  target: string,
): Promise<Entry> {
  const found = await entries(sp, owner, action, target);
  assert.is(found.length, 1, `${action} on ${target}: ${JSON.stringify(found)}`);
  const e = found[0]!;
  assert.equal([e.action, e.actor_id, e.target_type, e.target_id], [action, actor.id, targetType, target]);
  assert.ok(Number.isFinite(Date.parse(e.created_at)), e.created_at);
  return e;
}

async function none(sp: Spaces, owner: ChatAccount, target: string): Promise<void> {
  const q = new URLSearchParams({ user_id: target, limit: '200' });
  const found = ((await sp.ok(owner, 'GET', `/api/admin/audit-log?${q}`)).entries as Entry[]).filter(
    (e) => e.target_id === target,
  );
  assert.equal(found, [], `no entry expected on ${target}`);
}

test('message deletions by a moderator are audited; the sender deleting their own is not', async ({
  sp,
  owner,
  mod,
  ann,
  ch,
}) => {
  const m1 = await sp.post(ann, ch, 'rude');
  await sp.ok(mod, 'DELETE', `/api/channels/${ch}/messages/${m1.id}`, undefined, 204);
  const e = await one(sp, owner, 'message_deleted', mod, 'message', m1.id);
  assert.equal([e.details.channel_id, e.details.sender_id, e.details.by], [ch, ann.id, mod.id]);
  assert.not.ok(JSON.stringify(e).includes('rude'));
  const m2 = await sp.post(ann, ch, 'oops');
  await sp.ok(ann, 'DELETE', `/api/channels/${ch}/messages/${m2.id}`, undefined, 204);
  await none(sp, owner, m2.id);
});

test('channel kicks, bans, unbans, role and ownership changes; a member leaving is not audited', async ({
  sp,
  owner,
  mod,
  ann,
  bob,
  cal,
  gid,
}) => {
  const ch = await sp.channel(owner, gid, [mod, ann, bob, cal], 'moderated');
  await sp.ok(mod, 'POST', `/api/channels/${ch}/members/${bob.id}/kick`, undefined, 204);
  const kicked = await one(sp, owner, 'channel_member_kicked', mod, 'user', bob.id);
  assert.is(kicked.details.channel_id, ch);
  // A ban of a member is one entry (the ban), not a kick as well.
  await sp.ok(mod, 'POST', `/api/channels/${ch}/members/${cal.id}/ban`, undefined, 204);
  assert.is((await one(sp, owner, 'channel_member_banned', mod, 'user', cal.id)).details.channel_id, ch);
  assert.equal(await entries(sp, owner, 'channel_member_kicked', cal.id), []);
  await sp.ok(mod, 'POST', `/api/channels/${ch}/members/${cal.id}/unban`, undefined, 204);
  await one(sp, owner, 'channel_member_unbanned', mod, 'user', cal.id);
  await sp.ok(owner, 'PATCH', `/api/channels/${ch}/members/${ann.id}/role`, { role: 'moderator' });
  assert.is((await one(sp, owner, 'channel_member_role_changed', owner, 'user', ann.id)).details.role, 'moderator');
  await sp.ok(owner, 'POST', `/api/channels/${ch}/transfer-ownership`, { user_id: mod.id });
  assert.equal((await one(sp, owner, 'channel_ownership_transferred', owner, 'user', mod.id)).details.from, owner.id);
  // Leaving on one's own: nothing.
  await sp.ok(ann, 'POST', `/api/channels/${ch}/leave`, undefined, 204);
  assert.equal((await entries(sp, owner, 'channel_member_kicked', ann.id)).length, 0);
  assert.equal((await sp.ok(owner, 'GET', '/api/admin/audit-log?action=channel_member_departed')).total, 0);
});

test('channel settings (archive, read-only, slow mode), pins and unpins, channel and group deletion', async ({
  sp,
  owner,
  mod,
  ann,
  gid,
  cid,
}) => {
  const ch = await sp.channel(owner, gid, [mod, ann], 'settings');
  await sp.ok(owner, 'PATCH', `/api/channels/${ch}/members/${mod.id}/role`, { role: 'moderator' });
  for (const changes of [{ archived: true }, { archived: false }, { read_only: true }, { slow_mode_secs: 30 }])
    await sp.ok(mod, 'PATCH', `/api/channels/${ch}`, changes);
  const updates = await entries(sp, owner, 'channel_updated', ch);
  assert.equal(updates.map((e) => [e.actor_id, e.target_type, e.details.changes]).reverse(), [
    [mod.id, 'channel', { archived: true }],
    [mod.id, 'channel', { archived: false }],
    [mod.id, 'channel', { read_only: true }],
    [mod.id, 'channel', { slow_mode_secs: 30 }],
  ]);
  await sp.ok(mod, 'PATCH', `/api/channels/${ch}`, { read_only: false, slow_mode_secs: 0 });
  const m = await sp.post(ann, ch, 'pin me');
  await sp.ok(mod, 'POST', `/api/channels/${ch}/pins/${m.id}`, undefined, 204);
  assert.is((await one(sp, owner, 'message_pinned', mod, 'message', m.id)).details.channel_id, ch);
  await sp.ok(mod, 'DELETE', `/api/channels/${ch}/pins/${m.id}`, undefined, 204);
  await one(sp, owner, 'message_unpinned', mod, 'message', m.id);
  await sp.ok(owner, 'DELETE', `/api/groups/${gid}/channels/${ch}`, undefined, 204);
  await one(sp, owner, 'channel_deleted', owner, 'channel', ch);
  const doomed = await sp.group(owner, cid, 'public', 'Doomed');
  await sp.ok(owner, 'DELETE', `/api/groups/${doomed}`, undefined, 204);
  await one(sp, owner, 'group_deleted', owner, 'group', doomed);
});

test('community kicks, bans and unbans, roles, nicknames set by a moderator, timeouts, warnings, ownership, deletion', async ({
  sp,
  owner,
  mod,
  ann,
  bob,
  cal,
  cid,
  ch,
}) => {
  await sp.ok(mod, 'DELETE', `/api/communities/${cid}/members/${bob.id}`, undefined, 204);
  assert.is((await one(sp, owner, 'community_member_kicked', mod, 'user', bob.id)).details.community_id, cid);
  await sp.join(cid, owner, [bob]);
  await sp.ok(mod, 'POST', `/api/communities/${cid}/bans/${cal.id}`, { reason: 'spam' }, 204);
  const ban = await one(sp, owner, 'community_member_banned', mod, 'user', cal.id);
  assert.equal([ban.details.community_id, ban.details.reason], [cid, 'spam']);
  assert.equal(await entries(sp, owner, 'community_member_kicked', cal.id), []);
  await sp.ok(mod, 'DELETE', `/api/communities/${cid}/bans/${cal.id}`, undefined, 204);
  await one(sp, owner, 'community_member_unbanned', mod, 'user', cal.id);
  await sp.join(cid, owner, [cal]);
  await sp.ok(owner, 'PUT', `/api/communities/${cid}/members/${ann.id}/role`, { role: 'moderator' });
  assert.is((await one(sp, owner, 'community_member_role_changed', owner, 'user', ann.id)).details.role, 'moderator');
  await sp.ok(owner, 'PUT', `/api/communities/${cid}/members/${ann.id}/role`, { role: 'member' });
  assert.equal(
    (await entries(sp, owner, 'community_member_role_changed', ann.id)).map((e) => e.details.role),
    ['member', 'moderator'],
  );
  await sp.ok(mod, 'PUT', `/api/communities/${cid}/members/${bob.id}/nickname`, { nickname: 'Be Nice' });
  assert.is(
    (await one(sp, owner, 'community_member_nickname_changed', mod, 'user', bob.id)).details.nickname,
    'Be Nice',
  );
  await sp.ok(ann, 'PUT', `/api/communities/${cid}/members/${ann.id}/nickname`, { nickname: 'Annie' });
  assert.equal(await entries(sp, owner, 'community_member_nickname_changed', ann.id), []);
  // Mutes (channel timeouts) and warnings.
  await sp.ok(mod, 'POST', `/api/communities/${cid}/channels/${ch}/timeout`, {
    user_id: bob.id,
    duration_secs: 600,
    reason: 'cool off',
  });
  assert.equal((await one(sp, owner, 'community_timeout_imposed', mod, 'user', bob.id)).details.channel_id, ch);
  await sp.ok(mod, 'DELETE', `/api/communities/${cid}/channels/${ch}/timeout/${bob.id}`, undefined, 204);
  await one(sp, owner, 'community_timeout_lifted', mod, 'user', bob.id);
  await sp.ok(mod, 'POST', `/api/communities/${cid}/channels/${ch}/warn`, { user_id: bob.id, reason: 'language' }, 201);
  assert.is((await one(sp, owner, 'community_member_warned', mod, 'user', bob.id)).details.reason, 'language');
  // Ownership and deletion, on a community of their own.
  const other = await sp.community(owner, 'Other');
  await sp.join(other, owner, [ann]);
  await sp.ok(owner, 'POST', `/api/communities/${other}/transfer-ownership`, { user_id: ann.id });
  await one(sp, owner, 'community_ownership_transferred', owner, 'user', ann.id);
  await sp.ok(ann, 'DELETE', `/api/communities/${other}`, undefined, 204);
  await one(sp, owner, 'community_deleted', ann, 'community', other);
  // Leaving on one's own: nothing.
  await sp.ok(cal, 'POST', `/api/communities/${cid}/leave`, undefined, 204);
  assert.equal(await entries(sp, owner, 'community_member_kicked', cal.id), []);
});

test('a poll closed by a moderator is audited; closed by its creator it is not', async ({
  sp,
  owner,
  mod,
  ann,
  ch,
}) => {
  const p1 = await sp.ok(ann, 'POST', `/api/channels/${ch}/polls`, { question: 'Lunch?', options: ['yes', 'no'] }, 201);
  await sp.ok(mod, 'POST', `/api/polls/${p1.id}/close`);
  assert.equal((await one(sp, owner, 'poll_closed', mod, 'poll', p1.id)).details.creator_id, ann.id);
  const p2 = await sp.ok(
    ann,
    'POST',
    `/api/channels/${ch}/polls`,
    { question: 'Dinner?', options: ['yes', 'no'] },
    201,
  );
  await sp.ok(ann, 'POST', `/api/polls/${p2.id}/close`);
  await none(sp, owner, p2.id);
});

test('admin file actions, blocked hashes, bots joined to and removed from communities', async ({
  s,
  sp,
  owner,
  ann,
  ch,
  cid,
}) => {
  const up = expectStatus(
    await http(`${s.chat}/api/files/upload`, fileUpload(ann, 'audit me', { fields: { channel_id: ch } })),
    201,
  ).body;
  await sp.ok(owner, 'POST', `/api/admin/files/${up.id}/quarantine`, { reason: 'check' });
  await one(sp, owner, 'file_quarantined', owner, 'file', up.id);
  await sp.ok(owner, 'POST', `/api/admin/files/${up.id}/unquarantine`);
  await one(sp, owner, 'file_unquarantined', owner, 'file', up.id);
  await sp.ok(owner, 'DELETE', `/api/admin/files/${up.id}`, undefined, 204);
  await one(sp, owner, 'file_deleted', owner, 'file', up.id);
  // Deleting one's own file is not an admin action.
  const own = expectStatus(
    await http(`${s.chat}/api/files/upload`, fileUpload(ann, 'mine', { fields: { channel_id: ch } })),
    201,
  ).body;
  await sp.ok(ann, 'DELETE', `/api/files/${own.id}`, undefined, 204);
  await none(sp, owner, own.id);
  const sha256 = createHash('sha256').update('forbidden bytes').digest('hex');
  const blocked = await sp.ok(owner, 'POST', '/api/admin/blocked-hashes', { sha256, reason: 'known bad' }, 201);
  assert.is((await one(sp, owner, 'hash_blocked', owner, 'blocked_hash', blocked.id)).details.sha256, sha256);
  await sp.ok(owner, 'DELETE', `/api/admin/blocked-hashes/${blocked.id}`, undefined, 204);
  await one(sp, owner, 'hash_unblocked', owner, 'blocked_hash', blocked.id);
  const bot = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'audit_bot' }, 201);
  await sp.ok(owner, 'POST', `/api/admin/bots/${bot.id}/communities`, { community_id: cid, role: 'member' });
  assert.is((await one(sp, owner, 'community_member_added', owner, 'user', bot.id)).details.community_id, cid);
  await sp.ok(owner, 'DELETE', `/api/admin/bots/${bot.id}/communities/${cid}`, undefined, 204);
  await one(sp, owner, 'community_member_kicked', owner, 'user', bot.id);
});

test('the audit route: instance owners and admins only; moderators, members, bots of every scope and anonymous callers refused', async ({
  sp,
  owner,
  mod,
  ann,
}) => {
  expectError(await sp.call(null, 'GET', '/api/admin/audit-log'), 401);
  expectError(await sp.call(mod, 'GET', '/api/admin/audit-log'), 403);
  expectError(await sp.call(ann, 'GET', '/api/admin/audit-log'), 403);
  const bot = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'audit_reader' }, 201);
  for (const scope of ['default', 'metrics', 'bot:provision']) {
    const token = (await sp.ok(owner, 'POST', `/api/admin/bots/${bot.id}/tokens`, { scope }, 201)).token;
    expectError(await http(`${sp.base}/api/admin/audit-log`, { headers: { 'x-bot-token': token } }), 403);
  }
  expectError(await sp.call(owner, 'GET', `/api/admin/audit-log?action=${'x'.repeat(65)}`), 400);
  await sp.ok(owner, 'PUT', `/api/admin/users/${ann.id}/admin`, { is_admin: true });
  const page = await sp.ok(ann, 'GET', '/api/admin/audit-log?limit=2&offset=1');
  assert.is(page.entries.length, 2);
  assert.ok(page.total > 3);
  // Filters: by action, and by user as actor or target; newest first.
  const granted = await sp.ok(ann, 'GET', `/api/admin/audit-log?action=admin_role_changed&user_id=${ann.id}`);
  assert.equal(
    granted.entries.map((e: Entry) => [e.actor_id, e.target_id, e.details.is_admin]),
    [[owner.id, ann.id, true]],
  );
  const byMod = (await sp.ok(ann, 'GET', `/api/admin/audit-log?user_id=${mod.id}&limit=200`)).entries as Entry[];
  assert.ok(byMod.length > 5 && byMod.every((e) => e.actor_id === mod.id || e.target_id === mod.id));
  const times = byMod.map((e) => Date.parse(e.created_at));
  assert.equal(
    times,
    [...times].sort((a, b) => b - a),
  );
  await sp.ok(owner, 'PUT', `/api/admin/users/${ann.id}/admin`, { is_admin: false });
  expectError(await sp.call(ann, 'GET', '/api/admin/audit-log'), 403);
});

test("events that cannot tell a moderator from the owner, and the other service's updates, stay out", () => {
  const base = {
    id: 'e',
    stream: 's',
    revision: 0n,
    position: { commit: 1n, prepare: 1n },
    metadata: {},
    created_at: new Date(),
  } as const;
  const at = '2026-01-01T00:00:00.000Z';
  // A version 1 deletion (before it carried the sender), as the engine hands it over: upcast, sender unknown.
  assert.is(
    auditEntryOf(
      upcast({
        ...base,
        type: 'MessageDeleted',
        data: { message_id: 'm', channel_id: 'c', by: 'u', at },
        metadata: { schema: 1 },
      } as never) as never,
    ),
    null,
  );
  assert.equal(
    auditEntryOf({
      ...base,
      type: 'MessageDeleted',
      data: { message_id: 'm', channel_id: 'c', by: 'u', sender_id: 'v', at },
    } as never)?.action,
    'message_deleted',
  );
  const apply = (service: string) =>
    auditEntryOf({
      ...base,
      type: 'UpdateApplyRequested',
      data: {
        action: 'update_applied',
        apply_id: 'a',
        service,
        target_version: '1',
        from_version: '0',
        requested_by: 'u',
        at,
      },
    } as never);
  assert.equal(apply('chat'), { action: 'update_applied', target: ['update', 'a'] });
  assert.is(apply('orch'), null);
  assert.is(
    auditEntryOf({
      ...base,
      type: 'PollClosed',
      data: {
        poll_id: 'p',
        channel_id: 'c',
        closed_by: null,
        creator_id: 'u',
        reason: 'expired',
        results: [],
        voters: 0,
        at,
      },
    } as never),
    null,
  );
  assert.is(
    auditEntryOf(
      upcast({
        ...base,
        type: 'PollClosed',
        data: { poll_id: 'p', channel_id: 'c', closed_by: 'v', reason: 'closed', results: [], voters: 0, at },
        metadata: { schema: 1 },
      } as never) as never,
    ),
    null,
  );
});

test('a rebuilt audit log equals the live one', async ({ s }) => {
  const snapshot = async () =>
    (await s.db.pool.query('SELECT * FROM chat_admin_audit ORDER BY log_commit, log_prepare')).rows.map((r) =>
      JSON.stringify(r),
    );
  const live = await snapshot();
  assert.ok(live.length > 30, String(live.length));
  await s.platform.engine.stop();
  assert.ok((await s.platform.engine.rebuild('chat_admin_audit')) > 0);
  assert.equal(await snapshot(), live);
});

test.run();
