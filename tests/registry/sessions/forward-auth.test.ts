// Forward-auth (OIDC not configured): identity headers are trusted only from a peer in
// REGISTRY_FORWARD_AUTH_TRUSTED_NETS, with the orchestration service's header conventions; the
// admin group maps to admin, anyone else is read-only; writes need the CSRF token; a token in
// the same request wins over the headers.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const test = suite<{ s: TestServices }>('registry forward-auth');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_forward_auth', {
    REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '10.0.0.0/8,127.0.0.1/32',
    REGISTRY_FORWARD_AUTH_USER_HEADER: 'X-Forwarded-User',
    REGISTRY_FORWARD_AUTH_GROUPS_HEADER: 'X-Forwarded-Groups',
    REGISTRY_FORWARD_AUTH_GROUPS_DELIM: ',',
    REGISTRY_ADMIN_GROUP: 'ops',
  });
});
test.after(async ({ s }) => s?.close());

const admin = { 'X-Forwarded-User': 'olga', 'X-Forwarded-Groups': 'staff, ops' };

test('identity headers from a trusted peer sign the request in; the configured headers and admin group apply', async ({
  s,
}) => {
  const me = await http(`${s.registry}/api/v1/auth/me`, { headers: admin, peer: '10.1.2.3' });
  assert.is(me.status, 200);
  assert.is(me.body.kind, 'forward_auth');
  assert.is(me.body.name, 'olga');
  assert.is(me.body.role, 'admin');
  const plain = await http(`${s.registry}/api/v1/auth/me`, {
    headers: { 'X-Forwarded-User': 'pat', 'X-Forwarded-Groups': 'staff,opsx' },
    peer: '::ffff:10.9.9.9',
  });
  assert.is(plain.body.role, 'readonly');
  // The default header names mean nothing here.
  assert.is(
    (await http(`${s.registry}/api/v1/auth/me`, { headers: { 'X-Idp-Username': 'olga', 'X-Idp-Groups': 'ops' } }))
      .status,
    401,
  );
});

test('from an untrusted peer the headers are ignored (401)', async ({ s }) => {
  for (const peer of ['192.168.1.5', '11.0.0.1', '::1']) {
    const r = await http(`${s.registry}/api/v1/customers`, { headers: admin, peer });
    assert.is(r.status, 401, peer);
    assert.is(r.body.error.code, 'unauthorized');
  }
});

test('writes need the CSRF token (handed out on reads, bound to the user); a read-only user cannot write', async ({
  s,
}) => {
  const first = await http(`${s.registry}/api/v1/customers`, { headers: admin });
  assert.is(first.status, 200);
  const csrf = /registry_csrf=([^;]+)/.exec(first.headers.getSetCookie().join('\n'))?.[1];
  assert.ok(csrf, 'a read hands out the CSRF cookie');
  const body = { slug: 'acme', name: 'Acme' };
  const none = await http(`${s.registry}/api/v1/customers`, { headers: admin, json: body });
  assert.is(none.status, 403);
  assert.is(none.body.error.code, 'csrf_failed');
  const ok = await http(`${s.registry}/api/v1/customers`, {
    headers: { ...admin, cookie: `registry_csrf=${csrf}`, 'x-csrf-token': csrf! },
    json: body,
  });
  assert.is(ok.status, 201);
  // Another user's token does not carry over.
  const pat = {
    csrf: (await http(`${s.registry}/api/v1/auth/me`, { headers: { 'X-Forwarded-User': 'pat' } })).body
      .csrf_token as string,
  };
  const other = await http(`${s.registry}/api/v1/customers`, {
    headers: { ...admin, cookie: `registry_csrf=${pat.csrf}`, 'x-csrf-token': pat.csrf },
    json: { slug: 'b', name: 'B' },
  });
  assert.is(other.status, 403);
  const reader = await http(`${s.registry}/api/v1/customers`, {
    headers: { 'X-Forwarded-User': 'pat', cookie: `registry_csrf=${pat.csrf}`, 'x-csrf-token': pat.csrf },
    json: { slug: 'c', name: 'C' },
  });
  assert.is(reader.status, 403);
  assert.is(reader.body.error.code, 'read_only');
});

test('a machine token in the same request wins over identity headers', async ({ s }) => {
  const olga = await http(`${s.registry}/api/v1/auth/me`, { headers: admin });
  const headers = { ...admin, cookie: `registry_csrf=${olga.body.csrf_token}`, 'x-csrf-token': olga.body.csrf_token };
  const minted = await http(`${s.registry}/api/v1/admin/tokens`, {
    headers,
    json: { name: 'reader', scopes: ['deployments:read'] },
  });
  assert.is(minted.status, 201);
  const r = await http(`${s.registry}/api/v1/customers`, {
    headers: { ...admin, authorization: `Bearer ${minted.body.token}` },
  });
  assert.is(r.status, 403, 'the token (without customers:read) decides, not the admin headers');
});

test('a malformed trusted-nets value stops the service from starting, naming the variable', async ({ s }) => {
  let failure: Error | null = null;
  try {
    await s.restart({ REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '10.0.0.0/33' });
  } catch (error) {
    failure = error as Error;
  }
  assert.match(failure?.message ?? '', /REGISTRY_FORWARD_AUTH_TRUSTED_NETS: not a CIDR/);
  await s.restart({ REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32' });
});

test.run();
