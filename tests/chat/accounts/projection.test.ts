// The chat read models: replaying the log into them from scratch gives exactly what the live
// projections built, row for row; and nothing secret is in the log or the log lines.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { totpCode } from '../../../crypto/totp.ts';
import { allProjections } from '../../../projections/index.ts';
import { bearer, registerChat, uniqueName } from '../../support/chat.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';

const SNAPSHOTS: Record<string, string> = {
  chat_users: 'SELECT * FROM chat_users ORDER BY id',
  chat_sessions: 'SELECT * FROM chat_sessions ORDER BY id',
  chat_totp: 'SELECT * FROM chat_totp ORDER BY user_id',
  chat_identity_keys: 'SELECT * FROM chat_identity_keys ORDER BY user_id',
  chat_one_time_prekeys: 'SELECT * FROM chat_one_time_prekeys ORDER BY user_id, key_id',
  chat_blocks: 'SELECT * FROM chat_blocks ORDER BY user_id, blocked_user_id',
  chat_reports: 'SELECT * FROM chat_reports ORDER BY id',
  chat_invites: 'SELECT * FROM chat_invites ORDER BY id',
};

/** The account-side projections (the spaces have their own suite: tests/chat/communities/projection.test.ts). */
const ACCOUNT_PROJECTIONS = [
  'chat_users',
  'chat_sessions',
  'chat_totp',
  'chat_keys',
  'chat_blocks',
  'chat_reports',
  'chat_invites',
];

const test = suite<{ s: TestServices }>('chat projections and secrets');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_projection', { CHATSVC_AUTH_RATE_PER_MIN: '100000' });
});
test.after(async ({ s }) => s?.close());

test('a history touching every chat event: rebuilt read models equal the live ones; no secret in the log or log lines', async ({
  s,
}) => {
  const owner = await registerChat(s.chat, uniqueName('own'));
  const mia = await registerChat(s.chat, uniqueName('mia'));
  const gone = await registerChat(s.chat, uniqueName('gone'));
  const secrets: string[] = [
    owner.password,
    mia.password,
    gone.password,
    owner.recovery,
    mia.recovery,
    owner.refresh,
    mia.refresh,
    owner.access,
  ];
  const ok = (r: { status: number; text: string }, status: number) => assert.is(r.status, status, r.text);

  const invite = await http(`${s.chat}/api/admin/invites`, { headers: bearer(owner), json: {} });
  ok(invite, 201);
  secrets.push(invite.body.code);
  ok(await http(`${s.chat}/api/admin/invites/${invite.body.id}`, { method: 'DELETE', headers: bearer(owner) }), 204);
  ok(await http(`${s.chat}/api/keys/${mia.id}/bundle`, { headers: bearer(owner) }), 200);
  ok(await http(`${s.chat}/api/account/profile`, { method: 'PATCH', headers: bearer(mia), json: { bio: 'bio' } }), 200);
  ok(await http(`${s.chat}/api/users/block`, { headers: bearer(mia), json: { user_id: owner.id } }), 204);
  ok(await http(`${s.chat}/api/users/block`, { headers: bearer(mia), json: { user_id: gone.id } }), 204);
  ok(await http(`${s.chat}/api/users/unblock/${gone.id}`, { method: 'POST', headers: bearer(mia) }), 204);
  ok(
    await http(`${s.chat}/api/reports`, {
      headers: bearer(mia),
      json: { target_type: 'user', target_id: owner.id, reason: 'test' },
    }),
    201,
  );
  const refreshed = await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: mia.refresh } });
  ok(refreshed, 200);
  secrets.push(refreshed.body.refresh_token);
  mia.access = refreshed.body.access_token;
  const setup = await http(`${s.chat}/api/totp/setup`, { method: 'POST', headers: bearer(mia) });
  secrets.push(setup.body.secret);
  const verified = await http(`${s.chat}/api/totp/verify`, {
    headers: bearer(mia),
    json: { code: totpCode(setup.body.secret, s.clock.now().getTime()) },
  });
  ok(verified, 200);
  secrets.push(...verified.body.backup_codes);
  ok(
    await http(`${s.chat}/api/auth/login`, {
      json: { username: mia.username, password: mia.password, totp_code: verified.body.backup_codes[0] },
    }),
    200,
  );
  s.clock.advance(30_000);
  ok(
    await http(`${s.chat}/api/auth/login`, {
      json: {
        username: mia.username,
        password: mia.password,
        totp_code: totpCode(setup.body.secret, s.clock.now().getTime()),
      },
    }),
    200,
  );
  ok(
    await http(`${s.chat}/api/account/change-password`, {
      headers: bearer(mia),
      json: { current_password: mia.password, new_password: 'mia new password!' },
    }),
    204,
  );
  secrets.push('mia new password!');
  const recovered = await http(`${s.chat}/api/auth/recover`, {
    json: { username: owner.username, recovery_code: owner.recovery, new_password: 'owner new password' },
  });
  ok(recovered, 200);
  secrets.push(recovered.body.recovery_code, 'owner new password');
  ok(
    await http(`${s.chat}/api/account/delete`, {
      method: 'DELETE',
      headers: bearer(gone),
      json: { password: gone.password },
    }),
    204,
  );

  const text = await logText(s);
  const lines = s.logLines.join('\n');
  for (const secret of secrets) {
    assert.not.ok(text.includes(secret), `a secret is in the log: ${secret.slice(0, 6)}...`);
    assert.not.ok(lines.includes(secret), `a secret is in the log lines: ${secret.slice(0, 6)}...`);
  }
  for (const type of [
    'UserRegistered',
    'PasswordChanged',
    'AccountRecovered',
    'AccountProfileUpdated',
    'AccountDeleted',
    'ChatSessionStarted',
    'RefreshTokenRotated',
    'SessionRevoked',
    'TotpSetupStarted',
    'TotpEnabled',
    'TotpCodeUsed',
    'BackupCodeUsed',
    'IdentityKeyRegistered',
    'SignedPrekeyUploaded',
    'PrekeysUploaded',
    'PrekeyConsumed',
    'KeysRemoved',
    'UserBlocked',
    'UserUnblocked',
    'ReportFiled',
    'RegistrationInviteCreated',
    'RegistrationInviteRevoked',
  ]) {
    assert.ok(text.includes(` ${type} `), type);
  }

  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(SNAPSHOTS).map(async ([t, q]) => [t, (await s.db.pool.query(q)).rows])),
    );
  const live = await snapshot();
  await s.platform.engine.stop();
  for (const projection of allProjections.filter((p) => ACCOUNT_PROJECTIONS.includes(p.name)))
    assert.ok((await s.platform.engine.rebuild(projection.name)) > 0, projection.name);
  assert.equal(await snapshot(), live);
});

test.run();
