// Forward-auth SSO end to end: identity headers trusted only from listed peers (the test binds its
// client to 127.0.0.2 to be an untrusted peer), groups mapped to roles at sign-in, provisioning on
// first sight, local login and registration closed, API keys still accepted.

import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setCookies } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_sso-admin-key-00000000000000000000';

/** A GET from a chosen local address, so the server sees that TCP peer. */
function getFrom(
  localAddress: string,
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end();
  });
}

const idp = (user: string, groups: string, email = `${user}@corp.example`) => ({
  'X-Idp-Username': user,
  'X-Idp-Email': email,
  'X-Idp-Groups': groups,
});

const test = suite<{ s: TestServices }>('e2e identity: forward-auth SSO');
test.before(async (ctx) => {
  ctx.s = await startTestServices('forward_auth', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_FORWARD_AUTH: 'true',
    ORCH_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32, ::1/128',
  });
});
test.after(async ({ s }) => s?.close());

test('first sign-in from a trusted peer provisions the account with the mapped role and a session', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/me`, { headers: idp('alice', 'staff|orch-admin') });
  assert.is(r.status, 200);
  assert.is(r.body.username, 'alice');
  assert.is(r.body.email, 'alice@corp.example');
  assert.is(r.body.role, 'admin');
  assert.is(r.body.auth_source, 'forward_auth');
  assert.ok(setCookies(r).orch_sess);
  const admin = await http(`${s.orch}/api/v1/admin/users`, { headers: idp('alice', 'orch-admin') });
  assert.is(admin.status, 200);
});

test('groups map to roles: orch-user → user, neither → readonly', async ({ s }) => {
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: idp('bob', 'orch-user') })).body.role, 'user');
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: idp('carol', 'marketing') })).body.role, 'readonly');
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: idp('dave', '') })).body.role, 'readonly');
  const denied = await http(`${s.orch}/api/v1/admin/users`, { headers: idp('bob', 'orch-user') });
  assert.is(denied.status, 403);
  assert.is(denied.body.message, 'admin role required');
});

test('the stored role changes only at sign-in, not on a request within the session', async ({ s }) => {
  const first = await http(`${s.orch}/api/v1/me`, { headers: idp('erin', 'orch-admin') });
  const cookie = `orch_sess=${setCookies(first).orch_sess!.value}`;
  const within = await http(`${s.orch}/api/v1/me`, { headers: { ...idp('erin', 'orch-user'), cookie } });
  assert.is(within.body.role, 'admin');
  const signIn = await http(`${s.orch}/api/v1/me`, { headers: idp('erin', 'orch-user') });
  assert.is(signIn.body.role, 'user');
  const roles = (
    await s.db.pool.query(
      `SELECT data->>'role' AS role FROM events WHERE type = 'UserRoleChanged' AND data->>'user_id' = $1`,
      [first.body.id],
    )
  ).rows;
  assert.equal(roles, [{ role: 'user' }]);
});

test('headers from an untrusted peer are ignored', async ({ s }) => {
  const r = await getFrom('127.0.0.2', `${s.orch}/api/v1/me`, idp('mallory', 'orch-admin'));
  assert.is(r.status, 401);
  assert.is(r.body.message, 'missing X-API-Key header');
  const { rows } = await s.db.pool.query(`SELECT 1 FROM users WHERE username = 'mallory'`);
  assert.is(rows.length, 0);
  const trusted = await getFrom('127.0.0.1', `${s.orch}/api/v1/me`, idp('frank', 'orch-user'));
  assert.is(trusted.status, 200);
});

test('local login and registration are closed; keyed clients still work', async ({ s }) => {
  const loginR = await http(`${s.orch}/auth/login`, {
    json: { email: 'alice@corp.example', password: 'whatever-at-all' },
  });
  assert.is(loginR.status, 403);
  assert.is(loginR.body.error, 'local_auth_disabled');
  const reg = await http(`${s.orch}/auth/register`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username: 'z', email: 'z@example.test', password: 'long-enough-password' },
  });
  assert.is(reg.status, 403);
  assert.is(reg.body.error, 'local_auth_disabled');
  const keyed = await http(`${s.orch}/api/v1/me`, {
    headers: { 'X-API-Key': ADMIN_KEY, ...idp('alice', 'orch-admin') },
  });
  assert.is(keyed.status, 200);
  assert.is(keyed.body.username, 'admin'); // the key wins over identity headers
});

test('a username held by a non-SSO account is not taken over', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/me`, { headers: idp('admin', 'orch-admin') });
  assert.is(r.status, 403);
  assert.is(r.body.error, 'identity_conflict');
});

test('header names and the groups delimiter are configurable', async ({ s }) => {
  await s.restart({
    ORCH_FORWARD_AUTH_USER_HEADER: 'X-Remote-User',
    ORCH_FORWARD_AUTH_EMAIL_HEADER: 'X-Remote-Email',
    ORCH_FORWARD_AUTH_GROUPS_HEADER: 'X-Remote-Groups',
    ORCH_FORWARD_AUTH_GROUPS_DELIM: ',',
    ORCH_GROUP_ADMIN: 'ops',
  });
  const r = await http(`${s.orch}/api/v1/me`, {
    headers: { 'X-Remote-User': 'gina', 'X-Remote-Email': 'gina@corp.example', 'X-Remote-Groups': 'dev, ops' },
  });
  assert.is(r.status, 200);
  assert.is(r.body.role, 'admin');
  const old = await http(`${s.orch}/api/v1/me`, { headers: idp('henry', 'orch-admin') });
  assert.is(old.status, 401);
});

test.run();
