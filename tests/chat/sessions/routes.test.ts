// Refresh-token rotation and reuse detection, and the session routes of the account.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, expectError, registerChat, uniqueName, type ChatAccount } from '../../support/chat.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
  erin: ChatAccount;
}
const test = suite<Ctx>('chat sessions: refresh rotation, reuse detection, session routes');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_sessions', { CHATSVC_AUTH_RATE_PER_MIN: '100000' });
  ctx.erin = await registerChat(ctx.s.chat, uniqueName('erin'));
});
test.after(async ({ s }) => s?.close());

test('refresh: a new pair for the same session; the old refresh token is revoked on use', async ({ s, erin }) => {
  const r = await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: erin.refresh } });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['access_token', 'refresh_token']);
  assert.is(r.headers.get('cache-control'), 'no-store');
  assert.is.not(r.body.refresh_token, erin.refresh);
  const sid = (t: string) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString()).sid;
  assert.is(sid(r.body.access_token), sid(erin.access));
  assert.is(
    (await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${r.body.access_token}` } })).status,
    200,
  );
  // The next rotation works from the new token.
  const again = await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: r.body.refresh_token } });
  assert.is(again.status, 200);
  erin.access = again.body.access_token;
  erin.refresh = again.body.refresh_token;
});

test('refresh: garbage, an unknown session and a forged secret are 401 and revoke nothing', async ({ s, erin }) => {
  for (const token of [
    'garbage',
    '00000000-0000-4000-8000-000000000000.abc',
    `${erin.refresh.split('.')[0]}.forged-secret-0000000000000000000000000000`,
  ]) {
    expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: token } }), 401);
  }
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: {} }), 400);
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(erin) })).status, 200);
});

test('reuse detection: presenting an already-used refresh token revokes the whole session (401), for both holders', async ({
  s,
}) => {
  const frank = await registerChat(s.chat, uniqueName('frank'));
  const legit = await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: frank.refresh } });
  assert.is(legit.status, 200);
  // The thief replays the stolen, already-rotated token.
  const replay = await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: frank.refresh } });
  expectError(replay, 401);
  assert.match(replay.body.error, /already used/);
  // The legitimate holder's newer tokens are dead too: the session is gone.
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: legit.body.refresh_token } }), 401);
  expectError(
    await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${legit.body.access_token}` } }),
    401,
  );
  const { rows } = await s.db.pool.query(
    `SELECT type, data->>'reason' AS reason FROM events WHERE stream_id LIKE 'chat.session-%' AND data->>'user_id' = $1 ORDER BY position`,
    [frank.id],
  );
  assert.equal(
    rows.map((r) => r.type),
    ['ChatSessionStarted', 'RefreshTokenRotated', 'SessionRevoked'],
  );
  assert.is(rows[2].reason, 'refresh_token_reuse');
  // A fresh login is unaffected.
  assert.is(
    (await http(`${s.chat}/api/auth/login`, { json: { username: frank.username, password: frank.password } })).status,
    200,
  );
});

test('sessions: listed newest first with the current flag and user agent; another one revoked by id', async ({
  s,
  erin,
}) => {
  const second = await http(`${s.chat}/api/auth/login`, {
    json: { username: erin.username, password: erin.password },
    headers: { 'user-agent': 'second-device/2.0' },
  });
  const list = await http(`${s.chat}/api/account/sessions`, { headers: bearer(erin) });
  assert.is(list.status, 200);
  assert.is(list.body.sessions.length, 2);
  assert.equal(Object.keys(list.body.sessions[0]).sort(), [
    'created_at',
    'current',
    'id',
    'last_used_at',
    'user_agent',
  ]);
  const current = list.body.sessions.filter((x: { current: boolean }) => x.current);
  assert.is(current.length, 1);
  const other = list.body.sessions.find((x: { current: boolean }) => !x.current);
  assert.is(other.user_agent, 'second-device/2.0');
  // Someone else's session, an unknown one and a malformed id are 404.
  const stranger = await registerChat(s.chat, uniqueName('stranger'));
  expectError(
    await http(`${s.chat}/api/account/sessions/${other.id}`, { method: 'DELETE', headers: bearer(stranger) }),
    404,
  );
  expectError(
    await http(`${s.chat}/api/account/sessions/00000000-0000-4000-8000-000000000000`, {
      method: 'DELETE',
      headers: bearer(erin),
    }),
    404,
  );
  expectError(await http(`${s.chat}/api/account/sessions/nope`, { method: 'DELETE', headers: bearer(erin) }), 404);
  assert.is(
    (await http(`${s.chat}/api/account/sessions/${other.id}`, { method: 'DELETE', headers: bearer(erin) })).status,
    204,
  );
  expectError(
    await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${second.body.access_token}` } }),
    401,
  );
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: second.body.refresh_token } }), 401);
  assert.is((await http(`${s.chat}/api/account/sessions`, { headers: bearer(erin) })).body.sessions.length, 1);
});

test('revoke-all: every session but the current one; deleting the current session logs out', async ({ s, erin }) => {
  const a = await http(`${s.chat}/api/auth/login`, { json: { username: erin.username, password: erin.password } });
  const b = await http(`${s.chat}/api/auth/login`, { json: { username: erin.username, password: erin.password } });
  const r = await http(`${s.chat}/api/account/sessions/revoke-all`, { method: 'POST', headers: bearer(erin) });
  assert.is(r.status, 200);
  assert.is(r.body.revoked, 2);
  for (const x of [a, b])
    expectError(
      await http(`${s.chat}/api/account/me`, { headers: { authorization: `Bearer ${x.body.access_token}` } }),
      401,
    );
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(erin) })).status, 200);
  expectError(await http(`${s.chat}/api/account/sessions/revoke-all`, { method: 'POST' }), 401);
  const mine = (await http(`${s.chat}/api/account/sessions`, { headers: bearer(erin) })).body.sessions[0].id;
  assert.is(
    (await http(`${s.chat}/api/account/sessions/${mine}`, { method: 'DELETE', headers: bearer(erin) })).status,
    204,
  );
  expectError(await http(`${s.chat}/api/account/me`, { headers: bearer(erin) }), 401);
  expectError(await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: erin.refresh } }), 401);
});

test.run();
