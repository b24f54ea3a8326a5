// Managed updates end to end on the process runtime: releases built from this working tree
// (1.0.0, and later ones with one more migration), signed with `orchard release keygen`/`sign`,
// served by a local manifest host; the real sidecar (`orchard serve sidecar`) runs the services
// as children on a throw-away PostgreSQL cluster of the installed pg_dump's major. Applies from
// each service, and the faults a real sidecar meets: digest mismatch, a failing migration
// (rolled back, every table as before), kill -9 while migrating (recovered), a failed restore
// (frozen, then `orchard updates unfreeze`), a missing requirement (delivery_incomplete), and a
// write during maintenance (503, nothing lost).

import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '../../infra/db/embedded.ts';
import { orchard, startOrchard } from '../support/cli.ts';
import { buildRelease, unpackRelease, type Release } from '../support/releases.ts';
import { signedFetch, StaticHost, TOKEN_TEXT } from '../support/updates.ts';
import { until } from '../support/until.ts';
import { http } from '../support/services.ts';
import { browser, createAccount, login, type Session } from '../support/principals.ts';
import { registerChat, bearer } from '../support/chat.ts';

const ADMIN_KEY = 'orch_updates-e2e-admin-key-000000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const PG_BINDIR = (() => {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
})();

interface Ctx {
  dir: string;
  pg: EmbeddedServer;
  host: StaticHost;
  env: Record<string, string>;
  sidecar: ChildProcess | null;
  sidecarUrl: string;
  orch: string;
  chat: string;
  registry: string;
  releases: Record<string, Release>;
  keyFile: string;
  stderr: string[];
}
const test = suite<Ctx>('e2e: managed updates on the process runtime');

async function startSidecar(ctx: Ctx, extra: Record<string, string> = {}): Promise<void> {
  const sidecar = startOrchard(['serve', 'sidecar', '--enable-failpoints'], {
    env: { ...process.env, ...ctx.env, ...extra },
  });
  ctx.stderr = sidecar.stderr;
  ctx.sidecar = sidecar.child;
  await until('the sidecar', async () => (await fetch(`${ctx.sidecarUrl}/health`)).ok, 60_000);
}

async function stopSidecar(ctx: Ctx, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const child = ctx.sidecar;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/** The services the sidecar runs (their pid file), stopped for good at the end. */
async function stopServices(ctx: Ctx): Promise<void> {
  const file = path.join(ctx.dir, 'updater', 'services.pid');
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  try {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100; i++) {
      process.kill(pid, 0);
      await new Promise((r) => setTimeout(r, 100));
    }
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

const health = async (ctx: Ctx) => (await http(`${ctx.orch}/api/v1/health`)).body;
const runningVersion = (ctx: Ctx, version: string, ms?: number) =>
  until(`version ${version}`, async () => (await health(ctx))?.version === version, ms);

function manifestFor(ctx: Ctx, release: Release, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: 1,
    channel: 'stable',
    version: release.version,
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    image: { repository: 'registry.example/orchard', digest: `sha256:${'ab'.repeat(32)}` },
    artifact: { url: `${ctx.host.url}/artifacts/${release.version}.tar.gz`, sha256: release.sha256 },
    migrations: release.migrations,
    requirements: [],
    ...overrides,
  };
}

async function signManifest(ctx: Ctx, manifest: Record<string, unknown>): Promise<unknown> {
  const file = path.join(ctx.dir, `manifest-${randomUUID()}.json`);
  await writeFile(file, JSON.stringify(manifest, null, 2));
  const signed = await orchard({}, 'release', 'sign', ctx.keyFile, file);
  assert.is(signed.code, 0, signed.stderr);
  return JSON.parse(signed.stdout);
}

async function publish(ctx: Ctx, manifest: Record<string, unknown>): Promise<unknown> {
  const envelope = await signManifest(ctx, manifest);
  ctx.host.channel('stable', envelope);
  return envelope;
}

/** Apply straight through the sidecar's signed API, and wait for the end. */
async function applyDirect(ctx: Ctx, envelope: unknown, source = 'orch'): Promise<any> {
  const id = randomUUID();
  const r = await signedFetch(ctx.sidecarUrl, 'POST', '/v1/apply', {
    apply_id: id,
    manifest: envelope,
    requested_by: 'e2e',
    source,
  });
  assert.is(r.status, 202, JSON.stringify(r.body));
  return waitApply(ctx, id);
}

const waitApply = (ctx: Ctx, id: string) =>
  until(
    `apply ${id}`,
    async () => {
      const r = await signedFetch(ctx.sidecarUrl, 'GET', `/v1/apply/${id}`);
      return ['succeeded', 'failed', 'rolled_back', 'recovered', 'frozen'].includes(r.body?.state) ? r.body : null;
    },
    240_000,
  );

/**
 * Each table's rows as a checksum, except the log, what grows with it (the audit chain and its
 * checkpoints: the apply's own events are chained too) and the read models updates write.
 */
async function tableChecksums(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
    );
    const out: Record<string, string> = {};
    for (const { table_name } of rows) {
      if (
        ['events', 'event_chain', 'audit_checkpoints', 'projection_checkpoints'].includes(table_name) ||
        table_name.startsWith('update_')
      )
        continue;
      const r = await client.query(
        `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM "${table_name}" t`,
      );
      out[table_name] = r.rows[0].sum;
    }
    return out;
  } finally {
    await client.end();
  }
}

