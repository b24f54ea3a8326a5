// The `docker` runtime (production): the sidecar, the only container given the Docker socket,
// drives the compose stack. The image is pulled by digest and checked with `image inspect`;
// services are stopped, migrated with `compose run --rm orch migrate` and recreated with
// `up -d --no-deps --force-recreate`, ORCHARD_IMAGE naming the image (compose.yaml:
// `image: ${ORCHARD_IMAGE:-orchard:local}`). Snapshots run pg_dump and psql inside the postgres
// container (`compose exec -T postgres`). Requirements are read from `inspect` of the running
// orch container. The runner keeps its image: an apply replaces the three HTTP services only.

import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Manifest, Requirement } from '../../domain/updates/manifest.ts';
import type { Logger } from '../logging.ts';
import { StepError, type DeliveryItem, type HealthTargets, type ReleaseRuntime } from './runtime.ts';

export const SWAPPED_SERVICES = ['orch', 'chat', 'registry'];

export interface DockerRuntimeOptions {
  composeFile: string;
  dataDir: string;
  databaseUrl: string;
  drainSecs: number;
  health: HealthTargets;
  /** The image running now, when the sidecar has not recorded one yet (ORCHARD_IMAGE). */
  initialImage: string;
  log: Logger;
  /** The docker binary (tests put a recording double first on PATH). */
  docker?: string;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export class DockerRuntime implements ReleaseRuntime {
  readonly name = 'docker' as const;
  readonly health: HealthTargets;
  private readonly stateFile: string;

  constructor(private readonly o: DockerRuntimeOptions) {
    this.health = o.health;
    this.stateFile = path.join(o.dataDir, 'docker-images.json');
  }

  private docker(
    args: string[],
    options: { env?: NodeJS.ProcessEnv; stdinFile?: string; stdoutFile?: string } = {},
  ): Promise<Run> {
    return new Promise((resolve) => {
      const child = spawn(this.o.docker ?? 'docker', args, {
        env: { ...process.env, ...options.env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      if (options.stdoutFile) child.stdout.pipe(createWriteStream(options.stdoutFile));
      else child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      // A child that stops reading its input before the end (EPIPE), or input that cannot be
      // read, is a failed step whatever the child exits with: a restore that did not take the
      // whole dump is no restore.
      let inputError: string | null = null;
      let inputWritten = !options.stdinFile;
      if (options.stdinFile) {
        child.stdin.once('finish', () => (inputWritten = true));
        const input = createReadStream(options.stdinFile);
        input.once('error', (error) => {
          inputError = error.message;
          child.stdin.destroy();
        });
        child.stdin.on('error', (error) => (inputError ??= error.message));
        input.pipe(child.stdin);
      } else child.stdin.end();
      child.once('error', (error) => resolve({ code: -1, stdout, stderr: error.message }));
      child.once('close', (code) => {
        if (inputError === null && !inputWritten) inputError = 'the command stopped reading its input';
        resolve(
          inputError === null
            ? { code: code ?? -1, stdout, stderr }
            : { code: -1, stdout, stderr: `${stderr}input: ${inputError}` },
        );
      });
    });
  }

  private async must(
    code: string,
    args: string[],
    options: Parameters<DockerRuntime['docker']>[1] = {},
  ): Promise<string> {
    const r = await this.docker(args, options);
    if (r.code !== 0)
      throw new StepError(
        code,
        `docker ${args.slice(0, 4).join(' ')} failed (${r.code}): ${r.stderr.trim().split('\n').at(-1) ?? ''}`,
      );
    return r.stdout;
  }

  private compose(...args: string[]): string[] {
    return ['compose', '-f', this.o.composeFile, ...args];
  }

  private db(): { user: string; name: string } {
    const url = new URL(this.o.databaseUrl);
    return { user: decodeURIComponent(url.username) || 'postgres', name: url.pathname.slice(1) || 'postgres' };
  }

  private async images(): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(this.stateFile, 'utf8'));
    } catch {
      return {};
    }
  }

  private async remember(version: string, image: string): Promise<void> {
    await mkdir(this.o.dataDir, { recursive: true });
    await writeFile(this.stateFile, JSON.stringify({ ...(await this.images()), [version]: image }, null, 2));
  }

  private imageOf(manifest: Manifest): string {
    return `${manifest.image.repository}@${manifest.image.digest}`;
  }

  async currentVersion(): Promise<string | null> {
    try {
      const res = await fetch(`${this.health.orch}/api/v1/health`, { signal: AbortSignal.timeout(5000) });
      return ((await res.json()) as { version?: string }).version ?? null;
    } catch {
      return null;
    }
  }

  async startCurrent(): Promise<void> {
    // Compose (restart: unless-stopped) keeps the services up; remember what runs as the prior image.
    const version = await this.currentVersion();
    if (version && !(await this.images())[version]) await this.remember(version, this.o.initialImage);
  }

  async snapshot(file: string): Promise<void> {
    const { user, name } = this.db();
    await this.must(
      'snapshot_failed',
      this.compose(
        'exec',
        '-T',
        'postgres',
        'pg_dump',
        '--clean',
        '--if-exists',
        '--no-owner',
        '--no-privileges',
        '-U',
        user,
        name,
      ),
      { stdoutFile: file },
    );
  }

  async restore(file: string): Promise<void> {
    const { user, name } = this.db();
    await this.must(
      'restore_failed',
      this.compose(
        'exec',
        '-T',
        'postgres',
        'psql',
        '-X',
        '-q',
        '--single-transaction',
        '-v',
        'ON_ERROR_STOP=1',
        '-U',
        user,
        '-d',
        name,
        '-c',
        'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;',
        '-f',
        '/dev/stdin',
      ),
      { stdinFile: file },
    );
  }

  async pull(manifest: Manifest): Promise<void> {
    await this.must('pull_failed', ['pull', this.imageOf(manifest)]);
  }

  async verifyDigest(manifest: Manifest): Promise<void> {
    const out = await this.must('digest_mismatch', [
      'image',
      'inspect',
      '--format',
      '{{json .RepoDigests}}',
      this.imageOf(manifest),
    ]);
    let digests: string[] = [];
    try {
      digests = JSON.parse(out.trim()) ?? [];
    } catch {
      // unreadable: no digest matches
    }
    if (!digests.some((d) => d.endsWith(`@${manifest.image.digest}`)))
      throw new StepError(
        'digest_mismatch',
        `the pulled image's digests (${digests.join(', ')}) do not include ${manifest.image.digest}`,
      );
  }

  async drain(): Promise<void> {
    await this.must('drain_failed', this.compose('stop', '--timeout', String(this.o.drainSecs), ...SWAPPED_SERVICES));
  }

  async migrate(manifest: Manifest): Promise<void> {
    await this.must('migration_failed', this.compose('run', '--rm', '--no-deps', 'orch', 'migrate'), {
      env: { ORCHARD_IMAGE: this.imageOf(manifest) },
    });
  }

  async recreate(manifest: Manifest): Promise<void> {
    await this.must('recreate_failed', this.compose('up', '-d', '--no-deps', '--force-recreate', ...SWAPPED_SERVICES), {
      env: { ORCHARD_IMAGE: this.imageOf(manifest) },
    });
    await this.remember(manifest.version, this.imageOf(manifest));
  }

  async restartPrior(version: string): Promise<void> {
    const image = (await this.images())[version] ?? this.o.initialImage;
    await this.must('restart_failed', this.compose('up', '-d', '--no-deps', '--force-recreate', ...SWAPPED_SERVICES), {
      env: { ORCHARD_IMAGE: image },
    });
  }

  async delivery(requirements: Requirement[]): Promise<DeliveryItem[]> {
    const ps = await this.docker(this.compose('ps', '--format', '{{.Service}}'));
    const services = new Set(
      ps.stdout
        .split('\n')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    const id = (await this.docker(this.compose('ps', '-q', 'orch'))).stdout.trim();
    const inspect = id ? await this.docker(['inspect', '--format', '{{json .Config.Env}}|{{json .Mounts}}', id]) : null;
    let env: string[] | null = null;
    let mounts: { Destination?: string }[] = [];
    if (inspect && inspect.code === 0) {
      const [envText, mountText] = inspect.stdout.trim().split('|');
      try {
        env = JSON.parse(envText ?? 'null');
        mounts = JSON.parse(mountText ?? '[]') ?? [];
      } catch {
        env = null;
      }
    }
    return requirements.map((r): DeliveryItem => {
      if (r.kind === 'compose_service')
        return { ...r, status: ps.code === 0 ? (services.has(r.target) ? 'present' : 'missing') : 'unverifiable' };
      if (r.kind === 'env')
        return {
          ...r,
          status: env
            ? env.some((e) => e.startsWith(`${r.target}=`) && e.length > r.target.length + 1)
              ? 'present'
              : 'missing'
            : 'unverifiable',
        };
      if (r.kind === 'secret_file')
        return {
          ...r,
          status: env
            ? mounts.some((m) => m.Destination === r.target || r.target.startsWith(`${m.Destination}/`))
              ? 'present'
              : 'missing'
            : 'unverifiable',
        };
      return { ...r, status: 'unverifiable' };
    });
  }

  async close(): Promise<void> {}
}
