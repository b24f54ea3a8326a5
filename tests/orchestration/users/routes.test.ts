// Registration, login, sessions, logout, account administration and login throttling, end to end.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyMaterial } from '../../../api/orchestration/users/keys.ts';
import { userDecider } from '../../../domain/orchestration/users/decider.ts';
import { userStream } from '../../../domain/orchestration/streams.ts';
import { browser, createAccount, login, setCookies } from '../../support/principals.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_login-admin-key-000000000000000000';
const OWNER = { username: 'owner', email: 'owner@example.test', password: 'correct horse battery staple' };

const test = suite<{ s: TestServices }>('e2e identity: register, login, sessions, admin accounts');
test.before(async (ctx) => {
  ctx.s = await startTestApps('identity_login', { ADMIN_API_KEY: ADMIN_KEY });
});
test.after(async ({ s }) => s?.close());

test('register: needs the admin key header', async ({ s }) => {
  const anonymous = await http(`${s.orch}/auth/register`, { json: OWNER });
  assert.is(anonymous.status, 401);
  assert.is(anonymous.body.message, 'missing X-API-Key header');
  const wrong = await http(`${s.orch}/auth/register`, { headers: { 'X-API-Key': 'orch_wrong' }, json: OWNER });
  assert.is(wrong.status, 401);
  assert.is(wrong.body.message, 'invalid or inactive API key');
});

test('register: every field required, password of at least 12 characters, nothing written on a refusal', async ({
  s,
}) => {
  const events = async () => Number((await s.db.pool.query('SELECT count(*) FROM events')).rows[0].count);
  const before = await events();
  for (const body of [
    { email: OWNER.email, password: OWNER.password },
    { username: 'x', password: OWNER.password },
    { username: 'x', email: OWNER.email },
    { ...OWNER, password: 'short-11chr' },
    { ...OWNER, email: 'not-an-email' },
  ]) {
    const r = await http(`${s.orch}/auth/register`, { headers: { 'X-API-Key': ADMIN_KEY }, json: body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error, 'validation_failed');
    assert.type(r.body.message, 'string');
  }
  const malformed = await http(`${s.orch}/auth/register`, {
    headers: { 'X-API-Key': ADMIN_KEY, 'content-type': 'application/json' },
    body: '{"username":',
  });
  assert.is(malformed.status, 400);
  assert.is(await events(), before);
});

test('register: creates a local admin with a flat response; a second registration is 409', async ({ s }) => {
  const r = await http(`${s.orch}/auth/register`, { headers: { 'X-API-Key': ADMIN_KEY }, json: OWNER });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), ['email', 'id', 'role', 'username']);
  assert.is(r.body.role, 'admin');
  assert.is(r.body.username, OWNER.username);
  const again = await http(`${s.orch}/auth/register`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { ...OWNER, username: 'other', email: 'other@example.test' },
  });
  assert.is(again.status, 409);
  assert.is(again.body.error, 'already_registered');
});

test('login: flat response, HttpOnly SameSite=Strict session cookie and a readable CSRF cookie', async ({ s }) => {
  const r = await http(`${s.orch}/auth/login`, { json: { email: OWNER.email, password: OWNER.password } });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['email', 'id', 'role', 'username']);
  assert.is(r.body.ok, undefined);
  assert.is(r.body.user, undefined);
  const cookies = setCookies(r);
  assert.ok(cookies.orch_sess?.value);
  assert.match(cookies.orch_sess!.attributes, /HttpOnly/i);
  assert.match(cookies.orch_sess!.attributes, /SameSite=Strict/i);
  assert.not.match(cookies.orch_sess!.attributes, /Secure/i); // plain HTTP and ORCH_COOKIE_SECURE unset
  assert.ok(cookies.orch_csrf?.value);
  assert.not.match(cookies.orch_csrf!.attributes, /HttpOnly/i);
  const me = await http(`${s.orch}/api/v1/me`, { headers: { cookie: `orch_sess=${cookies.orch_sess!.value}` } });
  assert.is(me.status, 200);
  assert.is(me.body.username, OWNER.username);
  assert.is(me.body.auth_source, 'local');
  assert.match(me.body.api_key, /^orch_/);
});

test('login: a wrong password or unknown email is 401 with one message', async ({ s }) => {
  const wrong = await http(`${s.orch}/auth/login`, { json: { email: OWNER.email, password: 'not the password' } });
  const unknown = await http(`${s.orch}/auth/login`, {
    json: { email: 'nobody@example.test', password: 'whatever-123' },
  });
  for (const r of [wrong, unknown]) {
    assert.is(r.status, 401);
    assert.equal(r.body, { error: 'invalid_credentials', message: 'invalid email or password' });
    assert.equal(r.headers.getSetCookie(), []);
  }
  const missing = await http(`${s.orch}/auth/login`, { json: { email: OWNER.email } });
  assert.is(missing.status, 400);
});

