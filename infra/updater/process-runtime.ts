// The `process` runtime: the sidecar runs the services (`orchard serve all`) as a child from
// ORCH_UPDATER_RELEASES_DIR/<version>/, the `current` symlink naming the release that runs
// (switched atomically: a new link renamed over the old). A release is the tar.gz artifact the
// manifest names, downloaded, re-hashed before it is unpacked, and unpacked whole (it carries
// its node_modules, or shares the sidecar's). Snapshots use pg_dump and psql from
// ORCH_UPDATER_PG_BINDIR.
//
// A release is started ahead of time (`prepare`, the end of pre-flight): its `orchard serve all
// --standby` child loads every module while the old release still serves, and waits (the
// protocol: standby-protocol.ts). The swap then only drains the old release, tells the standby
// to migrate (the new release's migrations, in its own process) and then to serve. A rollback
// prepares the prior release the same way while the snapshot is restored.

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, readlink, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import type { Manifest, Requirement } from '../../domain/updates/manifest.ts';
import type { Logger } from '../logging.ts';
import { ROOT } from '../paths.ts';
import { checkSnapshotTool, pgDump, psqlRestore } from './pg-tools.ts';
import { StepError, type DeliveryItem, type HealthTargets, type ReleaseRuntime } from './runtime.ts';
import type { FromStandby, ToStandby } from './standby-protocol.ts';

export interface ProcessRuntimeOptions {
  releasesDir: string;
  dataDir: string;
  databaseUrl: string;
  pgBinDir: string | null;
  drainSecs: number;
  health: HealthTargets;
  /** How long a standby may take to load, and then to listen once told to serve (default 120). */
  startSecs?: number;
  /** The services' environment (the sidecar's own, less its secrets and faults). */
  env: NodeJS.ProcessEnv;
  log: Logger;
}

const SIDECAR_NODE_MODULES = path.join(ROOT, 'node_modules');

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

export class ProcessRuntime implements ReleaseRuntime {
  readonly name = 'process' as const;
  readonly health: HealthTargets;
  private child: ChildProcess | null = null;
  /** A release loaded ahead of its start (`prepare`), not yet serving. */
  private standby: Standby | null = null;
  /** The version verifyDigest unpacked. */
  private unpacked: string | null = null;
  private readonly pidFile: string;
  private readonly standbyPidFile: string;

  constructor(private readonly o: ProcessRuntimeOptions) {
    this.health = o.health;
    this.pidFile = path.join(o.dataDir, 'services.pid');
    this.standbyPidFile = path.join(o.dataDir, 'standby.pid');
  }

  private get current() {
    return path.join(this.o.releasesDir, 'current');
  }

  private artifactFile(version: string) {
    return path.join(this.o.dataDir, 'downloads', `${version}.tar.gz`);
  }

  async currentVersion(): Promise<string | null> {
    try {
      return JSON.parse(await readFile(path.join(this.current, 'package.json'), 'utf8')).version ?? null;
    } catch {
      return null;
    }
  }

