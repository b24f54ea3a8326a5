// A change whose read model does not catch up in time: the command's events are in the log, so
// each service answers its documented 503 `projection_lagging` with Retry-After (never a 500 and a
// stack trace), and the change is there once the projections run again. The platform is opened
// with a short read-your-writes timeout and its projections stopped, as a stalled projection
// process would leave them.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PROJECTION_LAG_RETRY_AFTER_S } from '../../api/shared/base.ts';
import { SERVICES } from '../../main/apps.ts';
import { offlineDocument } from '../../main/openapi.ts';
import { bearer, registerChat } from '../support/chat.ts';
import { interactive, REGISTRY_ENV } from '../support/registry.ts';
import { http, loggedEvents, startTestApps, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_lagging-admin-key-0000000000000000';
interface Ctx {
  s: TestServices;
  chatUser: Awaited<ReturnType<typeof registerChat>>;
  registryAdmin: Awaited<ReturnType<typeof interactive>>;
}
const test = suite<Ctx>('a read model behind its log: 503 projection_lagging');

test.before(async (ctx) => {
  ctx.s = await startTestApps('lag', { ADMIN_API_KEY: ADMIN_KEY, ...REGISTRY_ENV });
  // The chat caller registers at the usual timeout (a registration waits for several
  // projections, which a loaded machine can take longer than 150 ms to run); then the platform
  // starts again with the short one, on the same database.
  ctx.chatUser = await registerChat(ctx.s.chat);
  ctx.s.platformOptions = { readYourWritesTimeoutMs: 150 };
  await ctx.s.restart();
  // A registry session is bound to the apps' origin, which a restart changes: made after it.
  ctx.registryAdmin = await interactive(ctx.s, 'lagging-admin', 'admin');
});
test.after(async ({ s }) => s?.close());

const types = async (s: TestServices) => (await loggedEvents(s)).map((e) => e.type);

test('each service: 503 with Retry-After and its error body; the event is in the log; no unhandled error', async ({
  s,
  chatUser,
  registryAdmin,
}) => {
  await s.platform.engine.stop();

  const orch = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username: 'lagging', email: 'lagging@example.test', role: 'user', password: 'a long enough password' },
  });
  assert.is(orch.status, 503, orch.text);
  assert.is(orch.headers.get('retry-after'), String(PROJECTION_LAG_RETRY_AFTER_S));
  assert.is(orch.body.error, 'projection_lagging');
  assert.is(orch.body.retry_after, PROJECTION_LAG_RETRY_AFTER_S);
  assert.match(orch.body.message, /recorded/);

  const chat = await http(`${s.chat}/api/account/profile`, {
    method: 'PATCH',
    headers: bearer(chatUser),
    json: { display_name: 'Lagging' },
  });
  assert.is(chat.status, 503, chat.text);
  assert.is(chat.headers.get('retry-after'), String(PROJECTION_LAG_RETRY_AFTER_S));
  assert.match(chat.body.error, /recorded/);

  const registry = await http(`${s.registry}/api/v1/customers`, {
    headers: registryAdmin.headers,
    json: { name: 'Lagging Ltd', slug: 'lagging-ltd' },
  });
  assert.is(registry.status, 503, registry.text);
  assert.is(registry.body.error.code, 'projection_lagging');

  // The changes stand: the log holds them, and no handler failed unhandled.
  const logged = await types(s);
  for (const type of ['UserCreated', 'CustomerCreated']) assert.ok(logged.includes(type), `${type} in the log`);
  assert.not.ok(s.logLines.some((line) => line.includes('unhandled_error')));
  assert.ok(s.logLines.some((line) => line.includes('projection_lagging')));
});

test('every route documents the 503 projection_lagging', () => {
  for (const service of SERVICES) {
    const doc = offlineDocument(service) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item))
        assert.ok(operation.responses['503'], `${service}: ${method.toUpperCase()} ${p} declares 503`);
    }
  }
});

test.run();