test('failed logins are audit events; after 5 the account answers like a wrong password, even to the right one', async ({
  s,
}) => {
  const admin = await createAccount(s, ADMIN_KEY, 'user', 'lockme');
  for (let i = 0; i < 5; i++) {
    assert.is(
      (await http(`${s.orch}/auth/login`, { json: { email: admin.email, password: `wrong-${i}` } })).status,
      401,
    );
  }
  const locked = await http(`${s.orch}/auth/login`, { json: { email: admin.email, password: admin.password } });
  assert.is(locked.status, 401);
  assert.equal(locked.body, { error: 'invalid_credentials', message: 'invalid email or password' });
  const { rows } = await s.db.pool.query(
    `SELECT detail->>'reason' AS reason FROM audit_log WHERE event_type = 'login_failed' AND detail->>'user_id' = $1 ORDER BY commit_pos, prepare_pos`,
    [admin.id],
  );
  assert.equal(
    rows.map((r) => r.reason),
    ['bad_credentials', 'bad_credentials', 'bad_credentials', 'bad_credentials', 'bad_credentials', 'locked'],
  );
  const failures = (await s.db.pool.query(`SELECT data::text AS data FROM events WHERE type = 'LoginFailed'`)).rows
    .map((r) => r.data)
    .join('\n');
  assert.not.ok(failures.includes(admin.email), 'the typed email is stored only as a hash');
  assert.not.ok((await logText(s)).includes('wrong-0'), 'a typed password never reaches the log');
});

test('failed logins from one address are throttled with 429 and retry_after', async ({ s }) => {
  let last;
  for (let i = 0; i < 25; i++) {
    last = await http(`${s.orch}/auth/login`, {
      json: { email: `spray-${i}@example.test`, password: 'guess-guess-guess' },
    });
    if (last.status === 429) break;
  }
  assert.is(last!.status, 429);
  assert.is(last!.body.error, 'rate_limited');
  assert.ok(last!.body.retry_after > 0);
  assert.is(last!.headers.get('retry-after'), String(last!.body.retry_after));
});

test('logout ends the session at once', async ({ s }) => {
  // The address bucket of this test process is spent by the previous test: use a fresh server.
  await s.restart();
  const session = await login(s, OWNER);
  const headers = { cookie: session.cookie };
  assert.is((await http(`${s.orch}/api/v1/me`, { headers })).status, 200);
  const out = await http(`${s.orch}/auth/logout`, { method: 'POST', headers });
  assert.is(out.status, 204);
  assert.ok(setCookies(out).orch_sess);
  const after = await http(`${s.orch}/api/v1/me`, { headers });
  assert.is(after.status, 401);
  assert.is(after.body.message, 'missing X-API-Key header');
  assert.is((await http(`${s.orch}/auth/logout`, { method: 'POST' })).status, 204);
});

