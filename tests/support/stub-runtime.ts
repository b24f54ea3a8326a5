// A release runtime that records what the executor asks of it and fails where told: for
// sidecar suites that exercise the state machine without building releases (the process
// runtime's own e2e suite does that).

import { serve, type ServerType } from '@hono/node-server';
import { ed25519 } from '@noble/curves/ed25519.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSidecarApp } from '../../api/sidecar/app.ts';
import { systemClock } from '../../infra/clock.ts';
import { createLogger } from '../../infra/logging.ts';
import { ApplyExecutor, parseFailpoints } from '../../infra/updater/executor.ts';
import { Journal } from '../../infra/updater/journal.ts';
import type { UpdaterLog } from '../../infra/updater/log-writer.ts';
import type { Manifest, Requirement } from '../../domain/updates/manifest.ts';
import { StepError, type DeliveryItem, type HealthTargets, type ReleaseRuntime } from '../../infra/updater/runtime.ts';
import { TOKEN, type FakeServices, type ReleaseKeys } from './updates.ts';

export class StubRuntime implements ReleaseRuntime {
  readonly name = 'process' as const;
  readonly calls: string[] = [];
  fail: Partial<Record<'snapshot' | 'restore' | 'pull' | 'verifyDigest' | 'prepare' | 'migrate' | 'recreate', string>> =
    {};
  /** The release `prepare` loaded and no drain or discard stopped since (null: none). */
  prepared: string | null = null;
  /** Requirement targets reported missing. */
  missing = new Set<string>();
  version = '1.0.0';
  /** While set, `migrate` waits for it (an apply held mid-swap). */
  hold: Promise<void> | null = null;

  constructor(
    private readonly services: FakeServices,
    version = '1.0.0',
  ) {
    this.version = version;
  }

  get health(): HealthTargets {
    return { orch: this.services.url, chat: this.services.url, registry: this.services.url };
  }

  private step(name: keyof StubRuntime['fail']) {
    this.calls.push(name);
    if (this.fail[name]) throw new StepError(this.fail[name]!, `${name} failed (stub)`);
  }

  async currentVersion() {
    return this.version;
  }
  async startCurrent() {
    this.calls.push('startCurrent');
  }
  async snapshot(file: string) {
    this.step('snapshot');
    await writeFile(file, '-- snapshot\n');
  }
  async restore() {
    this.step('restore');
  }
  async pull() {
    this.step('pull');
  }
  async verifyDigest() {
    this.step('verifyDigest');
  }
  async prepare(version: string) {
    this.calls.push(`prepare:${version}`);
    if (this.fail.prepare) throw new StepError(this.fail.prepare, 'prepare failed (stub)');
    this.prepared = version;
  }
  async discardPrepared() {
    this.calls.push('discardPrepared');
    this.prepared = null;
  }
  async drain() {
    this.calls.push('drain');
  }
  /** Whether the last migrate found its release still prepared (not dropped by the drain). */
  migratedPrepared = false;
  async migrate(m: Manifest) {
    await this.hold;
    this.step('migrate');
    this.migratedPrepared = this.prepared === m.version;
  }
  async recreate(m: Manifest) {
    this.step('recreate');
    this.version = m.version;
    this.services.version = m.version;
    this.services.migration = m.migrations.at(-1) ?? '';
  }
  async restartPrior(version: string) {
    this.calls.push(`restartPrior:${version}`);
    this.version = version;
    this.services.version = version;
  }
  async delivery(requirements: Requirement[]): Promise<DeliveryItem[]> {
    return requirements.map((r) => ({ ...r, status: this.missing.has(r.target) ? 'missing' : 'present' }));
  }
  async close() {}
}

export class RecordingLog {
  readonly calls: string[] = [];
  journaled: string[] = [];
  async maintenanceStarted(id: string) {
    this.calls.push(`start:${id}`);
  }
  async maintenanceEnded(id: string) {
    this.calls.push(`end:${id}`);
  }
  async deliveryChecked() {
    this.calls.push('delivery');
  }
  async journal(entries: { type: string }[]) {
    this.journaled = entries.map((e) => e.type);
  }
}

export interface Sidecar {
  url: string;
  runtime: StubRuntime;
  executor: ApplyExecutor;
  journal: Journal;
  log: RecordingLog;
  dir: string;
  server: ServerType;
}

/** The real sidecar app and executor over a loopback socket, on the stub runtime. `updaterLog` defaults to a recording one. */
export async function startSidecar(
  keys: ReleaseKeys,
  services: FakeServices,
  options: { dir?: string; failpoints?: string; runtime?: StubRuntime; updaterLog?: UpdaterLog } = {},
): Promise<Sidecar> {
  const dir = options.dir ?? (await mkdtemp(path.join(tmpdir(), 'orchard-sidecar-')));
  const journal = new Journal(dir, systemClock);
  await journal.load();
  const runtime = options.runtime ?? new StubRuntime(services);
  const log = new RecordingLog();
  const executor = new ApplyExecutor({
    journal,
    runtime,
    updaterLog: options.updaterLog ?? (log as unknown as UpdaterLog),
    log: createLogger({ level: 'error', sink: () => {} }),
    clock: systemClock,
    publicKey: ed25519.getPublicKey(keys.secretKey),
    channels: { orch: 'stable', chat: 'stable' },
    dataDir: dir,
    healthGraceSecs: 1,
    pollMs: 20,
    failpoints: parseFailpoints(options.failpoints ?? ''),
  });
  await executor.resume();
  const app = createSidecarApp({
    token: TOKEN,
    clock: systemClock,
    executor,
    journal,
    runtime,
    version: 'sidecar-test',
  });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runtime,
    executor,
    journal,
    log,
    dir,
    server,
  };
}

export const stopSidecar = (s: Sidecar) => new Promise<void>((resolve) => s.server.close(() => resolve()));
