// TOTP: set-up, verification (backup codes once), login with a code (never the same step twice)
// or a backup code (each once), the remaining count, disabling; the secret sealed at rest.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCode } from '../../../crypto/totp.ts';
import { bearer, eventCount, expectError, registerChat, uniqueName, type ChatAccount } from '../../support/chat.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
  ivy: ChatAccount;
  secret: string;
  backup: string[];
  verifiedWith: string;
}
const test = suite<Ctx>('chat TOTP');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_totp', { CHATSVC_AUTH_RATE_PER_MIN: '100000' });
  ctx.ivy = await registerChat(ctx.s.chat, uniqueName('ivy'));
});
test.after(async ({ s }) => s?.close());

const login = (s: TestServices, a: ChatAccount, totp_code?: string) =>
  http(`${s.chat}/api/auth/login`, {
    json: { username: a.username, password: a.password, ...(totp_code === undefined ? {} : { totp_code }) },
  });

test('setup: a base32 secret and its otpauth URI; not active yet', async (ctx) => {
  const { s, ivy } = ctx;
  expectError(await http(`${s.chat}/api/totp/verify`, { headers: bearer(ivy), json: { code: '123456' } }), 400); // nothing set up
  const r = await http(`${s.chat}/api/totp/setup`, { method: 'POST', headers: bearer(ivy) });
  assert.is(r.status, 200);
  assert.match(r.body.secret, /^[A-Z2-7]{32}$/);
  assert.match(r.body.otpauth_uri, new RegExp(`^otpauth://totp/chatsvc:${ivy.username}\\?`));
  assert.match(r.body.otpauth_uri, /algorithm=SHA1&digits=6&period=30/);
  assert.match(r.body.otpauth_uri, new RegExp(`secret=${r.body.secret}`));
  ctx.secret = r.body.secret;
  assert.is((await login(s, ivy)).status, 200); // not on yet
  assert.equal((await http(`${s.chat}/api/totp/backup-codes`, { headers: bearer(ivy) })).body, {
    enabled: false,
    remaining: 0,
  });
  expectError(await http(`${s.chat}/api/totp/setup`, { method: 'POST' }), 401);
});

test('verify: a wrong code is 401; the right one enables TOTP and returns 10 backup codes once', async (ctx) => {
  const { s, ivy, secret } = ctx;
  const before = await eventCount(s.db.pool);
  expectError(
    await http(`${s.chat}/api/totp/verify`, {
      headers: bearer(ivy),
      json: { code: '000000' === totpCode(secret, s.clock.now().getTime()) ? '111111' : '000000' },
    }),
    401,
  );
  expectError(await http(`${s.chat}/api/totp/verify`, { headers: bearer(ivy), json: {} }), 400);
  assert.is(await eventCount(s.db.pool), before);
  ctx.verifiedWith = totpCode(secret, s.clock.now().getTime());
  const r = await http(`${s.chat}/api/totp/verify`, { headers: bearer(ivy), json: { code: ctx.verifiedWith } });
  assert.is(r.status, 200);
  assert.is(r.body.enabled, true);
  assert.is(r.body.backup_codes.length, 10);
  assert.is(new Set(r.body.backup_codes).size, 10);
  for (const code of r.body.backup_codes) assert.match(code, /^[A-Z2-9]{4}(-[A-Z2-9]{4}){3}$/);
  ctx.backup = r.body.backup_codes;
  expectError(
    await http(`${s.chat}/api/totp/verify`, {
      headers: bearer(ivy),
      json: { code: totpCode(secret, s.clock.now().getTime()) },
    }),
    409,
  );
  expectError(await http(`${s.chat}/api/totp/setup`, { method: 'POST', headers: bearer(ivy) }), 409);
  assert.equal((await http(`${s.chat}/api/totp/backup-codes`, { headers: bearer(ivy) })).body, {
    enabled: true,
    remaining: 10,
  });
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(ivy) })).body.totp_enabled, true);
});

