// Communities through real HTTP: creation rights, settings, ownership, members, role rules,
// invites (grants_role rules, max_uses, expiry, redaction), bans, kicks, timeouts, warnings.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { startSpaces } from '../../support/channel-world.ts';
import type { TestServices } from '../../support/services.ts';
import type { Spaces } from '../../support/spaces.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  owner: ChatAccount;
  ann: ChatAccount;
  bob: ChatAccount;
  cat: ChatAccount;
  dan: ChatAccount;
}
const test = suite<Ctx>('chat communities');
test.before(async (ctx) => {
  Object.assign(ctx, await startSpaces('chat_communities'));
  ctx.owner = await ctx.sp.register('own');
  ctx.ann = await ctx.sp.register('ann');
  ctx.bob = await ctx.sp.register('bob');
  ctx.cat = await ctx.sp.register('cat');
  ctx.dan = await ctx.sp.register('dan');
});
test.after(async ({ s }) => s?.close());

test('creation: instance admins only by default (403 for others); non-discoverable; the creator owns it', async ({
  s,
  sp,
  owner,
  ann,
}) => {
  expectError(await sp.call(ann, 'POST', '/api/communities', { name: 'Mine' }), 403);
  expectError(await sp.call(null, 'POST', '/api/communities', { name: 'Mine' }), 401);
  expectError(await sp.call(owner, 'POST', '/api/communities', { name: '' }), 400);
  expectError(await sp.call(owner, 'POST', '/api/communities', { name: 'x', extra: 1 }), 400);
  const created = await sp.ok(owner, 'POST', '/api/communities', { name: 'Garden', description: 'plants' }, 201);
  assert.is(created.discoverable, false);
  assert.is(created.my_role, 'owner');
  assert.is(created.owner_id, owner.id);
  assert.is(created.member_count, 1);
  const list = await sp.ok(owner, 'GET', '/api/communities');
  assert.ok(list.communities.some((c: { id: string }) => c.id === created.id));
  assert.equal((await sp.ok(ann, 'GET', '/api/communities')).communities, []);
  expectError(await sp.call(ann, 'GET', `/api/communities/${created.id}`), 403);
  expectError(await sp.call(ann, 'GET', '/api/communities/00000000-0000-4000-8000-000000000000'), 404);
  expectError(await sp.call(ann, 'GET', '/api/communities/nope'), 404);
  // Open creation.
  await s.restart({ CHATSVC_COMMUNITY_CREATION: 'open' });
  assert.is((await sp.ok(ann, 'POST', '/api/communities', { name: "Ann's" }, 201)).my_role, 'owner');
  await s.restart({ CHATSVC_COMMUNITY_CREATION: undefined });
});

