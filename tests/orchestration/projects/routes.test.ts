// Projects through real HTTP (in-process): create (role user or higher, owner = caller, a sent
// owner_id ignored, defaults and ranges), list and read (repo_path for admins only), change (its
// owner or an admin); the web console's mirrors under /api/projects (browser sessions only).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browser, createAccount, login, type Account } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_projects-admin-key-000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const as = (a: Account) => ({ 'X-API-Key': a.apiKey });

const test = suite<{ s: TestServices; user: Account; other: Account; reader: Account }>('projects routes');
test.before(async (ctx) => {
  ctx.s = await startTestApps('projects_routes', { ADMIN_API_KEY: ADMIN_KEY });
  [ctx.user, ctx.other, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'user'),
    createAccount(ctx.s, ADMIN_KEY, 'user'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
});
test.after(async ({ s }) => s?.close());

test('create: the caller owns it, owner_id in the body is ignored, max_concurrent_agents defaults to 3', async ({
  s,
  user,
  other,
}) => {
  const r = await http(`${s.orch}/api/v1/projects`, {
    headers: as(user),
    json: { name: 'web', repo_path: '/srv/web', owner_id: other.id },
  });
  assert.is(r.status, 201, r.text);
  assert.is(r.body.owner_id, user.id);
  assert.is(r.body.max_concurrent_agents, 3);
  assert.is(r.body.repo_path, null, 'a non-admin does not see repo_path, even its own');
  assert.equal(Object.keys(r.body).sort(), [
    'created_at',
    'id',
    'max_concurrent_agents',
    'name',
    'owner_id',
    'repo_path',
    'updated_at',
  ]);
  const seen = await http(`${s.orch}/api/v1/projects/${r.body.id}`, { headers: admin });
  assert.is(seen.body.repo_path, '/srv/web', 'the admin sees it');
});

test('create: validation, readonly and anonymous refusals', async ({ s, user, reader }) => {
  for (const body of [
    {},
    { name: '' },
    { name: 'x', max_concurrent_agents: 0 },
    { name: 'x', max_concurrent_agents: 101 },
    { name: 'x', max_concurrent_agents: 1.5 },
  ]) {
    const r = await http(`${s.orch}/api/v1/projects`, { headers: as(user), json: body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error, 'validation_failed');
  }
  assert.is(
    (await http(`${s.orch}/api/v1/projects`, { headers: as(user), json: { name: 'edge', max_concurrent_agents: 100 } }))
      .status,
    201,
  );
  const ro = await http(`${s.orch}/api/v1/projects`, { headers: as(reader), json: { name: 'nope' } });
  assert.is(ro.status, 403);
  assert.is(ro.body.error, 'insufficient_role');
  assert.is((await http(`${s.orch}/api/v1/projects`, { json: { name: 'nope' } })).status, 401);
});

test('list: every signed-in account reads every project, paginated; repo_path for admins only', async ({
  s,
  user,
  reader,
}) => {
  await http(`${s.orch}/api/v1/projects`, { headers: admin, json: { name: 'admin-owned', repo_path: '/srv/a' } });
  const mine = await http(`${s.orch}/api/v1/projects?limit=1`, { headers: as(reader) });
  assert.is(mine.status, 200);
  assert.is(mine.body.limit, 1);
  assert.is(mine.body.projects.length, 1);
  assert.ok(mine.body.total >= 3);
  const all = await http(`${s.orch}/api/v1/projects?limit=200`, { headers: as(user) });
  assert.ok(all.body.projects.every((p: { repo_path: unknown }) => p.repo_path === null));
  const asAdmin = await http(`${s.orch}/api/v1/projects?limit=200`, { headers: admin });
  assert.ok(asAdmin.body.projects.some((p: { repo_path: unknown }) => p.repo_path === '/srv/a'));
  assert.is((await http(`${s.orch}/api/v1/projects`)).status, 401);
  const malformed = await http(`${s.orch}/api/v1/projects/not-a-uuid`, { headers: admin });
  assert.equal([malformed.status, malformed.body.error], [404, 'project_not_found']);
  assert.is(
    (await http(`${s.orch}/api/v1/projects/00000000-0000-4000-8000-00000000abcd`, { headers: admin })).body.error,
    'project_not_found',
  );
});

test('patch: the owner or an admin; others 403 and the project is unchanged', async ({ s, user, other }) => {
  const created = await http(`${s.orch}/api/v1/projects`, { headers: as(user), json: { name: 'patched' } });
  const url = `${s.orch}/api/v1/projects/${created.body.id}`;
  const refused = await http(url, { method: 'PATCH', headers: as(other), json: { name: 'stolen' } });
  assert.is(refused.status, 403);
  assert.is(refused.body.error, 'project_owner_required');
  assert.is((await http(url, { headers: as(user) })).body.name, 'patched');
  const byOwner = await http(url, {
    method: 'PATCH',
    headers: as(user),
    json: { name: 'renamed', max_concurrent_agents: 5 },
  });
  assert.is(byOwner.status, 200, byOwner.text);
  assert.is(byOwner.body.name, 'renamed');
  assert.is(byOwner.body.max_concurrent_agents, 5);
  const byAdmin = await http(url, { method: 'PATCH', headers: admin, json: { repo_path: '/srv/renamed' } });
  assert.is(byAdmin.body.repo_path, '/srv/renamed');
  assert.is((await http(url, { method: 'PATCH', headers: as(user), json: { max_concurrent_agents: 0 } })).status, 400);
  assert.is(
    (
      await http(`${s.orch}/api/v1/projects/00000000-0000-4000-8000-00000000abcd`, {
        method: 'PATCH',
        headers: admin,
        json: { name: 'x' },
      })
    ).status,
    404,
  );
});

test("the web console's mirrors /api/projects...: a browser session creates, lists, reads and changes; a key gets 403 session_required; writes need the CSRF token", async ({
  s,
  user,
  other,
}) => {
  const session = await login(s, user);
  const headers = browser(s, session);
  const made = await http(`${s.orch}/api/projects`, {
    headers,
    json: { name: 'from the console', max_concurrent_agents: 2 },
  });
  assert.is(made.status, 201, made.text);
  assert.is(made.body.owner_id, user.id);
  const id = made.body.id as string;
  const listed = await http(`${s.orch}/api/projects?limit=200`, { headers });
  assert.is(listed.status, 200);
  assert.ok(listed.body.projects.some((p: { id: string }) => p.id === id));
  const read = await http(`${s.orch}/api/projects/${id}`, { headers });
  assert.equal(read.body, (await http(`${s.orch}/api/v1/projects/${id}`, { headers: as(user) })).body);
  const changed = await http(`${s.orch}/api/projects/${id}`, {
    method: 'PATCH',
    headers,
    json: { name: 'renamed in the console' },
  });
  assert.equal([changed.status, changed.body.name], [200, 'renamed in the console']);
  // Another account's session: the owner rule holds on the mirror too.
  const stranger = await http(`${s.orch}/api/projects/${id}`, {
    method: 'PATCH',
    headers: browser(s, await login(s, other)),
    json: { name: 'taken' },
  });
  assert.equal([stranger.status, stranger.body.error], [403, 'project_owner_required']);
  // Keys use /api/v1/; writes on a session without the CSRF token are refused before anything changes.
  for (const [method, path] of [
    ['GET', '/api/projects'],
    ['GET', `/api/projects/${id}`],
    ['POST', '/api/projects'],
    ['PATCH', `/api/projects/${id}`],
  ] as const) {
    const keyed = await http(`${s.orch}${path}`, {
      method,
      headers: as(user),
      ...(method === 'GET' ? {} : { json: { name: 'by key' } }),
    });
    assert.equal([keyed.status, keyed.body.error], [403, 'session_required'], `${method} ${path}`);
  }
  const noCsrf = await http(`${s.orch}/api/projects/${id}`, {
    method: 'PATCH',
    headers: { cookie: session.cookie },
    json: { name: 'forged' },
  });
  assert.equal([noCsrf.status, noCsrf.body.error], [403, 'csrf_failed']);
  assert.is((await http(`${s.orch}/api/projects/${id}`, { headers })).body.name, 'renamed in the console');
  assert.is((await http(`${s.orch}/api/projects`)).status, 401);
});

test.run();
