// The foundation end to end: the three health routes, the admin account from ADMIN_API_KEY,
// GET /api/v1/me, read-your-writes across a restart, and no secret in the log or log lines.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createChatApp } from '../../api/chat/app.ts';
import { createOrchestrationApp } from '../../api/orchestration/app.ts';
import { createRegistryApp } from '../../api/registry/app.ts';
import { createPool } from '../../infra/db/pool.ts';
import { chatDeps, orchDeps, registryDeps } from '../../main/apps.ts';
import { http, logText, startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_admin-first-key-0123456789abcdef';
const ROTATED_KEY = 'orch_admin-second-key-fedcba9876543210';

const test = suite<{ s: TestServices }>('e2e foundation');
test.before(async (ctx) => {
  ctx.s = await startTestServices('foundation', { ADMIN_API_KEY: ADMIN_KEY });
});
test.after(async ({ s }) => s?.close());

test('orchestration health: liveness with version and the chat-service socket status', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/health`);
  assert.is(r.status, 200);
  assert.is(r.body.status, 'ok');
  assert.is(r.body.version, s.platform.version);
  assert.type(r.body.integrations.chatsvc_bot_ws.status, 'string');
  assert.ok(r.headers.get('x-request-id'));
});

test('orchestration health/db: migrations applied and the latest one', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/health/db`);
  assert.is(r.status, 200);
  assert.is(r.body.status, 'ok');
  const { rows } = await s.db.pool.query('SELECT count(*)::int AS n, max(name) AS latest FROM schema_migrations');
  assert.is(r.body.migrations_applied, rows[0].n);
  assert.ok(r.body.migrations_applied >= 2);
  assert.is(r.body.latest_migration, rows[0].latest);
});

test('chat and registry health', async ({ s }) => {
  const chat = await http(`${s.chat}/api/health`);
  assert.is(chat.status, 200);
  assert.equal(Object.keys(chat.body).sort(), ['db_healthy', 'maintenance', 'status', 'uptime_secs', 'version']);
  assert.is(chat.body.db_healthy, true);
  assert.equal(chat.body.maintenance, { active: false, read_only: false });
  assert.is(chat.body.status, 'ok');
  assert.type(chat.body.uptime_secs, 'number');
  const registry = await http(`${s.registry}/health`);
  assert.is(registry.status, 200);
  assert.is(registry.body.status, 'ok');
});

test('with the database unreachable: health/db and registry 503, chat reports db_healthy false, liveness stays 200', async ({
  s,
}) => {
  const dead = createPool('postgres://nobody@127.0.0.1:1/none', { max: 1 });
  try {
    const orch = createOrchestrationApp({ ...orchDeps(s.platform), db: dead });
    assert.is((await orch.request('/api/v1/health')).status, 200);
    const db = await orch.request('/api/v1/health/db');
    assert.is(db.status, 503);
    assert.is(((await db.json()) as { status: string }).status, 'unavailable');
    assert.is((await createRegistryApp({ ...registryDeps(s.platform), db: dead }).request('/health')).status, 503);
    const chat = await createChatApp({ ...chatDeps(s.platform), db: dead }).request('/api/health');
    assert.is(chat.status, 503);
    assert.is(((await chat.json()) as { db_healthy: boolean }).db_healthy, false);
  } finally {
    await dead.end();
  }
});

test('GET /api/v1/me with the admin key: every field, the key in plaintext', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } });
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), [
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
  assert.is(r.body.api_key, ADMIN_KEY);
  assert.is(r.body.role, 'admin');
  assert.is(r.body.is_active, true);
  assert.ok(!Number.isNaN(Date.parse(r.body.created_at)));
});

test('GET /api/v1/me: 401 without a key, 401 with a wrong key, each with its message', async ({ s }) => {
  const missing = await http(`${s.orch}/api/v1/me`);
  assert.is(missing.status, 401);
  assert.is(missing.body.message, 'missing X-API-Key header');
  assert.is(missing.body.error, 'unauthorized');
  const wrong = await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': 'orch_not-a-key' } });
  assert.is(wrong.status, 401);
  assert.is(wrong.body.message, 'invalid or inactive API key');
});

test('a restart with the same key changes nothing; a changed key rotates the admin, as an event', async ({ s }) => {
  const count = async () =>
    Number((await s.db.pool.query(`SELECT count(*) FROM events WHERE stream_id LIKE 'orch.user-%'`)).rows[0].count);
  const before = await count();
  await s.restart();
  assert.is(await count(), before);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } })).status, 200);

  await s.restart({ ADMIN_API_KEY: ROTATED_KEY });
  assert.is(await count(), before + 1);
  const { rows } = await s.db.pool.query(
    `SELECT type, data->>'reason' AS reason FROM events WHERE stream_id LIKE 'orch.user-%' ORDER BY position DESC LIMIT 1`,
  );
  assert.equal(rows[0], { type: 'UserApiKeyRotated', reason: 'admin_api_key_changed' });
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } })).status, 401);
  const me = await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': ROTATED_KEY } });
  assert.is(me.status, 200);
  assert.is(me.body.api_key, ROTATED_KEY);
});

test('no key reaches the log or a log line in plaintext; the log holds its hash and a sealed copy', async ({ s }) => {
  const log = await logText(s);
  const lines = s.logLines.join('\n');
  for (const secret of [ADMIN_KEY, ROTATED_KEY]) {
    assert.not.ok(log.includes(secret), 'key in the log');
    assert.not.ok(lines.includes(secret), 'key in a log line');
  }
  const { rows } = await s.db.pool.query(`SELECT data FROM events WHERE type = 'UserCreated'`);
  assert.match(rows[0].data.api_key_hash, /^[0-9a-f]{64}$/);
  assert.match(rows[0].data.api_key_sealed, /^v1\./);
});

test('unknown routes answer 404 in the service error form', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/nope`);
  assert.is(r.status, 404);
  assert.is(r.body.error, 'not_found');
});

test.run();
