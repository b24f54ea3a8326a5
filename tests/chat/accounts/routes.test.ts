// Registration, login, recovery, the auth configuration and the account routes, through HTTP
// (in-process) on a real database.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { edSign } from '../../../crypto/e2ee/primitives.ts';
import {
  bearer,
  clientKeys,
  eventCount,
  expectError,
  registerChat,
  registrationBody,
  uniqueName,
  wire,
  type ChatAccount,
} from '../../support/chat.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
  owner: ChatAccount;
  alice: ChatAccount;
}
const test = suite<Ctx>('chat accounts: register, login, recover, account');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_accounts', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_PUBLIC_URL: 'https://chat.example.test',
  });
});
test.after(async ({ s }) => s?.close());

test('the first account owns the instance and is admin; the next is neither', async (ctx) => {
  const { s } = ctx;
  const r = await http(`${s.chat}/api/auth/register`, { json: registrationBody('Owner_1', clientKeys()) });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), ['access_token', 'recovery_code', 'refresh_token', 'user']);
  assert.is(r.body.user.is_owner, true);
  assert.is(r.body.user.is_admin, true);
  assert.is(r.body.user.username, 'Owner_1');
  assert.is(r.body.user.display_name, 'Owner_1');
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.match(r.body.recovery_code, /^[A-Z2-9]{5}(-[A-Z2-9]{5}){3}$/);
  ctx.owner = {
    id: r.body.user.id,
    username: 'Owner_1',
    password: 'pw-Owner_1-long-enough',
    access: r.body.access_token,
    refresh: r.body.refresh_token,
    recovery: r.body.recovery_code,
    keys: clientKeys(),
    user: r.body.user,
  };
  ctx.alice = await registerChat(s.chat, 'alice', { extra: { display_name: 'Alice A.' } });
  assert.is(ctx.alice.user.is_owner, false);
  assert.is(ctx.alice.user.is_admin, false);
  assert.is(ctx.alice.user.display_name, 'Alice A.');
});

test('the access token carries sub, is_admin, is_owner, sid and a 15-minute exp', async ({ owner }) => {
  const [, payload] = owner.access.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  assert.is(claims.sub, owner.id);
  assert.is(claims.is_admin, true);
  assert.is(claims.is_owner, true);
  assert.match(claims.sid, /^[0-9a-f-]{36}$/);
  assert.is(claims.exp - claims.iat, 900);
  const header = JSON.parse(Buffer.from(owner.access.split('.')[0]!, 'base64url').toString());
  assert.is(header.alg, 'HS256');
});

test('register: validation refusals are 400 and write nothing', async ({ s }) => {
  const before = await eventCount(s.db.pool);
  const keys = clientKeys();
  const good = registrationBody(uniqueName('v'), keys);
  const forged = clientKeys();
  const cases: Record<string, unknown>[] = [
    { ...good, username: 'ab' },
    { ...good, username: 'has-dash' },
    { ...good, username: 'x'.repeat(33) },
    { ...good, password: 'short-11chr' },
    { ...good, email: 'not-an-email' },
    { ...good, identity_key: good.identity_key.slice(0, 31) },
    { ...good, signed_prekey: { ...good.signed_prekey, signature: good.signed_prekey.signature.slice(0, 63) } },
    // A signature by another identity key, and a signature over other bytes.
    { ...good, signed_prekey: { ...good.signed_prekey, signature: wire(forged.signedPrekey.signature) } },
    {
      ...good,
      signed_prekey: { ...good.signed_prekey, signature: wire(edSign(new Uint8Array(32), keys.identity.secretKey)) },
    },
    // A small-order identity key (the identity point) with any signature.
    { ...good, identity_key: [1, ...new Array(31).fill(0)] },
    {
      ...good,
      one_time_prekeys: Array.from({ length: 201 }, (_, i) => ({ key_id: i, public_key: new Array(32).fill(9) })),
    },
    {
      ...good,
      one_time_prekeys: [
        { key_id: 1, public_key: new Array(32).fill(9) },
        { key_id: 1, public_key: new Array(32).fill(8) },
      ],
    },
    { ...good, unexpected: true },
  ];
  for (const body of cases) {
    const r = await http(`${s.chat}/api/auth/register`, { json: body });
    expectError(r, 400);
    assert.is(Object.keys(r.body).includes('code'), false);
  }
  assert.is(await eventCount(s.db.pool), before);
});

test('register: a taken username (any case) or email is 409', async ({ s }) => {
  const dupName = await http(`${s.chat}/api/auth/register`, {
    json: registrationBody('ALICE', clientKeys(), { email: 'other@example.test' }),
  });
  expectError(dupName, 409);
  assert.match(dupName.body.error, /username/);
  const dupEmail = await http(`${s.chat}/api/auth/register`, {
    json: registrationBody(uniqueName('e'), clientKeys(), { email: 'ALICE@example.test' }),
  });
  expectError(dupEmail, 409);
  assert.match(dupEmail.body.error, /email/);
});