test('invites: grants_role rules by role; max_uses; expiry; revoked; redacted info; banned users cannot rejoin', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  cat,
  dan,
}) => {
  const cid = await sp.community(owner);
  // The owner mints an admin-grant invite; ann accepts and is admin.
  const adminInvite = await sp.ok(owner, 'POST', `/api/communities/${cid}/invites`, { grants_role: 'admin' }, 201);
  assert.match(adminInvite.code, /^ci_/);
  const info = await sp.ok(ann, 'GET', `/api/community-invites/${adminInvite.code}`);
  assert.is(info.name, null, 'a non-discoverable community is redacted');
  assert.is(info.description, null);
  assert.is(info.grants_role, 'admin');
  assert.is((await sp.ok(ann, 'POST', `/api/community-invites/${adminInvite.code}/accept`)).my_role, 'admin');
  // An admin cannot mint admin-grant invites but can mint moderator-grant ones.
  expectError(await sp.call(ann, 'POST', `/api/communities/${cid}/invites`, { grants_role: 'admin' }), 403);
  const modInvite = await sp.ok(
    ann,
    'POST',
    `/api/communities/${cid}/invites`,
    { grants_role: 'moderator', max_uses: 1 },
    201,
  );
  assert.is((await sp.ok(bob, 'POST', `/api/community-invites/${modInvite.code}/accept`)).my_role, 'moderator');
  // Used up.
  expectError(await sp.call(cat, 'GET', `/api/community-invites/${modInvite.code}`), 404);
  expectError(await sp.call(cat, 'POST', `/api/community-invites/${modInvite.code}/accept`), 404);
  // A moderator mints plain invites, not role-granting ones.
  expectError(await sp.call(bob, 'POST', `/api/communities/${cid}/invites`, { grants_role: 'moderator' }), 403);
  const plain = await sp.ok(
    bob,
    'POST',
    `/api/communities/${cid}/invites`,
    { expires_at: new Date(s.clock.now().getTime() + 60_000).toISOString() },
    201,
  );
  // A member cannot mint invites or list them.
  await sp.ok(cat, 'POST', `/api/community-invites/${plain.code}/accept`);
  expectError(await sp.call(cat, 'POST', `/api/communities/${cid}/invites`, {}), 403);
  expectError(await sp.call(cat, 'GET', `/api/communities/${cid}/invites`), 403);
  const listed = await sp.ok(bob, 'GET', `/api/communities/${cid}/invites`);
  assert.ok(listed.invites.some((i: { code: string; uses: number }) => i.code === plain.code && i.uses === 1));
  // Expiry.
  s.clock.advance(61_000);
  expectError(await sp.call(dan, 'POST', `/api/community-invites/${plain.code}/accept`), 404);
  expectError(
    await sp.call(owner, 'POST', `/api/communities/${cid}/invites`, { expires_at: '2000-01-01T00:00:00Z' }),
    400,
  );
  // Revocation: a moderator cannot revoke the admin's moderator-grant invite; the admin can.
  const another = await sp.ok(ann, 'POST', `/api/communities/${cid}/invites`, { grants_role: 'moderator' }, 201);
  expectError(await sp.call(bob, 'DELETE', `/api/communities/${cid}/invites/${another.id}`), 403);
  assert.is((await sp.call(ann, 'DELETE', `/api/communities/${cid}/invites/${another.id}`)).status, 204);
  expectError(await sp.call(dan, 'POST', `/api/community-invites/${another.code}/accept`), 404);
  expectError(
    await sp.call(ann, 'DELETE', `/api/communities/${cid}/invites/00000000-0000-4000-8000-000000000000`),
    404,
  );
  // Discoverable: name shown.
  await sp.ok(owner, 'PATCH', `/api/communities/${cid}`, { discoverable: true });
  const open = await sp.ok(owner, 'POST', `/api/communities/${cid}/invites`, {}, 201);
  assert.is((await sp.ok(dan, 'GET', `/api/community-invites/${open.code}`)).name, 'Garden');
  // A banned user cannot rejoin through any invite; accepting twice is harmless.
  assert.is((await sp.call(bob, 'POST', `/api/communities/${cid}/bans/${dan.id}`, { reason: 'spam' })).status, 204);
  expectError(await sp.call(dan, 'POST', `/api/community-invites/${open.code}/accept`), 403);
  const bans = await sp.ok(bob, 'GET', `/api/communities/${cid}/bans`);
  assert.equal(
    bans.bans.map((b: { user_id: string; reason: string }) => [b.user_id, b.reason]),
    [[dan.id, 'spam']],
  );
  expectError(await sp.call(cat, 'GET', `/api/communities/${cid}/bans`), 403);
  assert.is((await sp.call(bob, 'DELETE', `/api/communities/${cid}/bans/${dan.id}`)).status, 204);
  await sp.ok(dan, 'POST', `/api/community-invites/${open.code}/accept`);
  await sp.ok(dan, 'POST', `/api/community-invites/${open.code}/accept`);
  assert.is((await sp.ok(owner, 'GET', `/api/communities/${cid}`)).member_count, 5);
});