test('admin accounts: create (key shown once), list paginated, change role, deactivate refuses key and session at once', async ({
  s,
}) => {
  const created = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username: 'dana', email: 'dana@example.test', role: 'user', password: 'dana-password-123' },
  });
  assert.is(created.status, 201);
  assert.equal(Object.keys(created.body).sort(), [
    'api_key',
    'auth_source',
    'created_at',
    'email',
    'id',
    'is_active',
    'role',
    'updated_at',
    'username',
  ]);
  assert.is(created.headers.get('cache-control'), 'no-store');
  const danaKey = created.body.api_key;
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': danaKey } })).body.role, 'user');

  const dup = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username: 'dana', email: 'dana2@example.test', role: 'user' },
  });
  assert.is(dup.status, 409);
  assert.is(dup.body.error, 'username_taken');
  const dupEmail = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username: 'dana2', email: 'DANA@example.test', role: 'user' },
  });
  assert.is(dupEmail.status, 409);
  assert.is(dupEmail.body.error, 'email_taken');
  for (const body of [
    { username: 'x1', email: 'x1@example.test', role: 'root' },
    { username: 'x2', email: 'x2@example.test', role: 'user', extra: 1 },
    { username: 'x 3', email: 'x3@example.test', role: 'user' },
  ]) {
    assert.is(
      (await http(`${s.orch}/api/v1/admin/users`, { headers: { 'X-API-Key': ADMIN_KEY }, json: body })).status,
      400,
      JSON.stringify(body),
    );
  }

  const page = await http(`${s.orch}/api/v1/admin/users?limit=2&offset=1`, { headers: { 'X-API-Key': ADMIN_KEY } });
  assert.is(page.status, 200);
  assert.is(page.body.limit, 2);
  assert.is(page.body.offset, 1);
  assert.is(page.body.users.length, 2);
  assert.ok(page.body.total >= 4);
  assert.is(page.body.users[0].api_key, undefined);
  const clamped = await http(`${s.orch}/api/v1/admin/users?limit=5000&offset=-3`, {
    headers: { 'X-API-Key': ADMIN_KEY },
  });
  assert.is(clamped.body.limit, 200);
  assert.is(clamped.body.offset, 0);

  const id = created.body.id;
  const promoted = await http(`${s.orch}/api/v1/admin/users/${id}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { role: 'readonly' },
  });
  assert.is(promoted.status, 200);
  assert.is(promoted.body.role, 'readonly');
  assert.is(
    (
      await http(`${s.orch}/api/v1/admin/users/${id}`, {
        method: 'PATCH',
        headers: { 'X-API-Key': ADMIN_KEY },
        json: {},
      })
    ).status,
    400,
  );
  assert.is(
    (
      await http(`${s.orch}/api/v1/admin/users/${id}`, {
        method: 'PATCH',
        headers: { 'X-API-Key': ADMIN_KEY },
        json: { role: 'god' },
      })
    ).status,
    400,
  );
  const missing = await http(`${s.orch}/api/v1/admin/users/00000000-0000-4000-8000-0000000000ff`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { role: 'user' },
  });
  assert.is(missing.status, 404);

  const session = await login(s, { email: 'dana@example.test', password: 'dana-password-123' });
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { cookie: session.cookie } })).status, 200);
  const off = await http(`${s.orch}/api/v1/admin/users/${id}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { is_active: false },
  });
  assert.is(off.body.is_active, false);
  const keyAfter = await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': danaKey } });
  assert.is(keyAfter.status, 401);
  assert.is(keyAfter.body.message, 'invalid or inactive API key');
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { cookie: session.cookie } })).status, 401);
  const relogin = await http(`${s.orch}/auth/login`, {
    json: { email: 'dana@example.test', password: 'dana-password-123' },
  });
  assert.is(relogin.status, 401);
});

