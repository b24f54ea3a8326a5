// The admin area (spec 1, "Authentication": `require_admin` guards `/api/v1/admin/*`,
// `/api/admin/*` and `/api/templates`): its refusal comes first on every route there, web-UI
// mirrors included (a keyed non-admin meets `admin role required`, not the mirror's
// `session_required`), and on the area's paths no route takes (nothing of the area shows before
// it). Under ORCH_ENFORCE_ADMIN_ROLE=false it turns away only anonymous callers, and the routes'
// own checks answer: the mirrors' session check, and the admin checks that hold whatever the
// setting says. Who may call each route is the generated matrix
// (tests/platform/authorization-matrix.test.ts); this suite holds the order it does not see.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browser, createAccount, login, type Account, type Session } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_admin-area-admin-key-000000000000000';
const NOWHERE = '00000000-0000-4000-8000-000000000001';

interface World {
  s: TestServices;
  user: Account;
  userSession: Session;
}

async function world(label: string, env: Record<string, string> = {}): Promise<World> {
  const s = await startTestApps(label, { ADMIN_API_KEY: ADMIN_KEY, ...env });
  const user = await createAccount(s, ADMIN_KEY, 'user');
  const other = await createAccount(s, ADMIN_KEY, 'user');
  return { s, user, userSession: await login(s, other) };
}

const test = suite<{ on: World; off: World }>('the admin area: require_admin first');
test.before(async (ctx) => {
  ctx.on = await world('admin_area');
  ctx.off = await world('admin_area_off', { ORCH_ENFORCE_ADMIN_ROLE: 'false' });
});
test.after(async ({ on, off }) => {
  await on?.s.close();
  await off?.s.close();
});

const get = (w: World, path: string, headers: Record<string, string>) => http(`${w.s.orch}${path}`, { headers });
const key = (k: string) => ({ 'X-API-Key': k });

test("enforced: a keyed non-admin meets admin role required on the area's mirrors, before their session check", async ({
  on,
}) => {
  for (const path of [
    '/api/admin/users',
    '/api/templates',
    '/api/templates/sales-assistant',
    `/api/admin/agents/${NOWHERE}/chatsvc`,
    '/api/admin/updates/status',
  ]) {
    const r = await get(on, path, key(on.user.apiKey));
    assert.is(r.status, 403, path);
    assert.equal(r.body, { error: 'forbidden', message: 'admin role required' }, path);
  }
  // The admin's key passes require_admin and meets the mirror's session check.
  const admin = await get(on, '/api/admin/users', key(ADMIN_KEY));
  assert.is(admin.status, 403);
  assert.is(admin.body.error, 'session_required');
  // A user session too meets require_admin first.
  assert.is((await get(on, '/api/admin/users', browser(on.s, on.userSession))).body.message, 'admin role required');
});

test("enforced: the area's paths no route takes answer require_admin before their 404", async ({ on }) => {
  for (const [method, path] of [
    ['GET', '/api/admin/no-such-page'],
    ['DELETE', `/api/v1/admin/no-such-thing/${NOWHERE}`],
    ['PUT', '/api/templates'],
    ['GET', '/api/templates/x/y'],
  ]) {
    const anonymous = await http(`${on.s.orch}${path}`, { method });
    assert.equal(
      [anonymous.status, anonymous.body],
      [401, { error: 'unauthorized', message: 'missing X-API-Key header' }],
      `${method} ${path}`,
    );
    const user = await http(`${on.s.orch}${path}`, { method, headers: key(on.user.apiKey) });
    assert.equal([user.status, user.body.message], [403, 'admin role required'], `${method} ${path}`);
    const admin = await http(`${on.s.orch}${path}`, { method, headers: key(ADMIN_KEY) });
    assert.equal(
      [admin.status, admin.body],
      [404, { error: 'not_found', message: 'no such route' }],
      `${method} ${path}`,
    );
  }
  // Outside the area, an unknown path is a 404 for anyone.
  assert.is((await http(`${on.s.orch}/api/no-such-page`)).status, 404);
});

test("opted out: only anonymous callers are turned away; the mirrors' session check and the routes' own admin checks answer", async ({
  off,
}) => {
  assert.is((await get(off, '/api/v1/admin/users', {})).status, 401);
  assert.is((await get(off, '/api/v1/admin/users', key(off.user.apiKey))).status, 200);
  const mirror = await get(off, '/api/admin/users', key(off.user.apiKey));
  assert.equal([mirror.status, mirror.body.error], [403, 'session_required']);
  assert.is((await get(off, '/api/admin/users', browser(off.s, off.userSession))).status, 200);
  assert.is((await get(off, '/api/templates', browser(off.s, off.userSession))).status, 200);
  assert.is((await get(off, '/api/admin/no-such-page', key(off.user.apiKey))).status, 404);
  // The connector checks the admin role whatever the setting says; its mirror wants a session first.
  const v1 = await get(off, `/api/v1/agents/${NOWHERE}/chatsvc`, key(off.user.apiKey));
  assert.equal([v1.status, v1.body.message], [403, 'admin role required']);
  const connector = await get(off, `/api/admin/agents/${NOWHERE}/chatsvc`, key(off.user.apiKey));
  assert.equal([connector.status, connector.body.error], [403, 'session_required']);
  const asSession = await get(off, `/api/admin/agents/${NOWHERE}/chatsvc`, browser(off.s, off.userSession));
  assert.equal([asSession.status, asSession.body.message], [403, 'admin role required']);
  // The raw log holds every account's personal data: its routes check the admin role themselves.
  assert.is((await get(off, '/api/v1/admin/events', key(off.user.apiKey))).body.message, 'admin role required');
  // Rotating another account's key hands out keys: the admin check holds.
  const rotate = await http(`${off.s.orch}/api/v1/admin/users/${off.user.id}/api-key/rotate`, {
    method: 'POST',
    headers: browser(off.s, off.userSession),
  });
  assert.equal([rotate.status, rotate.body.error], [403, 'api_key_rotation_requires_admin']);
});

test.run();