test('roles: owner sets any role below owner; admin sets moderator/member; nobody changes someone at or above them', async ({
  sp,
  owner,
  ann,
  bob,
  cat,
}) => {
  const cid = await sp.community(owner);
  await sp.join(cid, owner, [ann, bob, cat]);
  const role = (by: ChatAccount, who: ChatAccount, r: string) =>
    sp.call(by, 'PUT', `/api/communities/${cid}/members/${who.id}/role`, { role: r });
  assert.is((await role(owner, ann, 'admin')).body.role, 'admin');
  assert.is((await role(ann, bob, 'moderator')).body.role, 'moderator');
  expectError(await role(ann, cat, 'admin'), 403);
  expectError(await role(ann, owner, 'member'), 403);
  expectError(await role(owner, ann, 'owner'), 400);
  expectError(await role(bob, cat, 'moderator'), 403);
  expectError(await role(cat, bob, 'member'), 403);
  assert.is((await role(owner, bob, 'admin')).status, 200);
  expectError(await role(ann, bob, 'member'), 403);
  expectError(
    await role(owner, { access: owner.access, id: '00000000-0000-4000-8000-000000000000' } as ChatAccount, 'member'),
    404,
  );
  expectError(await sp.call(owner, 'PUT', `/api/communities/${cid}/members/${cat.id}/role`, { role: 'king' }), 400);
  // Nicknames: oneself, or a moderator over someone below.
  assert.is(
    (await sp.ok(cat, 'PUT', `/api/communities/${cid}/members/${cat.id}/nickname`, { nickname: 'Kitty' })).nickname,
    'Kitty',
  );
  expectError(await sp.call(cat, 'PUT', `/api/communities/${cid}/members/${ann.id}/nickname`, { nickname: 'x' }), 403);
  assert.is(
    (await sp.ok(ann, 'PUT', `/api/communities/${cid}/members/${cat.id}/nickname`, { nickname: null })).nickname,
    null,
  );
  const members = await sp.ok(cat, 'GET', `/api/communities/${cid}/members`);
  assert.equal(
    members.members.map((m: { user_id: string; role: string }) => m.role),
    ['owner', 'admin', 'admin', 'member'],
  );
});

test('users who share a community see each other (404 otherwise)', async ({ sp, owner }) => {
  const [ann, bob, dan] = [await sp.register('vann'), await sp.register('vbob'), await sp.register('vdan')];
  const cid = await sp.community(owner, 'Visible');
  expectError(await sp.call(ann, 'GET', `/api/users/${bob.id}`), 404);
  await sp.join(cid, owner, [ann, bob]);
  assert.is((await sp.ok(ann, 'GET', `/api/users/${bob.id}`)).id, bob.id);
  assert.ok(
    (await sp.ok(ann, 'GET', `/api/users/search?q=${bob.username}`)).users.some((u: { id: string }) => u.id === bob.id),
  );
  expectError(await sp.call(ann, 'GET', `/api/users/${dan.id}`), 404);
  await sp.ok(bob, 'POST', `/api/communities/${cid}/leave`, undefined, 204);
  expectError(await sp.call(ann, 'GET', `/api/users/${bob.id}`), 404);
});

test('kick, leave, transfer, delete; settings need admin', async ({ sp, owner, ann, bob, cat }) => {
  const cid = await sp.community(owner);
  await sp.join(cid, owner, [ann, bob, cat]);
  await sp.ok(owner, 'PUT', `/api/communities/${cid}/members/${ann.id}/role`, { role: 'moderator' });
  expectError(await sp.call(ann, 'PATCH', `/api/communities/${cid}`, { name: 'x' }), 403);
  const patched = await sp.ok(owner, 'PATCH', `/api/communities/${cid}`, {
    name: 'Renamed',
    theme: 'dark',
    welcome_message: 'hi',
  });
  assert.equal([patched.name, patched.theme, patched.welcome_message], ['Renamed', 'dark', 'hi']);
  expectError(await sp.call(cat, 'DELETE', `/api/communities/${cid}/members/${bob.id}`), 403);
  expectError(await sp.call(ann, 'DELETE', `/api/communities/${cid}/members/${owner.id}`), 403);
  assert.is((await sp.call(ann, 'DELETE', `/api/communities/${cid}/members/${cat.id}`)).status, 204);
  expectError(await sp.call(cat, 'GET', `/api/communities/${cid}`), 403);
  expectError(await sp.call(ann, 'DELETE', `/api/communities/${cid}/members/${cat.id}`), 404);
  expectError(await sp.call(owner, 'POST', `/api/communities/${cid}/leave`), 409);
  assert.is((await sp.call(bob, 'POST', `/api/communities/${cid}/leave`)).status, 204);
  expectError(await sp.call(ann, 'POST', `/api/communities/${cid}/transfer-ownership`, { user_id: ann.id }), 403);
  expectError(await sp.call(owner, 'POST', `/api/communities/${cid}/transfer-ownership`, { user_id: bob.id }), 404);
  const moved = await sp.ok(owner, 'POST', `/api/communities/${cid}/transfer-ownership`, { user_id: ann.id });
  assert.is(moved.owner_id, ann.id);
  assert.is(moved.my_role, 'admin');
  assert.is((await sp.call(owner, 'POST', `/api/communities/${cid}/leave`)).status, 204);
  expectError(await sp.call(owner, 'DELETE', `/api/communities/${cid}`), 403);
  assert.is((await sp.call(ann, 'DELETE', `/api/communities/${cid}`)).status, 204);
  expectError(await sp.call(ann, 'GET', `/api/communities/${cid}`), 404);
  assert.not.ok((await sp.ok(ann, 'GET', '/api/communities')).communities.some((c: { id: string }) => c.id === cid));
});