  async startCurrent(): Promise<void> {
    // A crashed sidecar's services may still run: stop them first, then start from `current`.
    // (Its standby, if any, ends itself when its channel closes; one still there is stopped too.)
    for (const file of [this.standbyPidFile, this.pidFile]) {
      if (!existsSync(file)) continue;
      const pid = Number((await readFile(file, 'utf8')).trim());
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGTERM');
          await waitGone(pid, this.o.drainSecs * 1000);
        } catch {
          // gone already
        }
      }
      await rm(file, { force: true });
    }
    if (existsSync(this.current)) await this.spawnCurrent();
  }

  private async spawnRelease(dir: string, standby: boolean): Promise<ChildProcess> {
    await mkdir(path.join(this.o.dataDir, 'logs'), { recursive: true });
    const logFile = path.join(this.o.dataDir, 'logs', `services-${path.basename(dir)}.log`);
    const fd = openSync(logFile, 'a');
    const args = [path.join(dir, 'bin', 'orchard.mjs'), 'serve', 'all', ...(standby ? ['--standby'] : [])];
    const child = spawn(process.execPath, args, {
      cwd: dir,
      env: this.o.env,
      stdio: ['ignore', fd, fd, ...(standby ? ['ipc' as const] : [])],
    });
    closeSync(fd);
    return child;
  }

  /** `child` is now the running services. */
  private async adopt(child: ChildProcess, dir: string): Promise<void> {
    this.child = child;
    await writeFile(this.pidFile, `${child.pid}\n`);
    child.once('exit', (code, signal) => {
      this.o.log.info('services_exited', { release: path.basename(dir), code, signal });
      if (this.child === child) this.child = null;
    });
    this.o.log.info('services_started', { release: path.basename(dir), pid: child.pid });
  }

  private async spawnCurrent(): Promise<void> {
    const dir = await realpath(this.current);
    await this.adopt(await this.spawnRelease(dir, false), dir);
  }

  private get startMs() {
    return (this.o.startSecs ?? 120) * 1000;
  }

  /**
   * Load `version` ahead of its start: a standby child, `ready` once its modules are loaded.
   * It opens neither the database nor a port until told to (`migrate`, then `serve`).
   */
  async prepare(version: string): Promise<void> {
    if (this.standby?.version === version && this.standby.alive) return;
    await this.dropStandby();
    const dir = path.join(this.o.releasesDir, version);
    if (!existsSync(dir))
      throw new StepError('release_not_ready', `release ${version} is not in ${this.o.releasesDir}`);
    const began = Date.now();
    const standby = new Standby(version, dir, await this.spawnRelease(dir, true));
    this.standby = standby;
    await writeFile(this.standbyPidFile, `${standby.child.pid}\n`);
    try {
      await standby.next('ready', this.startMs);
    } catch (error) {
      await this.dropStandby();
      throw new StepError('release_not_ready', `release ${version} did not load: ${(error as Error).message}`);
    }
    this.o.log.info('standby_ready', { release: version, pid: standby.child.pid, ms: Date.now() - began });
  }

  async discardPrepared(): Promise<void> {
    await this.dropStandby();
  }

  /** Stop a standby that is not serving (a failed or abandoned swap). */
  private async dropStandby(): Promise<void> {
    const standby = this.standby;
    this.standby = null;
    if (!standby) return;
    await standby.stop(this.o.drainSecs * 1000);
    await rm(this.standbyPidFile, { force: true });
  }

  /** Tell the standby of `version` to migrate; it reports `migrated` or why it failed. */
  private async standbyMigrate(version: string): Promise<Standby> {
    const standby = this.standby;
    if (!standby || standby.version !== version) throw new Error(`no standby of ${version}`);
    standby.send({ type: 'migrate' });
    try {
      const answer = await standby.next('migrated');
      if (answer.type === 'migrated' && answer.applied.length)
        this.o.log.info('migrations_applied', { release: version, migrations: answer.applied });
    } catch (error) {
      await this.dropStandby();
      throw new StepError('migration_failed', `the release's migration failed: ${(error as Error).message}`);
    }
    return standby;
  }

  /** Tell the migrated standby to serve; once it listens it is the running services. */
  private async standbyServe(standby: Standby): Promise<void> {
    standby.send({ type: 'serve' });
    try {
      await standby.next('listening', this.startMs);
    } catch (error) {
      await this.dropStandby();
      throw new StepError('start_failed', `release ${standby.version} did not start: ${(error as Error).message}`);
    }
    this.standby = null;
    await rm(this.standbyPidFile, { force: true });
    await this.adopt(standby.child, standby.dir);
  }

  async snapshot(file: string): Promise<void> {
    await checkSnapshotTool(this.o.pgBinDir, this.o.databaseUrl);
    await pgDump(this.o.pgBinDir, this.o.databaseUrl, file);
  }

  restore(file: string): Promise<void> {
    return psqlRestore(this.o.pgBinDir, this.o.databaseUrl, file);
  }

  async pull(manifest: Manifest): Promise<void> {
    const file = this.artifactFile(manifest.version);
    await mkdir(path.dirname(file), { recursive: true });
    let res: Response;
    try {
      res = await fetch(manifest.artifact.url, { signal: AbortSignal.timeout(300_000) });
    } catch (error) {
      throw new StepError('pull_failed', `the artifact cannot be downloaded: ${(error as Error).message}`);
    }
    if (res.status !== 200 || !res.body) throw new StepError('pull_failed', `the artifact host answered ${res.status}`);
    await pipeline(Readable.fromWeb(res.body as never), createWriteStream(`${file}.part`));
    await rename(`${file}.part`, file);
  }

  private async checkDigest(manifest: Manifest): Promise<void> {
    const actual = await sha256File(this.artifactFile(manifest.version));
    if (actual !== manifest.artifact.sha256)
      throw new StepError(
        'digest_mismatch',
        `the artifact's SHA-256 is ${actual}, the manifest names ${manifest.artifact.sha256}`,
      );
  }

  /**
   * Pre-flight: the artifact's hash, then the release unpacked right away (beside the one that
   * runs, which it does not touch), so unpacking is not part of the downtime.
   */
  async verifyDigest(manifest: Manifest): Promise<void> {
    await this.checkDigest(manifest);
    try {
      await this.unpack(manifest);
    } catch (error) {
      throw new StepError('unpack_failed', `the artifact cannot be unpacked: ${(error as Error).message}`);
    }
    this.unpacked = manifest.version;
  }

  /** The running services only: a prepared release is what the swap starts next. */
  async drain(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), this.o.drainSecs * 1000);
    await exited;
    clearTimeout(timer);
    await rm(this.pidFile, { force: true });
  }

  /** Callers hash the artifact right before. */
  private async unpack(manifest: Manifest): Promise<string> {
    const target = path.join(this.o.releasesDir, manifest.version);
    const staging = `${target}.unpacking`;
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    await tar.x({ file: this.artifactFile(manifest.version), cwd: staging, strict: true });
    // A release without its own node_modules shares the sidecar's (same dependencies); one that
    // changes them ships its own.
    if (!existsSync(path.join(staging, 'node_modules')))
      await symlink(SIDECAR_NODE_MODULES, path.join(staging, 'node_modules'));
    await rm(target, { recursive: true, force: true });
    await rename(staging, target);
    return target;
  }

  async migrate(manifest: Manifest): Promise<void> {
    // Unpacked in pre-flight by this sidecar; otherwise re-hashed right before unpacking.
    if (this.unpacked !== manifest.version) {
      await this.checkDigest(manifest);
      await this.unpack(manifest);
      this.unpacked = manifest.version;
    }
    // Prepared in pre-flight; otherwise loaded now (downtime, but the same steps).
    if (this.standby?.version !== manifest.version || !this.standby.alive) {
      try {
        await this.prepare(manifest.version);
      } catch (error) {
        throw new StepError('migration_failed', (error as Error).message);
      }
    }
    await this.standbyMigrate(manifest.version);
  }

  private async switchTo(version: string): Promise<void> {
    const link = `${this.current}.next`;
    await rm(link, { force: true });
    await symlink(version, link);
    await rename(link, this.current);
  }

  async recreate(manifest: Manifest): Promise<void> {
    const standby = this.standby;
    if (standby?.version !== manifest.version)
      throw new StepError('start_failed', `release ${manifest.version} was not migrated by this sidecar`);
    await this.switchTo(manifest.version);
    await this.standbyServe(standby);
  }

  async restartPrior(version: string): Promise<void> {
    await this.drain();
    if (!existsSync(path.join(this.o.releasesDir, version)))
      throw new StepError('prior_missing', `release ${version} is not in ${this.o.releasesDir}`);
    const prepared = this.standby?.version === version && this.standby.alive ? this.standby : null;
    await this.switchTo(version);
    if (!prepared) {
      await this.dropStandby();
      await this.spawnCurrent();
      return;
    }
    // Its migrations are the restored snapshot's: nothing to apply, but the same start.
    await this.standbyServe(
      await this.standbyMigrate(version).catch((error: StepError) => {
        throw new StepError('prior_start_failed', error.message);
      }),
    );
  }

  async delivery(requirements: Requirement[]): Promise<DeliveryItem[]> {
    return requirements.map((r) => {
      switch (r.kind) {
        case 'env':
          return {
            ...r,
            status: this.o.env[r.target] !== undefined && this.o.env[r.target] !== '' ? 'present' : 'missing',
          };
        case 'secret_file':
          return { ...r, status: existsSync(r.target) ? 'present' : 'missing' };
        // Neither compose services nor installer steps exist without containers.
        default:
          return { ...r, status: 'unverifiable' };
      }
    });
  }

  async close(): Promise<void> {
    await this.dropStandby(); // not serving: it goes with the sidecar
    this.child = null; // the services outlive a stopping sidecar; the next one adopts them by pid file
  }

  /** Stop the services too (tests, `--stop-services`). */
  async stopServices(): Promise<void> {
    await this.drain();
  }

  /** Where `current` points (a release directory name). */
  async currentRelease(): Promise<string | null> {
    try {
      return await readlink(this.current);
    } catch {
      return null;
    }
  }
}