test('login with TOTP on: no code is 401 totp_required; the code of a step works once; the next step works', async ({
  s,
  ivy,
  secret,
  verifiedWith,
}) => {
  const none = await login(s, ivy);
  expectError(none, 401);
  assert.is(none.body.totp_required, true);
  expectError(await login(s, ivy, '12345x'), 401);
  // The code used at verification cannot be used again in its window.
  expectError(await login(s, ivy, verifiedWith), 401);
  // The test clock ticks with real time: each step below starts just past a 30 s boundary, so a
  // slow machine cannot carry the server into the next step between making a code and checking it.
  const nextStep = (steps: number) => s.clock.advance(steps * 30_000 - (s.clock.now().getTime() % 30_000) + 500);
  nextStep(1);
  const code = totpCode(secret, s.clock.now().getTime());
  const ok = await login(s, ivy, code);
  assert.is(ok.status, 200);
  assert.is(ok.body.user.totp_enabled, true);
  const replay = await login(s, ivy, code);
  expectError(replay, 401);
  // A code from one step back is still accepted (clock skew), once it is newer than the last used.
  nextStep(2);
  assert.is((await login(s, ivy, totpCode(secret, s.clock.now().getTime() - 30_000))).status, 200);
  // A wrong password with a right code is still the password's 401.
  nextStep(1);
  const wrongPassword = await http(`${s.chat}/api/auth/login`, {
    json: {
      username: ivy.username,
      password: 'not the password',
      totp_code: totpCode(secret, s.clock.now().getTime()),
    },
  });
  expectError(wrongPassword, 401);
  assert.is(wrongPassword.body.totp_required, undefined);
});

test('a backup code logs in once, in any case and spacing; the count goes down', async ({ s, ivy, backup }) => {
  const typed = backup[0]!.toLowerCase().replace(/-/g, ' ');
  const r = await login(s, ivy, typed);
  assert.is(r.status, 200);
  expectError(await login(s, ivy, backup[0]), 401);
  assert.equal(
    (await http(`${s.chat}/api/totp/backup-codes`, { headers: { authorization: `Bearer ${r.body.access_token}` } }))
      .body,
    { enabled: true, remaining: 9 },
  );
  assert.is((await login(s, ivy, backup[1])).status, 200);
  assert.equal((await http(`${s.chat}/api/totp/backup-codes`, { headers: bearer(ivy) })).body, {
    enabled: true,
    remaining: 8,
  });
});

test('disable: needs the password; then login needs no code; disabling again is 400', async ({ s, ivy }) => {
  expectError(
    await http(`${s.chat}/api/totp/disable`, { headers: bearer(ivy), json: { password: 'not the password' } }),
    403,
  );
  expectError(await http(`${s.chat}/api/totp/disable`, { headers: bearer(ivy), json: {} }), 400);
  assert.is(
    (await http(`${s.chat}/api/totp/disable`, { headers: bearer(ivy), json: { password: ivy.password } })).status,
    204,
  );
  assert.is((await login(s, ivy)).status, 200);
  expectError(
    await http(`${s.chat}/api/totp/disable`, { headers: bearer(ivy), json: { password: ivy.password } }),
    400,
  );
  assert.equal((await http(`${s.chat}/api/totp/backup-codes`, { headers: bearer(ivy) })).body, {
    enabled: false,
    remaining: 0,
  });
});

test('the secret and the backup codes never reach the log or the log lines in clear', async ({ s, secret, backup }) => {
  const text = await logText(s);
  const lines = s.logLines.join('\n');
  assert.ok(text.includes('TotpEnabled'));
  for (const value of [secret, ...backup, ...backup.map((b) => b.replace(/-/g, ''))]) {
    assert.not.ok(text.includes(value), 'log');
    assert.not.ok(lines.includes(value), 'log lines');
  }
  const sealed = (
    await s.db.pool.query(`SELECT data->>'secret_sealed' AS v FROM events WHERE type = 'TotpSetupStarted'`)
  ).rows[0].v;
  assert.match(sealed, /^v1\./);
});

test.run();