test('login: username and password give a new session; wrong ones are 401 alike', async ({ s, alice }) => {
  const r = await http(`${s.chat}/api/auth/login`, {
    json: { username: 'alice', password: alice.password },
    headers: { 'user-agent': 'test-agent/1' },
  });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['access_token', 'refresh_token', 'user']);
  assert.is(r.body.user.id, alice.id);
  assert.is(r.body.user.totp_enabled, false);
  // Usernames are found case-insensitively.
  assert.is(
    (await http(`${s.chat}/api/auth/login`, { json: { username: 'ALICE', password: alice.password } })).status,
    200,
  );
  const wrong = await http(`${s.chat}/api/auth/login`, { json: { username: 'alice', password: 'not the password' } });
  const unknown = await http(`${s.chat}/api/auth/login`, {
    json: { username: 'nobody_here', password: 'whatever-123' },
  });
  for (const x of [wrong, unknown]) expectError(x, 401);
  assert.is(wrong.body.error, unknown.body.error);
  expectError(await http(`${s.chat}/api/auth/login`, { json: { username: 'alice' } }), 400);
});

test('auth config: registration mode and public URL', async ({ s }) => {
  const r = await http(`${s.chat}/api/auth/config`);
  assert.is(r.status, 200);
  assert.equal(r.body, { registration_mode: 'open', public_url: 'https://chat.example.test' });
});

test('recover: resets the password, ends every session, returns a new code; the old code and password stop working', async ({
  s,
}) => {
  const bob = await registerChat(s.chat, uniqueName('bob'));
  const other = await http(`${s.chat}/api/auth/login`, { json: { username: bob.username, password: bob.password } });
  const wrong = await http(`${s.chat}/api/auth/recover`, {
    json: { username: bob.username, recovery_code: 'AAAAA-AAAAA-AAAAA-AAAAA', new_password: 'a brand new password' },
  });
  expectError(wrong, 401);
  const unknown = await http(`${s.chat}/api/auth/recover`, {
    json: { username: 'nobody_here', recovery_code: bob.recovery, new_password: 'a brand new password' },
  });
  expectError(unknown, 401);
  assert.is(unknown.body.error, wrong.body.error);
  expectError(
    await http(`${s.chat}/api/auth/recover`, {
      json: { username: bob.username, recovery_code: bob.recovery, new_password: 'short' },
    }),
    400,
  );

  // Typed in lower case with spaces: still the code.
  const typed = bob.recovery.toLowerCase().replace(/-/g, ' ');
  const r = await http(`${s.chat}/api/auth/recover`, {
    json: { username: bob.username, recovery_code: typed, new_password: 'a brand new password' },
  });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body), ['recovery_code']);
  assert.is.not(r.body.recovery_code, bob.recovery);
  // Every session is gone: access tokens and refresh tokens alike.
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(bob) })).status, 401);
  assert.is(
    (await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${other.body.access_token}` } }))
      .status,
    401,
  );
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: bob.refresh } }), 401);
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: other.body.refresh_token } }), 401);
  // Old password out, new in; the used code is spent, the new one works.
  expectError(
    await http(`${s.chat}/api/auth/login`, { json: { username: bob.username, password: bob.password } }),
    401,
  );
  assert.is(
    (await http(`${s.chat}/api/auth/login`, { json: { username: bob.username, password: 'a brand new password' } }))
      .status,
    200,
  );
  expectError(
    await http(`${s.chat}/api/auth/recover`, {
      json: { username: bob.username, recovery_code: bob.recovery, new_password: 'yet another password' },
    }),
    401,
  );
  assert.is(
    (
      await http(`${s.chat}/api/auth/recover`, {
        json: { username: bob.username, recovery_code: r.body.recovery_code, new_password: 'yet another password' },
      })
    ).status,
    200,
  );
});

test('account: me, profile (lengths, null clears), no token or a bad token is 401', async ({ s, alice }) => {
  const me = await http(`${s.chat}/api/account/me`, { headers: bearer(alice) });
  assert.is(me.status, 200);
  assert.is(me.body.email, 'alice@example.test');
  assert.is(me.body.totp_enabled, false);
  expectError(await http(`${s.chat}/api/account/me`), 401);
  expectError(await http(`${s.chat}/api/account/me`, { headers: { authorization: 'Bearer not.a.jwt' } }), 401);
  // A token signed with another key.
  const [h, p] = alice.access.split('.');
  expectError(
    await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${h}.${p}.${'A'.repeat(43)}` } }),
    401,
  );

  const patch = await http(`${s.chat}/api/account/profile`, {
    method: 'PATCH',
    headers: bearer(alice),
    json: { bio: 'hello', pronouns: 'she/her', avatar_url: 'https://img.example.test/a.png' },
  });
  assert.is(patch.status, 200);
  assert.is(patch.body.bio, 'hello');
  assert.is(patch.body.pronouns, 'she/her');
  assert.is(patch.body.display_name, 'Alice A.');
  const cleared = await http(`${s.chat}/api/account/profile`, {
    method: 'PATCH',
    headers: bearer(alice),
    json: { bio: null },
  });
  assert.is(cleared.body.bio, null);
  assert.is(cleared.body.pronouns, 'she/her');
  for (const body of [
    {},
    { display_name: '' },
    { display_name: 'x'.repeat(65) },
    { bio: 'x'.repeat(501) },
    { pronouns: 'x'.repeat(41) },
    { avatar_url: 'javascript:alert(1)' },
    { email: 'x@example.test' },
  ]) {
    expectError(
      await http(`${s.chat}/api/account/profile`, { method: 'PATCH', headers: bearer(alice), json: body }),
      400,
    );
  }
  expectError(await http(`${s.chat}/api/account/profile`, { method: 'PATCH', json: { bio: 'x' } }), 401);
});