async function waitGone(pid: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A release's `serve all --standby` child and the messages it sent that no one took yet. */
class Standby {
  private readonly inbox: FromStandby[] = [];
  private wake: (() => void) | null = null;
  private exit: string | null = null;

  constructor(
    readonly version: string,
    readonly dir: string,
    readonly child: ChildProcess,
  ) {
    child.on('message', (message: FromStandby) => {
      this.inbox.push(message);
      this.wake?.();
    });
    const ended = (why: string) => {
      this.exit ??= why;
      this.wake?.();
    };
    // A message sent right before the exit may come after it: read the channel to its end first.
    child.once('exit', (code, signal) => {
      const why = `it exited (${signal ?? `code ${code}`})`;
      if (child.connected) child.once('disconnect', () => ended(why));
      else ended(why);
    });
    child.once('error', (error) => ended(`it could not run: ${error.message}`));
  }

  get alive(): boolean {
    return this.exit === null && this.child.exitCode === null && this.child.signalCode === null;
  }

  send(message: ToStandby): void {
    if (this.child.connected) this.child.send(message);
  }

  /** The next message, which must be `type`; a `failed` one, an exit or the time limit throw. */
  async next(type: FromStandby['type'], ms = 0): Promise<FromStandby> {
    const deadline = ms ? Date.now() + ms : Infinity;
    for (;;) {
      const message = this.inbox.shift();
      if (message?.type === 'failed') throw new Error(message.message);
      if (message?.type === type) return message;
      if (message) throw new Error(`it said ${message.type}, not ${type}`);
      if (this.exit) throw new Error(this.exit);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type} within ${ms / 1000} s`);
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(left) ? setTimeout(resolve, left) : null;
        this.wake = () => {
          if (timer) clearTimeout(timer);
          this.wake = null;
          resolve();
        };
      });
    }
  }

  /** SIGTERM (SIGKILL after `ms`), and wait until it is gone. */
  async stop(ms: number): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms);
    await exited;
    clearTimeout(timer);
  }
}
