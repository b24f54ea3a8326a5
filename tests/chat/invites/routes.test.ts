// Registration modes: invite (an admin-minted single-use code) and closed; the admin invite
// routes and their authorisation.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bearer,
  clientKeys,
  eventCount,
  expectError,
  registerChat,
  registrationBody,
  uniqueName,
  type ChatAccount,
} from '../../support/chat.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
  owner: ChatAccount;
  member: ChatAccount;
  code: string;
  inviteId: string;
}
const test = suite<Ctx>('chat registration modes and invites');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_invites', { CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_REGISTRATION: 'open' });
  ctx.owner = await registerChat(ctx.s.chat, uniqueName('owner'));
  ctx.member = await registerChat(ctx.s.chat, uniqueName('member'));
  await ctx.s.restart({ CHATSVC_REGISTRATION: 'invite' });
});
test.after(async ({ s }) => s?.close());

const register = (s: TestServices, name: string, extra: Record<string, unknown> = {}) =>
  http(`${s.chat}/api/auth/register`, { json: registrationBody(name, clientKeys(), extra) });

test('mint: admins and owners only; the code is shown once', async (ctx) => {
  const { s, owner, member } = ctx;
  expectError(await http(`${s.chat}/api/admin/invites`, { headers: bearer(member), json: {} }), 403);
  expectError(await http(`${s.chat}/api/admin/invites`, { json: {} }), 401);
  expectError(
    await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner), json: { expires_in_hours: 0 } }),
    400,
  );
  const r = await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner), json: {} });
  assert.is(r.status, 201);
  assert.match(r.body.code, /^inv_/);
  assert.is(r.body.status, 'active');
  assert.is(r.body.expires_at, null);
  ctx.code = r.body.code;
  ctx.inviteId = r.body.id;
  const list = await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner) });
  assert.is(list.body.total, 1);
  assert.is(list.body.invites[0].code, undefined);
  expectError(await http(`${s.chat}/api/admin/invites`, { headers: bearer(member) }), 403);
  assert.not.ok((await logText(s)).includes(ctx.code));
});

test('invite mode: auth config says so; no code or a wrong one is 403 and writes nothing; a valid code registers once', async ({
  s,
  code,
  owner,
  inviteId,
}) => {
  assert.is((await http(`${s.chat}/api/auth/config`)).body.registration_mode, 'invite');
  const before = await eventCount(s.db.pool);
  expectError(await register(s, uniqueName('n')), 403);
  expectError(await register(s, uniqueName('n'), { invite_code: 'inv_wrong' }), 403);
  assert.is(await eventCount(s.db.pool), before);
  const r = await register(s, uniqueName('invited'), { invite_code: code });
  assert.is(r.status, 201);
  assert.is(r.body.user.is_owner, false);
  expectError(await register(s, uniqueName('again'), { invite_code: code }), 403);
  const listed = (await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner) })).body.invites.find(
    (i: { id: string }) => i.id === inviteId,
  );
  assert.is(listed.status, 'redeemed');
  assert.is(listed.redeemed_by, r.body.user.id);
});

test('a taken username does not burn the invite', async ({ s, owner, member }) => {
  const fresh = (await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner), json: {} })).body.code;
  expectError(await register(s, member.username, { invite_code: fresh }), 409);
  assert.is((await register(s, uniqueName('second'), { invite_code: fresh })).status, 201);
});

test('expired and revoked invites register nobody', async ({ s, owner }) => {
  const expiring = (
    await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner), json: { expires_in_hours: 1 } })
  ).body;
  const revoked = (await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner), json: {} })).body;
  assert.is(
    (await http(`${s.chat}/api/admin/invites/${revoked.id}`, { method: 'DELETE', headers: bearer(owner) })).status,
    204,
  );
  expectError(
    await http(`${s.chat}/api/admin/invites/00000000-0000-4000-8000-000000000000`, {
      method: 'DELETE',
      headers: bearer(owner),
    }),
    404,
  );
  expectError(await register(s, uniqueName('r'), { invite_code: revoked.code }), 403);
  s.clock.advance(2 * 3_600_000);
  expectError(await register(s, uniqueName('x'), { invite_code: expiring.code }), 403);
});

test('closed mode: every registration is 403', async ({ s }) => {
  await s.restart({ CHATSVC_REGISTRATION: 'closed' });
  assert.is((await http(`${s.chat}/api/auth/config`)).body.registration_mode, 'closed');
  const before = await eventCount(s.db.pool);
  const r = await register(s, uniqueName('closed'));
  expectError(r, 403);
  assert.match(r.body.error, /closed/);
  assert.is(await eventCount(s.db.pool), before);
});

test.run();
