// OIDC sign-in against a real provider (oidc-provider on a loopback port): the login redirect
// with PKCE, the callback starting a session cookie (HttpOnly, SameSite=Lax), the groups claim
// mapping to admin or read-only, CSRF on session writes, logout, and the refusals.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setCookies } from '../../support/principals.ts';
import { startTestProvider, type TestProvider } from '../../support/oidc-provider.ts';
import { eventCount } from '../../support/registry.ts';
import { http, logText, startTestApps, type Reply, type TestServices } from '../../support/services.ts';

const PUBLIC_URL = 'http://registry.example.test';
const DIRECTORY = {
  alice: { email: 'alice@example.test', name: 'Alice', groups: ['staff', 'registry-admins'] },
  bob: { email: 'bob@example.test', name: 'Bob', groups: ['staff'] },
};

interface Signed {
  cookie: string;
  csrf: string;
  sessionId: string;
  callback: Reply;
}

const test = suite<{ s: TestServices; idp: TestProvider }>('registry OIDC sign-in');
test.before(async (ctx) => {
  ctx.idp = await startTestProvider(`${PUBLIC_URL}/api/v1/auth/callback`, DIRECTORY);
  ctx.s = await startTestApps('registry_oidc', {
    REGISTRY_PUBLIC_URL: PUBLIC_URL,
    REGISTRY_OIDC_ISSUER: ctx.idp.issuer,
    REGISTRY_OIDC_CLIENT_ID: ctx.idp.clientId,
    REGISTRY_OIDC_CLIENT_SECRET: ctx.idp.clientSecret,
    REGISTRY_OIDC_ADMIN_GROUP: 'registry-admins',
    // Configured, but OIDC takes precedence: forward-auth headers are then ignored.
    REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32',
  });
});
test.after(async ({ s, idp }) => {
  await s?.close();
  await idp?.close();
});

/** The whole browser round trip: login → provider → callback. */
async function signIn(s: TestServices, idp: TestProvider, account: string, returnTo?: string): Promise<Signed> {
  const login = await http(
    `${s.registry}/api/v1/auth/login${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`,
  );
  assert.is(login.status, 302);
  const state = setCookies(login).registry_oidc!;
  const back = await idp.signIn(login.headers.get('location')!, account);
  assert.is(back.origin + back.pathname, `${PUBLIC_URL}/api/v1/auth/callback`);
  const callback = await http(`${s.registry}/api/v1/auth/callback${back.search}`, {
    headers: { cookie: `registry_oidc=${state.value}` },
  });
  assert.is(callback.status, 302, callback.text);
  const cookies = setCookies(callback);
  const sessionId = cookies.registry_sess!.value;
  const csrf = cookies.registry_csrf!.value;
  return { sessionId, csrf, cookie: `registry_sess=${sessionId}; registry_csrf=${csrf}`, callback };
}

