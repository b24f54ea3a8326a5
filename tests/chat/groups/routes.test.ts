// Groups through real HTTP: creation rights and the 200-per-community limit, visibility (a
// private group is 404 outside it), discover, join/leave, transfer, members, group channels
// (the 100-per-group limit), group invites.

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
  out: ChatAccount;
  cid: string;
}
const test = suite<Ctx>('chat groups');
test.before(async (ctx) => {
  Object.assign(ctx, await startSpaces('chat_groups'));
  ctx.owner = await ctx.sp.register('own');
  ctx.ann = await ctx.sp.register('ann');
  ctx.bob = await ctx.sp.register('bob');
  ctx.out = await ctx.sp.register('out');
  ctx.cid = await ctx.sp.community(ctx.owner);
  await ctx.sp.join(ctx.cid, ctx.owner, [ctx.ann], 'admin');
  await ctx.sp.join(ctx.cid, ctx.owner, [ctx.bob]);
});
test.after(async ({ s }) => s?.close());

test('create (community admins), read, visibility, discover, join, leave, transfer, members', async ({
  sp,
  owner,
  ann,
  bob,
  out,
  cid,
}) => {
  expectError(await sp.call(bob, 'POST', '/api/groups', { community_id: cid, name: 'Mine' }), 403);
  expectError(await sp.call(out, 'POST', '/api/groups', { community_id: cid, name: 'Mine' }), 403);
  expectError(
    await sp.call(ann, 'POST', '/api/groups', { community_id: '00000000-0000-4000-8000-000000000000', name: 'x' }),
    404,
  );
  expectError(await sp.call(ann, 'POST', '/api/groups', { community_id: cid, name: 'x', visibility: 'secret' }), 400);
  const pub = await sp.ok(
    ann,
    'POST',
    '/api/groups',
    { community_id: cid, name: 'Public', description: 'all', accent_color: '#aabbcc' },
    201,
  );
  assert.equal([pub.visibility, pub.owner_id, pub.member_count, pub.accent_color], ['public', ann.id, 1, '#aabbcc']);
  const priv = await sp.ok(
    owner,
    'POST',
    '/api/groups',
    { community_id: cid, name: 'Private', visibility: 'private' },
    201,
  );
  // Visibility.
  assert.is((await sp.ok(bob, 'GET', `/api/groups/${pub.id}`)).name, 'Public');
  expectError(await sp.call(bob, 'GET', `/api/groups/${priv.id}`), 404);
  expectError(await sp.call(out, 'GET', `/api/groups/${pub.id}`), 403);
  expectError(await sp.call(out, 'GET', `/api/groups/${priv.id}`), 404);
  assert.is(
    (await sp.ok(ann, 'GET', `/api/groups/${priv.id}`)).name,
    'Private',
    'a community admin sees private groups',
  );
  const discover = await sp.ok(bob, 'GET', '/api/groups/discover');
  assert.equal(
    discover.groups.map((g: { id: string; joined: boolean }) => [g.id, g.joined]),
    [[pub.id, false]],
  );
  assert.equal(
    (await sp.ok(bob, 'GET', `/api/communities/${cid}/groups`)).groups.map((g: { id: string }) => g.id),
    [pub.id],
  );
  assert.is((await sp.ok(ann, 'GET', `/api/communities/${cid}/groups`)).groups.length, 2);
  expectError(await sp.call(out, 'GET', `/api/communities/${cid}/groups`), 403);
  // Join and leave.
  assert.is((await sp.ok(bob, 'POST', `/api/groups/${pub.id}/join`)).member_count, 2);
  expectError(await sp.call(bob, 'POST', `/api/groups/${priv.id}/join`), 404);
  expectError(await sp.call(out, 'POST', `/api/groups/${pub.id}/join`), 403);
  assert.equal(
    (await sp.ok(bob, 'GET', '/api/groups')).groups.map((g: { id: string }) => g.id),
    [pub.id],
  );
  assert.equal(
    (await sp.ok(bob, 'GET', `/api/groups/${pub.id}/members`)).members.map((m: { role: string }) => m.role),
    ['owner', 'member'],
  );
  expectError(await sp.call(ann, 'POST', `/api/groups/${pub.id}/leave`), 409);
  // Manage: bob (member) cannot; the owner of the community can.
  expectError(await sp.call(bob, 'PATCH', `/api/groups/${pub.id}`, { name: 'x' }), 403);
  assert.is(
    (await sp.ok(owner, 'PATCH', `/api/groups/${pub.id}`, { name: 'Renamed', visibility: 'private' })).visibility,
    'private',
  );
  expectError(await sp.call(ann, 'PATCH', `/api/groups/${pub.id}`, { accent_color: 'red' }), 400);
  assert.is(
    (await sp.ok(ann, 'POST', `/api/groups/${pub.id}/transfer-ownership`, { user_id: bob.id })).owner_id,
    bob.id,
  );
  expectError(await sp.call(bob, 'POST', `/api/groups/${pub.id}/transfer-ownership`, { user_id: out.id }), 404);
  assert.is((await sp.call(ann, 'POST', `/api/groups/${pub.id}/leave`)).status, 204);
  expectError(await sp.call(bob, 'DELETE', `/api/groups/${priv.id}`), 404);
  assert.is((await sp.call(bob, 'DELETE', `/api/groups/${pub.id}`)).status, 204);
  expectError(await sp.call(bob, 'GET', `/api/groups/${pub.id}`), 404);
});

