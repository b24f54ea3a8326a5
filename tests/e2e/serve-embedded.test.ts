// `orchard serve all` as `npm start` runs it on a fresh machine: no DATABASE_URL, so it starts
// its own embedded PostgreSQL under DATA_DIR, answers the three health routes and /api/v1/me,
// keeps its data across a restart, and stops everything on SIGTERM.

import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort } from '../../infra/db/embedded.ts';
import { startOrchard, type RunningOrchard } from '../support/cli.ts';
import { http } from '../support/services.ts';

const ADMIN_KEY = 'orch_embedded-admin-key-0000000000000000';

/** `orchard serve all` without this process's DATABASE_URL, once all three services say they listen. */
async function serve(env: Record<string, string>): Promise<RunningOrchard> {
  const clean = { ...process.env };
  delete clean.DATABASE_URL;
  const running = startOrchard(['serve', 'all'], { env: { ...clean, ...env } });
  await running.waitFor(
    'three services listening',
    () => (running.output().match(/"msg":"listening"/g) ?? []).length >= 3,
    60_000,
  );
  return running;
}

const test = suite<{ dataDir: string; env: Record<string, string> }>('e2e: serve all on the embedded PostgreSQL');
test.before(async (ctx) => {
  ctx.dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-serve-'));
  ctx.env = {
    DATA_DIR: ctx.dataDir,
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'info',
    ORCH_LISTEN: `127.0.0.1:${await freePort()}`,
    CHATSVC_LISTEN: `127.0.0.1:${await freePort()}`,
    REGISTRY_LISTEN: `127.0.0.1:${await freePort()}`,
  };
});
test.after(async ({ dataDir }) => {
  // As root, a cluster out of the postgres user's reach lives elsewhere; DATA_DIR says where.
  const pointer = path.join(dataDir, 'pg.location');
  if (existsSync(pointer)) await rm((await readFile(pointer, 'utf8')).trim(), { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

test('starts its own database, answers health and /api/v1/me, stops cleanly, and keeps its data', async ({
  env,
  dataDir,
}) => {
  const first = await serve(env);
  const orch = `http://${env.ORCH_LISTEN}`;
  assert.is((await http(`${orch}/api/v1/health`)).body.status, 'ok');
  assert.is((await http(`${orch}/api/v1/health/db`)).status, 200);
  assert.is((await http(`http://${env.CHATSVC_LISTEN}/api/health`)).body.db_healthy, true);
  assert.is((await http(`http://${env.REGISTRY_LISTEN}/health`)).status, 200);
  const me = await http(`${orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } });
  assert.is(me.status, 200);
  assert.is(me.body.api_key, ADMIN_KEY);
  // The generated sealing key lives under DATA_DIR, readable by its owner only.
  assert.ok(existsSync(path.join(dataDir, 'secret.key')));
  assert.match((await readFile(path.join(dataDir, 'secret.key'), 'utf8')).trim(), /^[0-9a-f]{64}$/);
  assert.not.ok(first.output().includes(ADMIN_KEY));

  first.child.kill('SIGTERM');
  assert.is(await first.exited, 0);
  assert.not.ok(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 'the embedded server stopped');

  const second = await serve(env);
  const again = await http(`${orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } });
  assert.is(again.status, 200);
  assert.is(again.body.id, me.body.id);
  assert.is(again.body.created_at, me.body.created_at);
  second.child.kill('SIGTERM');
  assert.is(await second.exited, 0);
});

test.run();
