// Keyed requests are answered from an in-process cache only while this process runs the users
// and sessions projections; a standby process reads the database. Both refuse a rotated key or a
// deactivated account on the very next request.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logging.ts';
import { openPlatform, type Platform } from '../../main/platform.ts';
import { startServices, type RunningService } from '../../main/serve.ts';
import { browser, createAccount, login } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_cache-admin-key-000000000000000000';

interface Ctx {
  s: TestServices;
  standby: Platform;
  standbyService: RunningService;
}
const test = suite<Ctx>('e2e: principal cache across processes');
test.before(async (ctx) => {
  ctx.s = await startTestServices('principal_cache', { ADMIN_API_KEY: ADMIN_KEY });
  // A second server on the same database: the first holds the projections, this one stands by.
  ctx.standby = await openPlatform(
    loadConfig({ ...ctx.s.env, ORCH_LISTEN: '127.0.0.1:0' }),
    createLogger({ sink: () => {} }),
  );
  ctx.standbyService = (await startServices(ctx.standby, ['orch']))[0]!;
});
test.after(async ({ s, standby, standbyService }) => {
  await standbyService?.close();
  await standby?.close();
  await s?.close();
});

test('the first server runs the projections; the second stands by', async ({ s, standby }) => {
  assert.ok(s.platform.engine.isActive('users'));
  assert.not.ok(standby.engine.isActive('users'));
});

test('a key rotated on one server is refused on both, on the very next request', async ({ s, standbyService }) => {
  const user = await createAccount(s, ADMIN_KEY, 'user', 'cached');
  for (const base of [s.orch, standbyService.url]) {
    for (let i = 0; i < 3; i++)
      assert.is((await http(`${base}/api/v1/me`, { headers: { 'X-API-Key': user.apiKey } })).status, 200); // warm
  }
  const session = await login(s, user);
  // Rotate through the standby server: it waits for the first server's projections.
  const rotated = await http(`${standbyService.url}/api/v1/me/api-key/rotate`, {
    method: 'POST',
    headers: { ...browser(s, session), origin: standbyService.url },
  });
  assert.is(rotated.status, 200);
  for (const base of [s.orch, standbyService.url]) {
    assert.is((await http(`${base}/api/v1/me`, { headers: { 'X-API-Key': user.apiKey } })).status, 401, base);
    assert.is((await http(`${base}/api/v1/me`, { headers: { 'X-API-Key': rotated.body.api_key } })).status, 200, base);
  }
});

test('a deactivated account is refused on both servers at once, key and session', async ({ s, standbyService }) => {
  const user = await createAccount(s, ADMIN_KEY, 'user', 'cached-off');
  const session = await login(s, user);
  for (const base of [s.orch, standbyService.url]) {
    assert.is((await http(`${base}/api/v1/me`, { headers: { 'X-API-Key': user.apiKey } })).status, 200);
    assert.is((await http(`${base}/api/v1/me`, { headers: { cookie: session.cookie } })).status, 200);
  }
  const off = await http(`${standbyService.url}/api/v1/admin/users/${user.id}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { is_active: false },
  });
  assert.is(off.status, 200);
  for (const base of [s.orch, standbyService.url]) {
    assert.is((await http(`${base}/api/v1/me`, { headers: { 'X-API-Key': user.apiKey } })).status, 401, base);
    assert.is((await http(`${base}/api/v1/me`, { headers: { cookie: session.cookie } })).status, 401, base);
  }
});

test.run();