test('group channels and invites; a private group is joined by invite (community members only)', async ({
  sp,
  owner,
  ann,
  bob,
  out,
  cid,
}) => {
  const gid = await sp.group(ann, cid, 'private', 'Secret');
  expectError(await sp.call(bob, 'POST', `/api/groups/${gid}/channels`, { name: 'x' }), 404);
  const channel = await sp.ok(ann, 'POST', `/api/groups/${gid}/channels`, { name: 'plans', description: 'd' }, 201);
  assert.equal(
    [channel.kind, channel.scope, channel.group_id, channel.community_id, channel.my_role],
    ['text', 'group', gid, cid, 'owner'],
  );
  expectError(await sp.call(ann, 'POST', `/api/groups/${gid}/channels`, { name: 'x', kind: 'fax' }), 400);
  const invite = await sp.ok(ann, 'POST', `/api/groups/${gid}/invites`, { max_uses: 2 }, 201);
  assert.match(invite.code, /^gi_/);
  assert.is((await sp.ok(ann, 'GET', `/api/groups/${gid}/invites`)).invites[0].code, invite.code);
  assert.is((await sp.ok(bob, 'GET', `/api/group-invites/${invite.code}`)).name, 'Secret');
  expectError(await sp.call(out, 'POST', `/api/group-invites/${invite.code}/accept`), 403);
  assert.is((await sp.ok(bob, 'POST', `/api/group-invites/${invite.code}/accept`)).member_count, 2);
  expectError(await sp.call(bob, 'GET', `/api/groups/${gid}/invites`), 403);
  expectError(await sp.call(bob, 'POST', `/api/groups/${gid}/invites`, {}), 403);
  expectError(await sp.call(bob, 'GET', '/api/group-invites/gi_nope'), 404);
  // Members of the group see and join its channels.
  assert.equal(
    (await sp.ok(bob, 'GET', `/api/groups/${gid}/channels`)).channels.map((c: { id: string }) => c.id),
    [channel.id],
  );
  assert.is((await sp.ok(bob, 'POST', `/api/channels/${channel.id}/join`)).my_role, 'member');
  expectError(await sp.call(out, 'POST', `/api/channels/${channel.id}/join`), 403);
  expectError(await sp.call(bob, 'PATCH', `/api/groups/${gid}/channels/${channel.id}`, { name: 'y' }), 403);
  assert.is(
    (await sp.ok(owner, 'PATCH', `/api/groups/${gid}/channels/${channel.id}`, { name: 'renamed', topic: 't' })).topic,
    't',
  );
  // Leaving the group leaves its channels.
  assert.is((await sp.call(bob, 'POST', `/api/groups/${gid}/leave`)).status, 204);
  expectError(await sp.call(bob, 'GET', `/api/channels/${channel.id}/messages`), 403);
  assert.is((await sp.call(ann, 'DELETE', `/api/groups/${gid}/channels/${channel.id}`)).status, 204);
  expectError(await sp.call(ann, 'GET', `/api/channels/${channel.id}`), 404);
  expectError(await sp.call(ann, 'DELETE', `/api/groups/${gid}/channels/${channel.id}`), 404);
});

test('limits: 100 channels per group, 200 groups per community (409 past them)', async ({ sp, owner }) => {
  const cid = await sp.community(owner, 'Limits');
  const gid = await sp.group(owner, cid);
  // The last places are raced for: exactly as many creates succeed as there are places left.
  const statuses = async (calls: Promise<{ status: number }>[]) =>
    (await Promise.all(calls)).map((r) => r.status).sort();
  for (let i = 0; i < 96; i++) await sp.ok(owner, 'POST', `/api/groups/${gid}/channels`, { name: `c${i}` }, 201);
  const channelRace = await statuses(
    Array.from({ length: 8 }, (_, i) => sp.call(owner, 'POST', `/api/groups/${gid}/channels`, { name: `race${i}` })),
  );
  assert.equal(channelRace, [201, 201, 201, 201, 409, 409, 409, 409]);
  expectError(await sp.call(owner, 'POST', `/api/groups/${gid}/channels`, { name: 'one too many' }), 409);
  for (let i = 1; i < 196; i++) await sp.ok(owner, 'POST', '/api/groups', { community_id: cid, name: `g${i}` }, 201);
  const groupRace = await statuses(
    Array.from({ length: 8 }, (_, i) => sp.call(owner, 'POST', '/api/groups', { community_id: cid, name: `race${i}` })),
  );
  assert.equal(groupRace, [201, 201, 201, 201, 409, 409, 409, 409]);
  expectError(await sp.call(owner, 'POST', '/api/groups', { community_id: cid, name: 'one too many' }), 409);
  // A deleted group frees its place.
  assert.is((await sp.call(owner, 'DELETE', `/api/groups/${gid}`)).status, 204);
  await sp.ok(owner, 'POST', '/api/groups', { community_id: cid, name: 'again' }, 201);
});

test.run();
