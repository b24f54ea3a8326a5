// The process runtime's standby start, with small fake releases (a bin/orchard.mjs speaking the
// standby protocol, packed and hashed like a real artifact): the new release is loaded before the
// old one is drained, migrates and then serves on the runtime's word, and becomes the running
// services; a release that cannot load fails `prepare` (release_not_ready), a failing migration
// and a failing start are step errors, a rollback's prior release is started from its standby,
// and a standby never outlives what gave it up. The real child side (`orchard serve all
// --standby`) is checked too: it loads without touching the database, and exits when its
// channel closes. The whole path with real releases is tests/e2e/updates-process.test.ts.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Manifest } from '../../domain/updates/manifest.ts';
import { createLogger } from '../../infra/logging.ts';
import { ProcessRuntime } from '../../infra/updater/process-runtime.ts';
import { StepError } from '../../infra/updater/runtime.ts';
import { STANDBY_ABANDONED_EXIT } from '../../infra/updater/standby-protocol.ts';
import { BIN } from '../support/cli.ts';

// A release's CLI. `serve all` without --standby just runs; with it, it follows the protocol.
// FAIL (baked in per release) makes one step fail: load, migrate or serve.
const fakeCli = (fail: '' | 'load' | 'migrate' | 'serve') => `
const FAIL = ${JSON.stringify(fail)};
const keep = setInterval(() => {}, 1000);
process.on('SIGTERM', () => process.exit(0));
if (process.argv.includes('--standby')) {
  if (FAIL === 'load') process.exit(1);
  process.on('disconnect', () => { if (!globalThis.serving) process.exit(${STANDBY_ABANDONED_EXIT}); });
  const say = (m, then) => process.send(m, undefined, {}, then);
  process.on('message', (m) => {
    if (m.type === 'migrate') {
      if (FAIL === 'migrate') return say({ type: 'failed', message: 'migration 900_probe failed: division by zero' }, () => process.exit(1));
      say({ type: 'migrated', applied: ['900_probe'] });
    }
    if (m.type === 'serve') {
      if (FAIL === 'serve') return say({ type: 'failed', message: 'cannot listen on 127.0.0.1:1: the address is already in use' }, () => process.exit(1));
      globalThis.serving = true;
      say({ type: 'listening' }, () => process.disconnect());
    }
  });
  say({ type: 'ready' });
}
`;

interface Ctx {
  dir: string;
  releases: string;
  data: string;
  runtime: ProcessRuntime;
}
const test = suite<Ctx>("updates: the process runtime's standby start");