test('an admin cannot deactivate or demote their own account', async ({ s }) => {
  const me = await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } });
  const r = await http(`${s.orch}/api/v1/admin/users/${me.body.id}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { is_active: false },
  });
  assert.is(r.status, 409);
  assert.is(r.body.error, 'cannot_demote_self');
});

test('account mirrors (/api/admin/users, /api/admin/users/{id}, /api/me): a session creates, pages, changes; keys get session_required; CSRF kept', async ({
  s,
}) => {
  const session = await login(s, OWNER);
  const web = browser(s, session);
  const made = await http(`${s.orch}/api/admin/users`, {
    headers: web,
    json: { username: 'mirror-made', email: 'mirror-made@example.test', role: 'user' },
  });
  assert.is(made.status, 201, made.text);
  assert.is(made.headers.get('cache-control'), 'no-store');
  assert.is(
    (await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': made.body.api_key } })).body.username,
    'mirror-made',
  );
  const page = await http(`${s.orch}/api/admin/users?limit=2&offset=1`, { headers: web });
  assert.equal([page.status, page.body.limit, page.body.offset, page.body.users.length], [200, 2, 1, 2]);
  assert.equal(
    page.body,
    (await http(`${s.orch}/api/v1/admin/users?limit=2&offset=1`, { headers: { 'X-API-Key': ADMIN_KEY } })).body,
  );
  const changed = await http(`${s.orch}/api/admin/users/${made.body.id}`, {
    method: 'PATCH',
    headers: web,
    json: { role: 'readonly', is_active: false },
  });
  assert.equal(
    [changed.status, changed.body.role, changed.body.is_active, changed.body.principal_type],
    [200, 'readonly', false, 'account'],
  );
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': made.body.api_key } })).status, 401);
  const me = await http(`${s.orch}/api/me`, { headers: web });
  assert.is(me.body.username, OWNER.username);
  const self = await http(`${s.orch}/api/admin/users/${me.body.id}`, {
    method: 'PATCH',
    headers: web,
    json: { role: 'user' },
  });
  assert.equal(
    [self.status, self.body.error, self.body.message],
    [409, 'cannot_demote_self', 'an admin cannot deactivate or demote their own account'],
  );
  // An agent credential (made through the domain: agents come from spawns) is not an account.
  const agentId = randomUUID();
  await s.platform.commands.run(
    userStream(agentId),
    userDecider,
    {
      type: 'CreateUser',
      user_id: agentId,
      username: 'agent-m',
      email: 'agent-m@agents.invalid',
      role: 'user',
      auth_source: 'agent',
      principal_type: 'agent',
      key: keyMaterial(s.platform.sealKey, agentId, 'orch_agent-m-key'),
      password_hash: null,
      by: null,
      at: new Date().toISOString(),
    },
    { actor: { kind: 'system', id: 'test' }, correlationId: null },
  );
  const listed = (await http(`${s.orch}/api/admin/users?limit=200`, { headers: web })).body.users.find(
    (u: { id: string }) => u.id === agentId,
  );
  assert.is(listed.principal_type, 'agent');
  const service = await http(`${s.orch}/api/admin/users/${agentId}`, {
    method: 'PATCH',
    headers: web,
    json: { is_active: false },
  });
  assert.equal([service.status, service.body.error], [409, 'not_an_account']);
  for (const [method, path, json] of [
    ['POST', '/api/admin/users', { username: 'k', email: 'k@example.test', role: 'user' }],
    ['PATCH', `/api/admin/users/${made.body.id}`, { role: 'user' }],
    ['GET', '/api/me', undefined],
  ] as const) {
    const keyed = await http(`${s.orch}${path}`, {
      method,
      headers: { 'X-API-Key': ADMIN_KEY },
      ...(json ? { json } : {}),
    });
    assert.equal([keyed.status, keyed.body.error], [403, 'session_required'], `${method} ${path}`);
  }
  const noCsrf = await http(`${s.orch}/api/admin/users`, {
    headers: { cookie: session.cookie, origin: s.orch },
    json: { username: 'no-csrf', email: 'no-csrf@example.test', role: 'user' },
  });
  assert.equal([noCsrf.status, noCsrf.body.error], [403, 'csrf_failed']);
  assert.is((await s.db.pool.query(`SELECT 1 FROM users WHERE username IN ('k', 'no-csrf')`)).rows.length, 0);
});

test('ORCH_COOKIE_SECURE marks the session cookies Secure', async ({ s }) => {
  await s.restart({ ORCH_COOKIE_SECURE: 'true' });
  const r = await http(`${s.orch}/auth/login`, { json: { email: OWNER.email, password: OWNER.password } });
  const cookies = setCookies(r);
  assert.match(cookies.orch_sess!.attributes, /Secure/);
  assert.match(cookies.orch_csrf!.attributes, /Secure/);
  await s.restart({ ORCH_COOKIE_SECURE: undefined });
});

test('a state-changing request on a session must pass the same-origin and CSRF checks; keys need not', async ({
  s,
}) => {
  const session = await login(s, OWNER);
  const body = (n: string) => ({ username: n, email: `${n}@example.test`, role: 'readonly' });
  const bare = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { cookie: session.cookie },
    json: body('csrf-a'),
  });
  assert.is(bare.status, 403);
  assert.equal(bare.body, { error: 'csrf_failed', message: 'same-origin or CSRF check failed' });
  const crossSite = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { ...browser(s, session), 'sec-fetch-site': 'cross-site' },
    json: body('csrf-b'),
  });
  assert.is(crossSite.status, 403);
  assert.is(
    (await http(`${s.orch}/api/v1/admin/users`, { headers: browser(s, session), json: body('csrf-c') })).status,
    201,
  );
  assert.is((await http(`${s.orch}/api/v1/admin/users`, { headers: { cookie: session.cookie } })).status, 200); // reads need no token
  assert.is(
    (await http(`${s.orch}/api/v1/admin/users`, { headers: { 'X-API-Key': ADMIN_KEY }, json: body('csrf-d') })).status,
    201,
  );
  const { rows } = await s.db.pool.query(`SELECT username FROM users WHERE username LIKE 'csrf-%' ORDER BY username`);
  assert.equal(
    rows.map((r) => r.username),
    ['csrf-c', 'csrf-d'],
  );
});

test('no password, key, session id or CSRF token in the log or a log line', async ({ s }) => {
  const session = await login(s, OWNER);
  const log = await logText(s);
  const lines = s.logLines.join('\n');
  for (const secret of [OWNER.password, 'dana-password-123', ADMIN_KEY, session.sessionId, session.csrf]) {
    assert.not.ok(log.includes(secret), `in the log: ${secret.slice(0, 6)}…`);
    assert.not.ok(lines.includes(secret), `in a log line: ${secret.slice(0, 6)}…`);
  }
});

test.run();