test("moderation: timeouts block posting until they end; warnings; the actor's community role decides", async ({
  s,
  sp,
  owner,
  ann,
  bob,
  cat,
}) => {
  const cid = await sp.community(owner);
  await sp.join(cid, owner, [ann, bob, cat]);
  await sp.ok(owner, 'PUT', `/api/communities/${cid}/members/${ann.id}/role`, { role: 'moderator' });
  const gid = await sp.group(owner, cid);
  for (const u of [ann, bob, cat]) await sp.ok(u, 'POST', `/api/groups/${gid}/join`);
  const chid = await sp.channel(owner, gid, [ann, bob, cat]);
  await sp.post(bob, chid, 'before');
  expectError(
    await sp.call(cat, 'POST', `/api/communities/${cid}/channels/${chid}/timeout`, {
      user_id: bob.id,
      duration_secs: 60,
    }),
    403,
  );
  expectError(
    await sp.call(ann, 'POST', `/api/communities/${cid}/channels/${chid}/timeout`, {
      user_id: owner.id,
      duration_secs: 60,
    }),
    403,
  );
  expectError(
    await sp.call(ann, 'POST', `/api/communities/${cid}/channels/${chid}/timeout`, {
      user_id: bob.id,
      duration_secs: 0,
    }),
    400,
  );
  const before = s.clock.now().getTime();
  const timeout = await sp.ok(ann, 'POST', `/api/communities/${cid}/channels/${chid}/timeout`, {
    user_id: bob.id,
    duration_secs: 60,
    reason: 'cool off',
  });
  assert.ok(
    Date.parse(timeout.until) >= before + 60_000 && Date.parse(timeout.until) <= s.clock.now().getTime() + 60_000,
  );
  const refused = await sp.call(bob, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'during' });
  expectError(refused, 403);
  assert.is(refused.body.until, timeout.until);
  s.clock.advance(60_000);
  await sp.post(bob, chid, 'after');
  // Lifted early.
  await sp.ok(ann, 'POST', `/api/communities/${cid}/channels/${chid}/timeout`, {
    user_id: cat.id,
    duration_secs: 3600,
  });
  expectError(await sp.call(cat, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'x' }), 403);
  assert.is((await sp.call(ann, 'DELETE', `/api/communities/${cid}/channels/${chid}/timeout/${cat.id}`)).status, 204);
  await sp.post(cat, chid, 'free');
  // A channel of another community is not this community's.
  const other = await sp.community(owner, 'Other');
  expectError(
    await sp.call(owner, 'POST', `/api/communities/${other}/channels/${chid}/timeout`, {
      user_id: bob.id,
      duration_secs: 5,
    }),
    404,
  );
  // Warnings.
  const warning = await sp.ok(
    ann,
    'POST',
    `/api/communities/${cid}/channels/${chid}/warn`,
    { user_id: bob.id, reason: 'be nice' },
    201,
  );
  assert.is(warning.reason, 'be nice');
  expectError(
    await sp.call(cat, 'POST', `/api/communities/${cid}/channels/${chid}/warn`, { user_id: bob.id, reason: 'x' }),
    403,
  );
  assert.equal(
    (await sp.ok(bob, 'GET', `/api/communities/${cid}/channels/${chid}/warnings/${bob.id}`)).warnings.map(
      (w: { id: string }) => w.id,
    ),
    [warning.id],
  );
  assert.is(
    (await sp.ok(ann, 'GET', `/api/communities/${cid}/channels/${chid}/warnings/${bob.id}`)).warnings.length,
    1,
  );
  expectError(await sp.call(cat, 'GET', `/api/communities/${cid}/channels/${chid}/warnings/${bob.id}`), 403);
});

test.run();