async function fakeRelease(ctx: Ctx, version: string, fail: '' | 'load' | 'migrate' | 'serve' = ''): Promise<Manifest> {
  const build = path.join(ctx.dir, `build-${version}`);
  await mkdir(path.join(build, 'bin'), { recursive: true });
  await writeFile(path.join(build, 'package.json'), JSON.stringify({ name: 'orchard', version }));
  await writeFile(path.join(build, 'bin', 'orchard.mjs'), fakeCli(fail));
  const file = path.join(ctx.data, 'downloads', `${version}.tar.gz`);
  await mkdir(path.dirname(file), { recursive: true });
  await tar.c({ gzip: true, file, cwd: build, portable: true }, ['.']);
  const sha256 = createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
  return {
    schema: 1,
    channel: 'stable',
    version,
    expires_at: '2999-01-01T00:00:00Z',
    image: { repository: 'registry.example/orchard', digest: `sha256:${'ab'.repeat(32)}` },
    artifact: { url: 'http://127.0.0.1:9/unused', sha256 },
    migrations: ['900_probe'],
    requirements: [],
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const pidIn = async (file: string) => Number((await readFile(file, 'utf8')).trim());
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}
async function stepError(fn: () => Promise<unknown>): Promise<StepError> {
  try {
    await fn();
  } catch (error) {
    assert.instance(error, StepError);
    return error as StepError;
  }
  throw new Error('no step error');
}

test.before.each(async (ctx) => {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-process-runtime-'));
  ctx.releases = path.join(ctx.dir, 'releases');
  ctx.data = path.join(ctx.dir, 'updater');
  await mkdir(ctx.releases, { recursive: true });
  ctx.runtime = new ProcessRuntime({
    releasesDir: ctx.releases,
    dataDir: ctx.data,
    databaseUrl: 'postgres://nobody@127.0.0.1:9/none',
    pgBinDir: null,
    drainSecs: 5,
    startSecs: 20,
    health: { orch: 'http://127.0.0.1:9', chat: 'http://127.0.0.1:9', registry: 'http://127.0.0.1:9' },
    env: { PATH: process.env.PATH },
    log: createLogger({ level: 'error', sink: () => {} }),
  });
});
test.after.each(async (ctx) => {
  await ctx.runtime.stopServices();
  await ctx.runtime.close();
  await rm(ctx.dir, { recursive: true, force: true });
});

test("a swap: prepared before the drain, migrated and started on the runtime's word, then the running services", async (ctx) => {
  const old = await fakeRelease(ctx, '1.0.0');
  await ctx.runtime.verifyDigest(old);
  await ctx.runtime.prepare(old.version);
  await ctx.runtime.migrate(old);
  await ctx.runtime.recreate(old);
  const oldPid = await pidIn(path.join(ctx.data, 'services.pid'));
  assert.ok(alive(oldPid));

  const next = await fakeRelease(ctx, '1.1.0');
  await ctx.runtime.verifyDigest(next);
  await ctx.runtime.prepare(next.version);
  const standbyPid = await pidIn(path.join(ctx.data, 'standby.pid'));
  assert.ok(alive(standbyPid) && alive(oldPid), 'the new release loaded while the old one runs');
  assert.is(await readlink(path.join(ctx.releases, 'current')), '1.0.0');

  await ctx.runtime.drain();
  assert.ok(await gone(oldPid), 'drained');
  assert.ok(alive(standbyPid), 'a drain stops the services, not the release it is about to start');
  await ctx.runtime.migrate(next);
  await ctx.runtime.recreate(next);
  assert.is(await readlink(path.join(ctx.releases, 'current')), '1.1.0');
  assert.is(await pidIn(path.join(ctx.data, 'services.pid')), standbyPid, 'the standby is now the services');
  assert.not.ok(existsSync(path.join(ctx.data, 'standby.pid')));
  assert.is(await ctx.runtime.currentVersion(), '1.1.0');
});

test('a release that cannot load fails prepare (release_not_ready), and nothing is left running', async (ctx) => {
  const broken = await fakeRelease(ctx, '1.1.0', 'load');
  await ctx.runtime.verifyDigest(broken);
  const error = await stepError(() => ctx.runtime.prepare(broken.version));
  assert.is(error.code, 'release_not_ready');
  assert.match(error.message, /did not load: it exited \(code 1\)/);
  assert.not.ok(existsSync(path.join(ctx.data, 'standby.pid')));
  assert.is(await ctx.runtime.currentRelease(), null, 'current untouched');
});

test("a failing migration is migration_failed with the release's own reason; a failing start is start_failed", async (ctx) => {
  const failing = await fakeRelease(ctx, '1.1.0', 'migrate');
  await ctx.runtime.verifyDigest(failing);
  await ctx.runtime.prepare(failing.version);
  const pid = await pidIn(path.join(ctx.data, 'standby.pid'));
  const error = await stepError(() => ctx.runtime.migrate(failing));
  assert.is(error.code, 'migration_failed');
  assert.match(error.message, /division by zero/);
  assert.ok(await gone(pid));

  const unstartable = await fakeRelease(ctx, '1.2.0', 'serve');
  await ctx.runtime.verifyDigest(unstartable);
  await ctx.runtime.prepare(unstartable.version);
  await ctx.runtime.migrate(unstartable);
  const started = await stepError(() => ctx.runtime.recreate(unstartable));
  assert.is(started.code, 'start_failed');
  assert.match(started.message, /already in use/);
});

test('without prepare, migrate loads the release itself (the same steps, only slower)', async (ctx) => {
  const release = await fakeRelease(ctx, '1.1.0');
  await ctx.runtime.verifyDigest(release);
  await ctx.runtime.migrate(release);
  await ctx.runtime.recreate(release);
  assert.is(await ctx.runtime.currentVersion(), '1.1.0');
});

test('a rollback starts the prior release from the standby prepared during the restore', async (ctx) => {
  const prior = await fakeRelease(ctx, '1.0.0');
  await ctx.runtime.verifyDigest(prior);
  await ctx.runtime.migrate(prior);
  await ctx.runtime.recreate(prior);
  const next = await fakeRelease(ctx, '1.1.0', 'migrate');
  await ctx.runtime.verifyDigest(next);
  await ctx.runtime.prepare(next.version);
  await ctx.runtime.drain();
  await stepError(() => ctx.runtime.migrate(next));
  // The executor's rollback: drain, prepare the prior (while restoring), restart it.
  await ctx.runtime.drain();
  await ctx.runtime.prepare(prior.version);
  const standbyPid = await pidIn(path.join(ctx.data, 'standby.pid'));
  await ctx.runtime.restartPrior(prior.version);
  assert.is(await pidIn(path.join(ctx.data, 'services.pid')), standbyPid);
  assert.is(await readlink(path.join(ctx.releases, 'current')), '1.0.0');
});

test('a prepared release is stopped by discardPrepared, by close, and when the sidecar that prepared it dies', async (ctx) => {
  const release = await fakeRelease(ctx, '1.1.0');
  await ctx.runtime.verifyDigest(release);
  await ctx.runtime.prepare(release.version);
  let pid = await pidIn(path.join(ctx.data, 'standby.pid'));
  await ctx.runtime.discardPrepared();
  assert.ok(await gone(pid));
  await ctx.runtime.prepare(release.version);
  pid = await pidIn(path.join(ctx.data, 'standby.pid'));
  await ctx.runtime.close();
  assert.ok(await gone(pid));
});

test('the real `orchard serve all --standby` loads without touching the database, and exits when its channel closes', async () => {
  // DATABASE_URL names a port nothing listens on: reaching `ready` proves nothing was opened.
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-standby-'));
  try {
    const child = spawn(process.execPath, [BIN, 'serve', 'all', '--standby'], {
      env: {
        ...process.env,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
        DATA_DIR: dir,
        ORCH_SECRET_KEY: 'b2'.repeat(32),
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const first = await new Promise<{ type: string }>((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', () => reject(new Error(`exited before ready: ${stderr}`)));
    });
    assert.is(first.type, 'ready');
    assert.not.ok(existsSync(path.join(dir, 'orchard.pid')), 'it did not take the DATA_DIR lock either');
    child.disconnect();
    assert.is(await exited, STANDBY_ABANDONED_EXIT);
    assert.match(stderr, /gave this standby start up/);

    // Told to migrate against a database that does not answer: `failed`, with the reason.
    const second = spawn(process.execPath, [BIN, 'serve', 'all', '--standby'], {
      env: {
        ...process.env,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
        DATA_DIR: dir,
        ORCH_SECRET_KEY: 'b2'.repeat(32),
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    const messages: { type: string; message?: string }[] = [];
    const done = new Promise<number | null>((resolve) => second.once('exit', (code) => resolve(code)));
    second.on('message', (m: { type: string }) => {
      messages.push(m);
      if (m.type === 'ready') second.send({ type: 'migrate' });
    });
    assert.is(await done, 1);
    assert.equal(
      messages.map((m) => m.type),
      ['ready', 'failed'],
    );
    assert.match(messages[1]!.message!, /DATABASE_URL/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
