// GET /auth/session (the web console's first call): public; who is signed in by a browser
// session and how this server signs people in. Anonymous, a password session, a forward-auth
// sign-in (with and without ORCH_FORWARD_AUTH_LOGOUT_URL), and a key-bearer (a key is not a
// browser session).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../infra/config.ts';
import { createAccount, login, setCookies } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_session-admin-key-0000000000000000';
const idp = (user: string, groups: string) => ({
  'X-Idp-Username': user,
  'X-Idp-Email': `${user}@corp.example`,
  'X-Idp-Groups': groups,
});

const test = suite<{ s: TestServices; sso: TestServices }>('users: GET /auth/session');
test.before(async (ctx) => {
  ctx.s = await startTestApps('auth_session', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.sso = await startTestApps('auth_session_sso', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_FORWARD_AUTH: 'true',
    ORCH_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32',
    ORCH_FORWARD_AUTH_LOGOUT_URL: 'https://sso.example/logout',
  });
});
test.after(async ({ s, sso }) => {
  await s?.close();
  await sso?.close();
});

test('anonymous: not signed in, password login, no logout URL; never cached', async ({ s }) => {
  const r = await http(`${s.orch}/auth/session`);
  assert.is(r.status, 200);
  assert.equal(r.body, { authenticated: false, login: 'password' });
  assert.is(r.headers.get('cache-control'), 'no-store');
});

test('a password session: the account, flat', async ({ s }) => {
  const alice = await createAccount(s, ADMIN_KEY, 'readonly');
  const session = await login(s, alice);
  const r = await http(`${s.orch}/auth/session`, { headers: { cookie: session.cookie } });
  assert.equal(r.body, {
    authenticated: true,
    user: { id: alice.id, username: alice.username, email: alice.email, role: 'readonly' },
    login: 'password',
  });
  const ended = await http(`${s.orch}/auth/logout`, { method: 'POST', headers: { cookie: session.cookie } });
  assert.is(ended.status, 204);
  assert.equal((await http(`${s.orch}/auth/session`, { headers: { cookie: session.cookie } })).body, {
    authenticated: false,
    login: 'password',
  });
});

test('a key-bearer is not a browser session', async ({ s }) => {
  const r = await http(`${s.orch}/auth/session`, { headers: { 'X-API-Key': ADMIN_KEY } });
  assert.is(r.status, 200);
  assert.equal(r.body, { authenticated: false, login: 'password' });
  // An invalid key is no reason for a 401 on a public route either.
  assert.equal(
    (await http(`${s.orch}/auth/session`, { headers: { 'X-API-Key': 'orch_not-a-key-000000000000000000000' } })).body,
    { authenticated: false, login: 'password' },
  );
});

test("forward-auth: the proxy's identity headers sign in on this very request; the SSO logout URL is named", async ({
  sso,
}) => {
  const anonymous = await http(`${sso.orch}/auth/session`);
  assert.equal(anonymous.body, {
    authenticated: false,
    login: 'forward_auth',
    logout_url: 'https://sso.example/logout',
  });
  const r = await http(`${sso.orch}/auth/session`, { headers: idp('fiona', 'orch-admin') });
  assert.is(r.body.authenticated, true);
  assert.is(r.body.user.username, 'fiona');
  assert.is(r.body.user.role, 'admin');
  assert.is(r.body.login, 'forward_auth');
  assert.is(r.body.logout_url, 'https://sso.example/logout');
  assert.ok(setCookies(r).orch_sess, 'the sign-in set the session cookie');
});

test('ORCH_FORWARD_AUTH_LOGOUT_URL must be an http(s) URL', () => {
  assert.is(loadConfig({}).forwardAuth.logoutUrl, null);
  assert.is(
    loadConfig({ ORCH_FORWARD_AUTH_LOGOUT_URL: ' https://sso.example/out ' }).forwardAuth.logoutUrl,
    'https://sso.example/out',
  );
  assert.throws(
    () => loadConfig({ ORCH_FORWARD_AUTH_LOGOUT_URL: 'javascript:alert(1)' }),
    /ORCH_FORWARD_AUTH_LOGOUT_URL: expected an http\(s\) URL/,
  );
});

test.run();