/** The audit chain's links, oldest first: a rollback keeps those it had and extends them. */
async function chainLinks(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(`SELECT t::text AS link FROM event_chain t ORDER BY seq`)).rows.map((r) => r.link);
  } finally {
    await client.end();
  }
}

async function eventIds(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (
      await client.query(
        `SELECT event_id::text AS id FROM events WHERE type NOT LIKE 'Update%' AND type NOT LIKE 'Maintenance%' ORDER BY position`,
      )
    ).rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

test.before(async (ctx) => {
  if (!PG_BINDIR) return;
  try {
    await setUp(ctx);
  } catch (error) {
    console.error('set-up failed:', error);
    throw error;
  }
});

async function setUp(ctx: Ctx) {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-updates-e2e-'));
  ctx.pg = await startEmbeddedPostgres(path.join(ctx.dir, 'pg'), {
    persistent: false,
    durable: false,
    binDir: PG_BINDIR!,
  });
  const keys = await orchard({}, 'release', 'keygen', path.join(ctx.dir, 'release'));
  assert.is(keys.code, 0, keys.stderr);
  ctx.keyFile = path.join(ctx.dir, 'release.key');
  ctx.releases = {};
  const probe = { '900_release_probe.sql': 'CREATE TABLE release_probe (id int PRIMARY KEY);\n' };
  for (const [version, migrations] of [
    ['1.0.0', {}],
    ['1.1.0', probe],
    ['1.2.0', { ...probe, '901_fails.sql': 'SELECT 1 / 0;\n' }],
    ['1.2.1', probe],
    ['1.2.2', { ...probe, '901_fails.sql': 'SELECT 1 / 0;\n' }],
    ['1.3.0', probe],
  ] as const) {
    ctx.releases[version] = await buildRelease(ctx.dir, version, migrations);
  }
  ctx.host = await new StaticHost().start();
  for (const r of Object.values(ctx.releases))
    ctx.host.routes.set(`/artifacts/${r.version}.tar.gz`, {
      status: 200,
      body: await readFile(r.file),
      type: 'application/gzip',
    });
  const releasesDir = path.join(ctx.dir, 'releases');
  await unpackRelease(ctx.releases['1.0.0']!, releasesDir);
  await symlink('1.0.0', path.join(releasesDir, 'current'));
  const tokenFile = path.join(ctx.dir, 'updater_token');
  await writeFile(tokenFile, TOKEN_TEXT + '\n', { mode: 0o600 });
  await writeFile(path.join(ctx.dir, 'admin.key'), ADMIN_KEY + '\n', { mode: 0o600 });
  const [orchPort, chatPort, registryPort, sidecarPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  ctx.orch = `http://127.0.0.1:${orchPort}`;
  ctx.chat = `http://127.0.0.1:${chatPort}`;
  ctx.registry = `http://127.0.0.1:${registryPort}`;
  ctx.sidecarUrl = `http://127.0.0.1:${sidecarPort}`;
  ctx.env = {
    DATABASE_URL: ctx.pg.url,
    DATA_DIR: path.join(ctx.dir, 'data'),
    ORCH_SECRET_KEY: 'b2'.repeat(32),
    ADMIN_API_KEY_FILE: path.join(ctx.dir, 'admin.key'),
    ORCH_LISTEN: `127.0.0.1:${orchPort}`,
    CHATSVC_LISTEN: `127.0.0.1:${chatPort}`,
    REGISTRY_LISTEN: `127.0.0.1:${registryPort}`,
    ORCH_UPDATER_LISTEN: `127.0.0.1:${sidecarPort}`,
    ORCH_UPDATER_RUNTIME: 'process',
    ORCH_UPDATER_DATA_DIR: path.join(ctx.dir, 'updater'),
    ORCH_UPDATER_RELEASES_DIR: releasesDir,
    ORCH_UPDATER_PG_BINDIR: PG_BINDIR!,
    ORCH_UPDATER_API_TOKEN_FILE: tokenFile,
    UPDATER_API_TOKEN_FILE: tokenFile,
    ORCH_UPDATER_PUBLIC_KEY_FILE: path.join(ctx.dir, 'release.pub'),
    ORCH_UPDATE_MANIFEST_HOST: ctx.host.url,
    UPDATE_MANIFEST_HOST: ctx.host.url,
    ORCH_UPDATER_HEALTH_GRACE_SECS: '90',
    ORCH_UPDATER_DRAIN_SECS: '10',
    ORCH_UPDATER_DELIVERY_CHECK_SECS: '0',
    LOG_LEVEL: 'warn',
  };
  await startSidecar(ctx);
  try {
    await runningVersion(ctx, '1.0.0', 60_000);
  } catch (error) {
    const logs = path.join(ctx.dir, 'updater', 'logs');
    const { readdir } = await import('node:fs/promises');
    const tails = existsSync(logs)
      ? await Promise.all(
          (await readdir(logs)).map(async (f) => `${f}: ${(await readFile(path.join(logs, f), 'utf8')).slice(-2000)}`),
        )
      : [];
    throw new Error(`${(error as Error).message}\nsidecar: ${ctx.stderr.join('').slice(-2000)}\n${tails.join('\n')}`);
  }
}

test.after(async (ctx) => {
  if (!ctx.dir) return;
  await stopSidecar(ctx);
  await stopServices(ctx);
  await ctx.host?.stop();
  await ctx.pg?.stop();
  await rm(ctx.dir, { recursive: true, force: true });
});

test("the cluster runs the installed pg_dump's major, and the sidecar runs 1.0.0", async (ctx) => {
  if (!PG_BINDIR) return console.log('  (no pg_config: skipped)');
  const client = new pg.Client({ connectionString: ctx.pg.url });
  await client.connect();
  const major = Math.floor(Number((await client.query('SHOW server_version_num')).rows[0].server_version_num) / 10000);
  await client.end();
  assert.match(
    execFileSync(path.join(PG_BINDIR, 'pg_dump'), ['--version'], { encoding: 'utf8' }),
    new RegExp(`\\b${major}\\.`),
  );
  assert.is((await health(ctx)).version, '1.0.0');
  assert.is((await signedFetch(ctx.sidecarUrl, 'GET', '/v1/status')).body.version, '1.0.0');
});

test('from orchestration: check, apply 1.1.0 (one more migration), success; writes in maintenance get 503 and none is lost', async (ctx) => {
  if (!PG_BINDIR) return;
  await publish(ctx, manifestFor(ctx, ctx.releases['1.1.0']!));
  const account = await createAccount({ orch: ctx.orch } as never, ADMIN_KEY, 'admin');
  const session: Session = await login({ orch: ctx.orch } as never, account);
  const checked = await http(`${ctx.orch}/api/v1/admin/updates/check`, { method: 'POST', headers: admin });
  assert.equal([checked.status, checked.body.latest_version, checked.body.update_available], [200, '1.1.0', true]);
  const started = await http(`${ctx.orch}/api/admin/updates/apply`, {
    headers: browser({ orch: ctx.orch } as never, session),
    json: { target_version: '1.1.0' },
  });
  assert.is(started.status, 202, started.text);
  // Writes until the service refuses them or stops answering: each accepted one must survive.
  const accepted: string[] = [];
  let refused = null;
  for (let i = 0; i < 2000 && !refused; i++) {
    const name = `during-${i}`;
    let r;
    try {
      r = await http(`${ctx.orch}/api/v1/admin/users`, {
        headers: admin,
        json: { username: name, email: `${name}@example.test`, role: 'user' },
      });
    } catch {
      break; // drained
    }
    if (r.status === 201) accepted.push(name);
    else if (r.status === 503) refused = r;
    else break;
  }
  assert.ok(refused, 'a write during maintenance was refused');
  assert.equal([refused!.body.error, refused!.headers.get('retry-after')], ['maintenance', '30']);
  const done = await waitApply(ctx, started.body.apply_id);
  assert.equal([done.state, done.outcome, done.error], ['succeeded', 'success', null]);
  await runningVersion(ctx, '1.1.0');
  assert.is((await http(`${ctx.orch}/api/v1/health/db`)).body.latest_migration, '900_release_probe');
  assert.equal((await health(ctx)).maintenance, { active: false, read_only: false });
  const users = (await http(`${ctx.orch}/api/v1/admin/users?limit=200`, { headers: admin })).body.users.map(
    (u: { username: string }) => u.username,
  );
  for (const name of accepted) assert.ok(users.includes(name), `${name} survived`);
  // The route, the events and replay agree.
  const route = await until('the apply in the log', async () => {
    const r = await http(`${ctx.orch}/api/v1/admin/updates/apply/${started.body.apply_id}`, { headers: admin });
    return r.body?.outcome === 'success' && r.body.events.length > 10 ? r.body : null;
  });
  const events = (await signedFetch(ctx.sidecarUrl, 'GET', `/v1/apply/${started.body.apply_id}/events`)).body.events;
  assert.equal(
    route.events.map((e: { step: string }) => e.step),
    events.map((e: { type: string }) => e.type),
  );
  const replay = await orchard({ ...ctx.env, LOG_LEVEL: 'error' }, 'replay', '--type', 'UpdateApplyJournaled');
  assert.is(replay.code, 0, replay.stderr);
  const replayed = replay.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.data.apply_id === started.body.apply_id);
  assert.equal(
    replayed.map((e) => e.data.step),
    events.map((e: { type: string }) => e.type),
  );
  assert.equal(
    replayed.map((e) => e.id),
    events.map((e: { id: string }) => e.id),
  );
});

test('a digest mismatch fails in pre-flight: nothing touched', async (ctx) => {
  if (!PG_BINDIR) return;
  const envelope = await signManifest(
    ctx,
    manifestFor(ctx, ctx.releases['1.2.0']!, {
      artifact: { url: `${ctx.host.url}/artifacts/1.2.0.tar.gz`, sha256: 'ee'.repeat(32) },
    }),
  );
  const done = await applyDirect(ctx, envelope);
  assert.equal([done.state, done.outcome, done.error.code], ['failed', null, 'digest_mismatch']);
  assert.is((await health(ctx)).version, '1.1.0');
});

test('a failing migration rolls back: the prior release runs, every table as before, no accepted event lost', async (ctx) => {
  if (!PG_BINDIR) return;
  const before = await tableChecksums(ctx.pg.url);
  const eventsBefore = await eventIds(ctx.pg.url);
  const chainBefore = await chainLinks(ctx.pg.url);
  const done = await applyDirect(ctx, await signManifest(ctx, manifestFor(ctx, ctx.releases['1.2.0']!)));
  assert.equal([done.state, done.outcome, done.error.code], ['rolled_back', 'rolled_back', 'migration_failed']);
  await runningVersion(ctx, '1.1.0');
  assert.equal(await tableChecksums(ctx.pg.url), before);
  assert.equal((await eventIds(ctx.pg.url)).slice(0, eventsBefore.length), eventsBefore);
  assert.equal((await chainLinks(ctx.pg.url)).slice(0, chainBefore.length), chainBefore);
});

test('kill -9 while migrating: the restarted sidecar rolls back (recovered)', async (ctx) => {
  if (!PG_BINDIR) return;
  await stopSidecar(ctx);
  await startSidecar(ctx, { ORCH_UPDATER_FAILPOINTS: 'migrating=crash' });
  await runningVersion(ctx, '1.1.0');
  const id = randomUUID();
  const exited = new Promise<NodeJS.Signals | null>((r) => ctx.sidecar!.once('exit', (_code, signal) => r(signal)));
  const r = await signedFetch(ctx.sidecarUrl, 'POST', '/v1/apply', {
    apply_id: id,
    manifest: await signManifest(ctx, manifestFor(ctx, ctx.releases['1.2.1']!)),
    requested_by: 'e2e',
    source: 'orch',
  });
  assert.is(r.status, 202);
  assert.is(await exited, 'SIGKILL');
  await startSidecar(ctx);
  const done = await waitApply(ctx, id);
  assert.equal([done.state, done.outcome, done.error.code], ['recovered', 'rolled_back', 'interrupted']);
  await runningVersion(ctx, '1.1.0');
});

test('a failed restore freezes; applies are refused until `orchard updates unfreeze`', async (ctx) => {
  if (!PG_BINDIR) return;
  await stopSidecar(ctx);
  await startSidecar(ctx, { ORCH_UPDATER_FAILPOINTS: 'restoring_snapshot=error' });
  const done = await applyDirect(ctx, await signManifest(ctx, manifestFor(ctx, ctx.releases['1.2.2']!)));
  assert.equal([done.state, done.outcome, done.error.code], ['frozen', 'frozen', 'failpoint']);
  const refused = await signedFetch(ctx.sidecarUrl, 'POST', '/v1/apply', {
    apply_id: randomUUID(),
    manifest: {},
    requested_by: 'e2e',
    source: 'orch',
  });
  assert.equal([refused.status, refused.body.error], [409, 'apply_frozen']);
  // The operator repairs by hand (here: the failed migration left nothing; the prior release starts again), then unfreezes.
  await stopSidecar(ctx);
  await startSidecar(ctx);
  await runningVersion(ctx, '1.1.0');
  assert.equal((await health(ctx)).maintenance, { active: true, read_only: true });
  const unfreeze = await orchard(
    { ...ctx.env, ORCH_UPDATER_URL: ctx.sidecarUrl },
    'updates',
    'unfreeze',
    done.apply_id,
  );
  assert.is(unfreeze.code, 0, unfreeze.stderr);
  await until('maintenance lifted', async () => (await health(ctx)).maintenance.active === false);
  assert.is((await signedFetch(ctx.sidecarUrl, 'GET', '/v1/status')).body.frozen, null);
});

test('from chat: apply 1.3.0 with a missing requirement: healthy, delivery_incomplete', async (ctx) => {
  if (!PG_BINDIR) return;
  await publish(
    ctx,
    manifestFor(ctx, ctx.releases['1.3.0']!, {
      requirements: [
        {
          id: 'new-key',
          kind: 'env',
          target: 'ORCHARD_E2E_MISSING',
          action: 'set ORCHARD_E2E_MISSING in compose.yaml',
        },
      ],
    }),
  );
  const owner = await registerChat(ctx.chat);
  const checked = await http(`${ctx.chat}/api/admin/updates/check`, { method: 'POST', headers: bearer(owner) });
  assert.equal([checked.status, checked.body.latest_version], [200, '1.3.0']);
  const started = await http(`${ctx.chat}/api/admin/updates/apply`, {
    headers: bearer(owner),
    json: { target_version: '1.3.0' },
  });
  assert.is(started.status, 202, started.text);
  const done = await waitApply(ctx, started.body.apply_id);
  assert.equal(
    [done.state, done.outcome, done.error.requirements],
    [
      'succeeded',
      'delivery_incomplete',
      [{ id: 'new-key', status: 'missing', action: 'set ORCHARD_E2E_MISSING in compose.yaml' }],
    ],
  );
  await until('chat at 1.3.0', async () => (await http(`${ctx.chat}/api/health`)).body?.version === '1.3.0');
  const progress = await until('chat progress', async () => {
    const relogin = await http(`${ctx.chat}/api/auth/login`, {
      json: { username: owner.username, password: owner.password },
    });
    const r = await http(`${ctx.chat}/api/admin/updates/apply/${started.body.apply_id}`, {
      headers: { authorization: `Bearer ${relogin.body.access_token}` },
    });
    return r.status === 200 ? r.body : null;
  });
  assert.equal([progress.state, progress.outcome], ['succeeded', 'delivery_incomplete']);
});

test.run();