test('login redirects to the provider with PKCE (S256), state and nonce; the login state is a sealed HttpOnly Lax cookie', async ({
  s,
  idp,
}) => {
  const r = await http(`${s.registry}/api/v1/auth/login`);
  assert.is(r.status, 302);
  const to = new URL(r.headers.get('location')!);
  assert.is(to.origin, idp.issuer);
  assert.is(to.searchParams.get('client_id'), idp.clientId);
  assert.is(to.searchParams.get('redirect_uri'), `${PUBLIC_URL}/api/v1/auth/callback`);
  assert.is(to.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(to.searchParams.get('code_challenge'));
  assert.ok(to.searchParams.get('state'));
  assert.ok(to.searchParams.get('nonce'));
  assert.match(to.searchParams.get('scope')!, /openid/);
  const cookie = setCookies(r).registry_oidc!;
  assert.match(cookie.attributes, /HttpOnly/i);
  assert.match(cookie.attributes, /SameSite=Lax/i);
  assert.not.ok(cookie.value.includes(to.searchParams.get('state')!), 'sealed, not readable');
});

test('an admin-group member signs in: session cookie HttpOnly SameSite=Lax, admin role, writes with CSRF', async ({
  s,
  idp,
}) => {
  const alice = await signIn(s, idp, 'alice', '/api/v1/customers');
  assert.is(alice.callback.headers.get('location'), `${PUBLIC_URL}/api/v1/customers`);
  const sess = setCookies(alice.callback).registry_sess!;
  assert.match(sess.attributes, /HttpOnly/i);
  assert.match(sess.attributes, /SameSite=Lax/i);
  assert.match(sess.attributes, /Path=\//);
  assert.not.match(sess.attributes, /Secure/i, 'plain http public URL');
  assert.not.match(setCookies(alice.callback).registry_csrf!.attributes, /HttpOnly/i);
  const me = await http(`${s.registry}/api/v1/auth/me`, { headers: { cookie: alice.cookie } });
  assert.is(me.status, 200);
  assert.equal(
    { ...me.body, csrf_token: undefined },
    { kind: 'session', name: 'alice', email: 'alice@example.test', role: 'admin', scopes: [], csrf_token: undefined },
  );
  assert.is(me.body.csrf_token, alice.csrf);
  const write = {
    cookie: alice.cookie,
    'x-csrf-token': alice.csrf,
    origin: PUBLIC_URL,
    host: 'registry.example.test',
    'sec-fetch-site': 'same-origin',
  };
  const created = await http(`${s.registry}/api/v1/customers`, {
    headers: write,
    json: { slug: 'acme', name: 'Acme' },
  });
  assert.is(created.status, 201, created.text);
  const events = await http(`${s.registry}/api/v1/events?limit=1`, { headers: { cookie: alice.cookie } });
  assert.equal(events.body.items[0].actor, { kind: 'user', id: 'oidc:alice@example.test' });
  // CSRF: no token, a wrong token, or another origin: 403 csrf_failed, nothing written.
  const before = await eventCount(s);
  for (const headers of [
    { cookie: alice.cookie },
    { ...write, 'x-csrf-token': 'forged' },
    { ...write, origin: 'https://evil.example' },
    { ...write, 'sec-fetch-site': 'cross-site' },
  ]) {
    const r = await http(`${s.registry}/api/v1/customers`, { headers, json: { slug: 'evil', name: 'Evil' } });
    assert.is(r.status, 403);
    assert.is(r.body.error.code, 'csrf_failed');
  }
  assert.is(await eventCount(s), before);
  assert.not.ok((await logText(s)).includes(alice.sessionId), 'the session id never reaches the log');
});

test('everyone else is read-only: any GET, no write (403)', async ({ s, idp }) => {
  const bob = await signIn(s, idp, 'bob');
  assert.is(bob.callback.headers.get('location'), `${PUBLIC_URL}/api/v1/docs`);
  const me = await http(`${s.registry}/api/v1/auth/me`, { headers: { cookie: bob.cookie } });
  assert.is(me.body.role, 'readonly');
  for (const path of [
    '/api/v1/customers',
    '/api/v1/customers/acme',
    '/api/v1/summary',
    '/api/v1/deployments',
    '/api/v1/openapi.json',
  ]) {
    assert.is((await http(`${s.registry}${path}`, { headers: { cookie: bob.cookie } })).status, 200, path);
  }
  const write = { cookie: bob.cookie, 'x-csrf-token': bob.csrf, origin: PUBLIC_URL, host: 'registry.example.test' };
  const r = await http(`${s.registry}/api/v1/customers`, { headers: write, json: { slug: 'bob-co', name: 'Bob Co' } });
  assert.is(r.status, 403);
  assert.is(r.body.error.code, 'read_only');
  assert.is((await http(`${s.registry}/api/v1/admin/tokens`, { headers: { cookie: bob.cookie } })).status, 403);
});

test('logout ends the session at once (CSRF-checked); the cookie is then refused', async ({ s, idp }) => {
  const alice = await signIn(s, idp, 'alice');
  const headers = {
    cookie: alice.cookie,
    'x-csrf-token': alice.csrf,
    origin: PUBLIC_URL,
    host: 'registry.example.test',
  };
  assert.is(
    (await http(`${s.registry}/api/v1/auth/logout`, { method: 'POST', headers: { cookie: alice.cookie } })).status,
    403,
  );
  const out = await http(`${s.registry}/api/v1/auth/logout`, { method: 'POST', headers });
  assert.is(out.status, 204);
  assert.match(out.headers.getSetCookie().join('\n'), /registry_sess=;/);
  const after = await http(`${s.registry}/api/v1/customers`, { headers: { cookie: alice.cookie } });
  assert.is(after.status, 401);
  assert.is((await http(`${s.registry}/api/v1/auth/logout`, { method: 'POST' })).status, 401);
});

test('refusals: a callback without the login state, with a forged state or code, or an error from the provider: 401 login_failed, no session', async ({
  s,
  idp,
}) => {
  const before = await eventCount(s);
  const none = await http(`${s.registry}/api/v1/auth/callback?code=abc&state=def`);
  assert.is(none.status, 401);
  assert.is(none.body.error.code, 'login_failed');
  const login = await http(`${s.registry}/api/v1/auth/login`);
  const state = setCookies(login).registry_oidc!.value;
  const back = await idp.signIn(login.headers.get('location')!, 'alice');
  const forgedState = new URL(back);
  forgedState.searchParams.set('state', 'forged');
  const r1 = await http(`${s.registry}/api/v1/auth/callback${forgedState.search}`, {
    headers: { cookie: `registry_oidc=${state}` },
  });
  assert.is(r1.status, 401);
  const denied = await http(
    `${s.registry}/api/v1/auth/callback?error=access_denied&state=x&iss=${encodeURIComponent(idp.issuer)}`,
    { headers: { cookie: `registry_oidc=${state}` } },
  );
  assert.is(denied.status, 401);
  const tampered = await http(`${s.registry}/api/v1/auth/callback${back.search}`, {
    headers: { cookie: `registry_oidc=${state.slice(0, -4)}AAAA` },
  });
  assert.is(tampered.status, 401);
  assert.is(await eventCount(s), before);
  // An open redirect is refused: return_to must be a path here.
  const evil = await http(`${s.registry}/api/v1/auth/login?return_to=${encodeURIComponent('//evil.example/x')}`);
  const alice = await idp.signIn(evil.headers.get('location')!, 'alice');
  const landed = await http(`${s.registry}/api/v1/auth/callback${alice.search}`, {
    headers: { cookie: `registry_oidc=${setCookies(evil).registry_oidc!.value}` },
  });
  assert.is(landed.headers.get('location'), `${PUBLIC_URL}/api/v1/docs`);
});

test('with OIDC configured, forward-auth headers are ignored even from a trusted peer', async ({ s }) => {
  const r = await http(`${s.registry}/api/v1/customers`, {
    headers: { 'X-Idp-Username': 'mallory', 'X-Idp-Groups': 'registry-admin' },
  });
  assert.is(r.status, 401);
});

test('an unreachable provider: 503 oidc_unavailable; without OIDC configured: 404', async ({ s }) => {
  await s.restart({ REGISTRY_OIDC_ISSUER: 'http://127.0.0.1:1' });
  const r = await http(`${s.registry}/api/v1/auth/login`);
  assert.is(r.status, 503);
  assert.is(r.body.error.code, 'oidc_unavailable');
  await s.restart({ REGISTRY_OIDC_ISSUER: undefined });
  const off = await http(`${s.registry}/api/v1/auth/login`);
  assert.is(off.status, 404);
  assert.is(off.body.error.code, 'oidc_not_configured');
});

test.run();
