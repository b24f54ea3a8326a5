// `npm start` as a new user runs it: as root, from a checkout in a directory only root can
// enter, on the embedded PostgreSQL (which must then run as an unprivileged user); and the
// one-line refusals, with a non-zero exit, for what an operator gets wrong at start.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startOrchard, type RunningOrchard } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { http } from '../support/services.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const asRoot = process.getuid?.() === 0;

/** `orchard <args>` from `bin` in `cwd`, without this process's database, data or key settings. */
function start(bin: string, args: string[], env: Record<string, string>, cwd = ROOT): RunningOrchard {
  const clean = { ...process.env };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'ADMIN_API_KEY', 'ADMIN_API_KEY_FILE', 'REDIS_URL']) delete clean[k];
  return startOrchard(args, { bin, cwd, env: { ...clean, ORCH_SECRET_KEY: 'c3'.repeat(32), ...env } });
}

/** The service URLs from the start lines on stderr, once all three are printed. */
function urls(s: RunningOrchard, ms = 90_000): Promise<Record<string, string>> {
  return s.waitFor(
    'the three start lines',
    () => {
      const found = Object.fromEntries(
        [...s.stderr.join('').matchAll(/^orchard: (orchestration|chat|registry)\s+(http:\/\/\S+)/gm)].map((m) => [
          m[1],
          m[2],
        ]),
      );
      return Object.keys(found).length === 3 && found;
    },
    ms,
  );
}

/** A refusal: exit code 1, one line on stderr naming the problem, no stack trace. */
async function refusal(s: RunningOrchard): Promise<string> {
  const code = await s.exited;
  const err = s.stderr.join('').trim();
  assert.is(code, 1, err);
  assert.is(err.split('\n').length, 1, err);
  assert.not.match(err, /\n\s+at /);
  assert.match(err, /^orchard: /);
  return err;
}

const LISTEN = { ORCH_LISTEN: '127.0.0.1:0', CHATSVC_LISTEN: '127.0.0.1:0', REGISTRY_LISTEN: '127.0.0.1:0' };

const test = suite<{ db: TestDatabase; dirs: string[] }>('e2e: starting anywhere, refusing clearly');
test.before(async (ctx) => {
  ctx.db = await freshDatabase('startup');
  ctx.dirs = [];
});
test.after(async ({ db, dirs }) => {
  await db?.drop();
  for (const dir of dirs ?? []) await rm(dir, { recursive: true, force: true });
});

test('as root from a 0700 directory: npm start on the embedded server answers the three health routes', async (ctx) => {
  if (!asRoot) {
    console.log('  (skipped: not running as root; this case needs root)');
    return;
  }
  // A checkout only root can enter: the sources copied, node_modules hard-linked (same files).
  const home = await mkdtemp(path.join(tmpdir(), 'orchard-0700-'));
  ctx.dirs.push(home);
  await chmod(home, 0o700);
  const checkout = path.join(home, 'checkout');
  await mkdir(checkout);
  for (const entry of ['bin', 'main', 'api', 'domain', 'projections', 'infra', 'crypto', 'package.json']) {
    await run('cp', ['-a', path.join(ROOT, entry), checkout]);
  }
  await run('cp', ['-al', path.join(ROOT, 'node_modules'), checkout]);
  const s = start(path.join(checkout, 'bin', 'orchard.mjs'), ['serve', 'all'], LISTEN, checkout);
  try {
    const found = await urls(s);
    assert.is((await http(`${found.orchestration}/api/v1/health`)).status, 200);
    assert.is((await http(`${found.chat}/api/health`)).status, 200);
    assert.is((await http(`${found.registry}/health`)).status, 200);
    // No admin key was configured: the start lines say how to get one.
    assert.match(s.stderr.join(''), /ADMIN_API_KEY \(or ADMIN_API_KEY_FILE/);
    // The cluster lives where the unprivileged user reaches it, recorded in DATA_DIR.
    const pointer = path.join(checkout, 'data', 'pg.location');
    assert.ok(existsSync(pointer));
    ctx.dirs.push((await readFile(pointer, 'utf8')).trim());
  } finally {
    s.child.kill('SIGTERM');
    assert.is(await s.exited, 0, s.stderr.join(''));
  }
});

test('a listen port already taken: names the variable to change', async ({ db, dirs }) => {
  const taken: Server = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-port-'));
  dirs.push(dataDir);
  try {
    const s = start(path.join(ROOT, 'bin', 'orchard.mjs'), ['serve', 'all'], {
      ...LISTEN,
      CHATSVC_LISTEN: `127.0.0.1:${port}`,
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
    });
    const line = await refusal(s);
    assert.match(
      line,
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use; set CHATSVC_LISTEN`),
    );
  } finally {
    taken.close();
  }
});

test('DATABASE_URL refused or unknown: says so without the password', async ({ dirs }) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-dburl-'));
  dirs.push(dataDir);
  const refused = await refusal(
    start(path.join(ROOT, 'bin', 'orchard.mjs'), ['serve', 'all'], {
      ...LISTEN,
      DATABASE_URL: 'postgres://app:s3cret-pw@127.0.0.1:1/app',
      DATA_DIR: dataDir,
    }),
  );
  assert.match(refused, /cannot use DATABASE_URL=postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app: connection refused/);
  assert.not.match(refused, /s3cret-pw/);
  const missing = await refusal(
    start(path.join(ROOT, 'bin', 'orchard.mjs'), ['migrate'], {
      DATABASE_URL: 'postgres://app@no-such-host.invalid:5432/app',
      DATA_DIR: dataDir,
    }),
  );
  assert.match(missing, /cannot use DATABASE_URL=.*: (host not found|host name lookup failed)/);
});

test('DATA_DIR not writable: names it', async ({ dirs }) => {
  let dataDir = '/sys/orchard-test-data'; // not writable even by root
  if (!asRoot) {
    dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-ro-'));
    dirs.push(dataDir);
    await chmod(dataDir, 0o500);
  }
  const line = await refusal(
    start(path.join(ROOT, 'bin', 'orchard.mjs'), ['serve', 'all'], { ...LISTEN, DATA_DIR: dataDir }),
  );
  assert.match(line, new RegExp(`DATA_DIR=${dataDir.replace(/[/.]/g, '\\$&')} is not writable`));
});

test('a second server on the same DATA_DIR is refused; the first keeps running', async ({ db, dirs }) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-twice-'));
  dirs.push(dataDir);
  const env = {
    ...LISTEN,
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    ADMIN_API_KEY: 'orch_startup-admin-key-000000000000000000',
  };
  const first = start(path.join(ROOT, 'bin', 'orchard.mjs'), ['serve', 'all'], env);
  try {
    const found = await urls(first);
    assert.not.match(first.stderr.join(''), /no admin account key/);
    const line = await refusal(start(path.join(ROOT, 'bin', 'orchard.mjs'), ['serve', 'all'], env));
    assert.match(
      line,
      new RegExp(`another orchard server \\(pid ${first.child.pid}\\) is already running on DATA_DIR=`),
    );
    assert.is((await http(`${found.orchestration}/api/v1/health`)).status, 200);
  } finally {
    first.child.kill('SIGTERM');
    assert.is(await first.exited, 0);
  }
  assert.not.ok(existsSync(path.join(dataDir, 'orchard.pid')));
});

test.run();