test('change-password: needs the current password; ends the other sessions, keeps this one', async ({ s }) => {
  const carol = await registerChat(s.chat, uniqueName('carol'));
  const other = await http(`${s.chat}/api/auth/login`, {
    json: { username: carol.username, password: carol.password },
  });
  const before = await eventCount(s.db.pool);
  const wrong = await http(`${s.chat}/api/account/change-password`, {
    headers: bearer(carol),
    json: { current_password: 'not it at all', new_password: 'another long password' },
  });
  expectError(wrong, 403);
  expectError(
    await http(`${s.chat}/api/account/change-password`, {
      headers: bearer(carol),
      json: { current_password: carol.password, new_password: 'short' },
    }),
    400,
  );
  assert.is(await eventCount(s.db.pool), before);
  const r = await http(`${s.chat}/api/account/change-password`, {
    headers: bearer(carol),
    json: { current_password: carol.password, new_password: 'another long password' },
  });
  assert.is(r.status, 204);
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(carol) })).status, 200);
  assert.is(
    (await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${other.body.access_token}` } }))
      .status,
    401,
  );
  expectError(
    await http(`${s.chat}/api/auth/login`, { json: { username: carol.username, password: carol.password } }),
    401,
  );
  assert.is(
    (await http(`${s.chat}/api/auth/login`, { json: { username: carol.username, password: 'another long password' } }))
      .status,
    200,
  );
});

test('delete: needs the password; keys and sessions go, the row stays as a deleted user, the username stays taken', async ({
  s,
  owner,
}) => {
  const dave = await registerChat(s.chat, uniqueName('dave'));
  expectError(
    await http(`${s.chat}/api/account/delete`, {
      method: 'DELETE',
      headers: bearer(dave),
      json: { password: 'not the password' },
    }),
    403,
  );
  expectError(await http(`${s.chat}/api/account/delete`, { method: 'DELETE', headers: bearer(dave), json: {} }), 400);
  const r = await http(`${s.chat}/api/account/delete`, {
    method: 'DELETE',
    headers: bearer(dave),
    json: { password: dave.password },
  });
  assert.is(r.status, 204);
  expectError(await http(`${s.chat}/api/account/me`, { headers: bearer(dave) }), 401);
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: dave.refresh } }), 401);
  expectError(
    await http(`${s.chat}/api/auth/login`, { json: { username: dave.username, password: dave.password } }),
    401,
  );
  expectError(await http(`${s.chat}/api/keys/${dave.id}/bundle`, { headers: bearer(owner) }), 404);
  expectError(await http(`${s.chat}/api/users/${dave.id}`, { headers: bearer(owner) }), 404);
  const row = (
    await s.db.pool.query('SELECT username, email, password_hash, deleted_at FROM chat_users WHERE id = $1', [dave.id])
  ).rows[0];
  assert.is(row.username, dave.username);
  assert.is(row.email, null);
  assert.is(row.password_hash, null);
  assert.ok(row.deleted_at);
  assert.is(
    (await s.db.pool.query('SELECT count(*)::int AS n FROM chat_one_time_prekeys WHERE user_id = $1', [dave.id]))
      .rows[0].n,
    0,
  );
  expectError(
    await http(`${s.chat}/api/auth/register`, {
      json: registrationBody(dave.username, clientKeys(), { email: 'fresh@example.test' }),
    }),
    409,
  );
});

test('turn-credentials: 503 without a relay configured', async ({ s, alice }) => {
  const r = await http(`${s.chat}/api/account/turn-credentials`, { headers: bearer(alice) });
  expectError(r, 503);
  expectError(await http(`${s.chat}/api/account/turn-credentials`), 401);
});

test('access tokens expire after 15 minutes (by the service clock)', async ({ s, alice }) => {
  const fresh = await http(`${s.chat}/api/auth/login`, { json: { username: 'alice', password: alice.password } });
  const token = { authorization: `Bearer ${fresh.body.access_token}` };
  assert.is((await http(`${s.chat}/api/account/me`, { headers: token })).status, 200);
  s.clock.advance(15 * 60 * 1000 + 1000);
  expectError(await http(`${s.chat}/api/account/me`, { headers: token }), 401);
  // The refresh token still gives a new pair.
  const r = await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: fresh.body.refresh_token } });
  assert.is(r.status, 200);
  assert.is(
    (await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${r.body.access_token}` } })).status,
    200,
  );
});

test.run();
