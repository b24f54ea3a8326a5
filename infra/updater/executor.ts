// The apply, step by step (domain/updates/apply.ts names the states). Each step is journaled
// (fsynced) before and after it acts, so a sidecar killed at any point resumes from its journal:
// an apply stopped before the swap fails with nothing touched; one stopped during the swap is
// rolled back (`recovered`).
//
// Pre-flight: verify the manifest, announce maintenance (MaintenanceStarted closes every
// service's write gate; wait until each reports read_only), snapshot the whole database, pull,
// re-check the digest. A failure here lifts maintenance: `failed`, nothing touched.
// Swap: drain, migrate, recreate. Verifying: health within the grace window, then delivery.
// Rollback (migration or health failure): re-hash and restore the snapshot, restart the prior
// release, wait for its health: `rolled_back`. A failed restore freezes: maintenance stays and
// applies are refused until an operator unfreezes.

import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  resumeAction,
  summarize,
  type ApplyError,
  type ApplyState,
  type JournalEntry,
  type RunningState,
} from '../../domain/updates/apply.ts';
import { higherOf, ManifestRefusal, type Manifest } from '../../domain/updates/manifest.ts';
import type { Clock } from '../clock.ts';
import type { Logger } from '../logging.ts';
import { verifyManifestEnvelope } from '../updates/manifest-source.ts';
import type { Journal } from './journal.ts';
import type { UpdaterLog } from './log-writer.ts';
import { sha256File } from './process-runtime.ts';
import { StepError, type DeliveryItem, type ReleaseRuntime } from './runtime.ts';

export type FailpointAction = 'error' | 'crash';

export function parseFailpoints(text: string): Map<string, FailpointAction> {
  const points = new Map<string, FailpointAction>();
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [step, action] = part.split('=');
    if (!step || (action !== 'error' && action !== 'crash'))
      throw new Error(`ORCH_UPDATER_FAILPOINTS: ${part} is not <state>=error|crash`);
    points.set(step, action);
  }
  return points;
}

export interface ExecutorDeps {
  journal: Journal;
  runtime: ReleaseRuntime;
  updaterLog: UpdaterLog;
  log: Logger;
  clock: Clock;
  publicKey: Uint8Array;
  /** Channels a manifest may name, by the service that asks. */
  channels: Record<string, string>;
  dataDir: string;
  healthGraceSecs: number;
  maintenanceWaitSecs?: number;
  failpoints?: Map<string, FailpointAction>;
  pollMs?: number;
}

export interface ApplyRequest {
  apply_id: string;
  manifest: unknown;
  requested_by: string;
  source: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const errorOf = (error: unknown): ApplyError => ({
  code: error instanceof StepError || error instanceof ManifestRefusal ? error.code : 'internal',
  message: (error as Error).message,
});

export class ApplyExecutor {
  private running: string | null = null;
  private readonly done = new Map<string, Promise<void>>();

  constructor(private readonly d: ExecutorDeps) {}

  get current(): string | null {
    return this.running;
  }

  /** Resolves when the apply's run (started here) ends. */
  settled(applyId: string): Promise<void> {
    return this.done.get(applyId) ?? Promise.resolve();
  }

  view(applyId: string) {
    const entries = this.d.journal.of(applyId);
    return entries.length ? summarize(entries) : null;
  }

  async begin(req: ApplyRequest): Promise<{ status: 202 | 409; body: Record<string, unknown> }> {
    const { journal } = this.d;
    // The caller's apply id makes a retry the same apply.
    if (journal.has(req.apply_id))
      return { status: 202, body: { apply_id: req.apply_id, state: journal.stateOf(req.apply_id) } };
    const frozen = journal.frozen();
    if (frozen)
      return {
        status: 409,
        body: {
          error: 'apply_frozen',
          message: `apply ${frozen} is frozen; repair and run orchard updates unfreeze ${frozen}`,
          apply_id: frozen,
        },
      };
    if (this.running)
      return {
        status: 409,
        body: { error: 'apply_in_progress', message: `apply ${this.running} is in progress`, apply_id: this.running },
      };
    this.running = req.apply_id;
    const payloadVersion = peekVersion(req.manifest);
    await journal.record(req.apply_id, 'apply_started', 'verifying_manifest', {
      from_version: await this.d.runtime.currentVersion(),
      to_version: payloadVersion,
      requested_by: req.requested_by,
      source: req.source,
      manifest: req.manifest,
    });
    this.done.set(req.apply_id, this.run(req.apply_id));
    return { status: 202, body: { apply_id: req.apply_id, state: 'verifying_manifest' } };
  }

  /** At sidecar start: finish what a killed sidecar left. */
  async resume(): Promise<void> {
    for (const applyId of this.d.journal.unfinished()) {
      const state = this.d.journal.stateOf(applyId)!;
      const action = resumeAction(state);
      this.d.log.warn('apply_resumed', { apply_id: applyId, state, action });
      this.running = applyId;
      await this.d.journal.record(applyId, 'apply_resumed', state, { action });
      const run =
        action === 'rollback'
          ? this.rollback(applyId, { code: 'interrupted', message: `the sidecar stopped during ${state}` }, true)
          : this.failPreflight(applyId, { code: 'interrupted', message: `the sidecar stopped during ${state}` });
      this.done.set(
        applyId,
        run.finally(() => (this.running = null)),
      );
    }
  }

  async unfreeze(
    applyId: string,
    operator: string,
  ): Promise<{ status: 200 | 404 | 409; body: Record<string, unknown> }> {
    const entries = this.d.journal.of(applyId);
    if (!entries.length) return { status: 404, body: { error: 'apply_not_found', message: `no apply ${applyId}` } };
    if (this.d.journal.frozen() !== applyId)
      return { status: 409, body: { error: 'not_frozen', message: `apply ${applyId} is not frozen` } };
    await this.d.journal.record(applyId, 'unfrozen', 'frozen', { operator });
    await this.d.updaterLog.maintenanceEnded(applyId, this.now());
    await this.toLog(applyId);
    return { status: 200, body: { apply_id: applyId, state: 'frozen', unfrozen: true } };
  }

  private now() {
    return this.d.clock.now().toISOString();
  }

  private step(
    applyId: string,
    type: string,
    state: ApplyState,
    data: Record<string, unknown> = {},
  ): Promise<JournalEntry> {
    this.d.log.info('apply_step', { apply_id: applyId, step: type, state });
    return this.d.journal.record(applyId, type, state, data);
  }

  /** A failpoint (tests only): `error` fails the step, `crash` kills the sidecar like kill -9. */
  private async failpoint(applyId: string, state: RunningState): Promise<void> {
    const action = this.d.failpoints?.get(state);
    if (!action) return;
    await this.step(applyId, 'failpoint_triggered', state, { failpoint: state, action });
    if (action === 'crash') {
      process.kill(process.pid, 'SIGKILL');
      await sleep(60_000);
    }
    throw new StepError('failpoint', `failpoint ${state}=error`);
  }

  private async toLog(applyId: string): Promise<void> {
    try {
      await this.d.updaterLog.journal(this.d.journal.of(applyId));
    } catch (error) {
      this.d.log.error('apply_log_append_failed', { apply_id: applyId, error: (error as Error).message });
    }
  }

  private startData(applyId: string) {
    return this.d.journal.of(applyId)[0]!.data as {
      from_version: string | null;
      to_version: string | null;
      source: string;
      manifest: unknown;
    };
  }

  private highestVerified(): string | null {
    let highest: string | null = null;
    for (const entries of this.d.journal.applies()) {
      const verified = entries.find((e) => e.type === 'manifest_verified');
      if (verified) highest = higherOf(highest, String(verified.data.version));
    }
    return highest;
  }

  private async run(applyId: string): Promise<void> {
    try {
      const manifest = await this.preflight(applyId);
      if (manifest) await this.swap(applyId, manifest);
    } catch (error) {
      this.d.log.error('apply_failed_unexpectedly', { apply_id: applyId, error: (error as Error).message });
    } finally {
      this.running = null;
    }
  }

  private maintenanceOn(applyId: string): boolean {
    return this.d.journal
      .of(applyId)
      .some((e) => e.type === 'maintenance_announced' || e.type === 'maintenance_started');
  }

  private async failPreflight(applyId: string, error: ApplyError): Promise<void> {
    if (this.maintenanceOn(applyId)) {
      await this.d.updaterLog.maintenanceEnded(applyId, this.now());
      await this.step(applyId, 'maintenance_lifted', this.d.journal.stateOf(applyId)!);
    }
    await this.step(applyId, 'apply_completed', 'failed', { outcome: null, error });
    await this.toLog(applyId);
  }

  private async preflight(applyId: string): Promise<Manifest | null> {
    const start = this.startData(applyId);
    try {
      await this.failpoint(applyId, 'verifying_manifest');
      await this.step(applyId, 'manifest_verify_started', 'verifying_manifest');
      const current = await this.d.runtime.currentVersion();
      const highest = current ? higherOf(this.highestVerified(), current) : this.highestVerified();
      const channel = this.d.channels[start.source] ?? this.d.channels.orch!;
      const manifest = verifyManifestEnvelope(start.manifest, this.d.publicKey, {
        channel,
        now: this.d.clock.now(),
        highestVerified: highest,
      });
      if (current && manifest.version === current)
        throw new StepError('already_current', `version ${current} already runs`);
      await this.step(applyId, 'manifest_verified', 'announcing_maintenance', { version: manifest.version });

      await this.failpoint(applyId, 'announcing_maintenance');
      await this.step(applyId, 'maintenance_started', 'announcing_maintenance');
      await this.d.updaterLog.maintenanceStarted(applyId, this.now());
      await this.waitReadOnly();
      await this.step(applyId, 'maintenance_announced', 'snapshotting');

      await this.failpoint(applyId, 'snapshotting');
      const file = this.snapshotFile(applyId);
      await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
      await this.d.runtime.snapshot(file);
      await this.step(applyId, 'snapshot_taken', 'pulling', {
        snapshot_sha256: await sha256File(file),
        snapshot_bytes: (await stat(file)).size,
      });

      await this.failpoint(applyId, 'pulling');
      await this.d.runtime.pull(manifest);
      await this.step(applyId, 'pulled', 'verifying_digest');

      await this.failpoint(applyId, 'verifying_digest');
      await this.d.runtime.verifyDigest(manifest);
      if (!this.d.runtime.prepare) {
        await this.step(applyId, 'digest_verified', 'draining');
        return manifest;
      }
      // The new release loaded beside the old one (not yet touching the database or a port), so
      // the swap's downtime does not include its cold start.
      await this.step(applyId, 'digest_verified', 'verifying_digest');
      await this.d.runtime.prepare(manifest.version);
      await this.step(applyId, 'release_prepared', 'draining');
      return manifest;
    } catch (error) {
      await this.failPreflight(applyId, errorOf(error));
      return null;
    }
  }

  private snapshotFile(applyId: string) {
    return path.join(this.d.dataDir, 'snapshots', `${applyId}.sql`);
  }

  private async swap(applyId: string, manifest: Manifest): Promise<void> {
    try {
      await this.failpoint(applyId, 'draining');
      await this.d.runtime.drain();
      await this.step(applyId, 'drained', 'migrating');

      await this.failpoint(applyId, 'migrating');
      await this.d.runtime.migrate(manifest);
      await this.step(applyId, 'migrated', 'recreating');

      await this.failpoint(applyId, 'recreating');
      await this.d.runtime.recreate(manifest);
      await this.step(applyId, 'health_check_started', 'health_checking');

      await this.failpoint(applyId, 'health_checking');
      const unhealthy = await this.waitHealthy(manifest.version, manifest.migrations.at(-1) ?? null);
      if (unhealthy) {
        await this.step(applyId, 'health_check_failed', 'health_checking', {
          error: { code: 'health_check_failed', message: unhealthy },
        });
        throw new StepError('health_check_failed', unhealthy);
      }
      await this.step(applyId, 'health_check_passed', 'checking_delivery');
    } catch (error) {
      await this.rollback(applyId, errorOf(error), false);
      return;
    }
    // Healthy: the release stays, whatever delivery says.
    let items: DeliveryItem[] = [];
    try {
      await this.failpoint(applyId, 'checking_delivery');
      items = await this.d.runtime.delivery(manifest.requirements);
    } catch (error) {
      items = manifest.requirements.map((r) => ({ ...r, status: 'unverifiable' as const }));
      this.d.log.warn('delivery_check_failed', { apply_id: applyId, error: (error as Error).message });
    }
    const absent = items.filter((i) => i.status !== 'present');
    await this.step(applyId, 'delivery_checked', 'checking_delivery', {
      requirements: items.map(({ id, kind, target, status, action }) => ({ id, kind, target, status, action })),
    });
    await this.d.updaterLog
      .deliveryChecked({
        apply_id: applyId,
        to_version: manifest.version,
        checked_at: this.now(),
        requirements: items.map(({ id, kind, target, status, action }) => ({ id, kind, target, status, action })),
      })
      .catch(() => {});
    await this.d.updaterLog.maintenanceEnded(applyId, this.now());
    await this.step(
      applyId,
      'apply_completed',
      'succeeded',
      absent.length
        ? {
            outcome: 'delivery_incomplete',
            error: {
              code: 'delivery_incomplete',
              message: `${absent.length} requirement(s) not present`,
              requirements: absent.map((i) => ({ id: i.id, status: i.status, action: i.action })),
            },
          }
        : { outcome: 'success' },
    );
    await this.toLog(applyId);
  }

  private async rollback(applyId: string, cause: ApplyError, interrupted: boolean): Promise<void> {
    const start = this.startData(applyId);
    await this.step(applyId, 'rollback_started', 'restoring_snapshot', { error: cause });
    let prepared: Promise<void> = Promise.resolve();
    try {
      await this.failpoint(applyId, 'restoring_snapshot');
      await this.d.runtime.drain();
      await this.d.runtime.discardPrepared?.(); // the release that failed, if it never served
      // The prior release loads while the snapshot is re-hashed and restored (it opens nothing
      // until started); when it cannot, restarting it starts it cold.
      if (start.from_version && this.d.runtime.prepare) {
        const version = start.from_version;
        prepared = this.d.runtime.prepare(version).catch((error: Error) => {
          this.d.log.warn('prior_prepare_failed', { apply_id: applyId, version, error: error.message });
        });
      }
      const snapshot = this.d.journal.of(applyId).find((e) => e.type === 'snapshot_taken');
      const file = this.snapshotFile(applyId);
      if (!snapshot) throw new StepError('snapshot_missing', 'no snapshot was journaled');
      const sha = await sha256File(file).catch(() => 'unreadable');
      if (sha !== snapshot.data.snapshot_sha256)
        throw new StepError(
          'snapshot_corrupt',
          `the snapshot's SHA-256 is ${sha}, the journal has ${String(snapshot.data.snapshot_sha256)}`,
        );
      await this.step(applyId, 'restore_started', 'restoring_snapshot');
      await this.d.runtime.restore(file);
      await this.step(applyId, 'restored', 'restarting_prior');
    } catch (error) {
      await prepared;
      await this.d.runtime.discardPrepared?.();
      const e = errorOf(error);
      await this.step(applyId, 'restore_failed', 'frozen', { error: e });
      await this.step(applyId, 'apply_completed', 'frozen', { outcome: 'frozen', error: e });
      await this.toLog(applyId);
      return;
    }
    try {
      await this.failpoint(applyId, 'restarting_prior');
      if (!start.from_version) throw new StepError('prior_unknown', 'the prior version is unknown');
      await prepared;
      await this.d.runtime.restartPrior(start.from_version);
      const unhealthy = await this.waitHealthy(start.from_version, null);
      if (unhealthy) throw new StepError('prior_unhealthy', unhealthy);
      await this.step(applyId, 'prior_restarted', 'restarting_prior');
    } catch (error) {
      await prepared;
      await this.d.runtime.discardPrepared?.();
      const e = errorOf(error);
      await this.step(applyId, 'prior_restart_failed', 'frozen', { error: e });
      await this.step(applyId, 'apply_completed', 'frozen', { outcome: 'frozen', error: e });
      await this.toLog(applyId);
      return;
    }
    await this.d.updaterLog.maintenanceEnded(applyId, this.now());
    await this.step(applyId, 'apply_completed', interrupted ? 'recovered' : 'rolled_back', {
      outcome: 'rolled_back',
      error: cause,
    });
    await this.toLog(applyId);
  }

  /** Every running service reports read_only (a service that does not answer writes nothing). */
  private async waitReadOnly(): Promise<void> {
    const deadline = Date.now() + (this.d.maintenanceWaitSecs ?? 60) * 1000;
    const { orch, chat, registry } = this.d.runtime.health;
    const probes = [`${orch}/api/v1/health`, `${chat}/api/health`, `${registry}/health`];
    for (;;) {
      const answers = await Promise.all(
        probes.map(async (url) => {
          try {
            const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
            const body = (await res.json()) as { maintenance?: { read_only?: boolean } };
            return body.maintenance?.read_only === true;
          } catch {
            return true;
          }
        }),
      );
      if (answers.every(Boolean)) return;
      if (Date.now() > deadline)
        throw new StepError('maintenance_not_read_only', 'the services did not become read-only in time');
      await sleep(this.d.pollMs ?? 100);
    }
  }

  /** Null once healthy at `version` (and `migration`) within the grace window; else why not. */
  private async waitHealthy(version: string, migration: string | null): Promise<string | null> {
    const deadline = Date.now() + this.d.healthGraceSecs * 1000;
    const { orch, chat, registry } = this.d.runtime.health;
    let why = 'no answer';
    for (;;) {
      why = await probeHealth(orch, chat, registry, version, migration);
      if (!why) return null;
      if (Date.now() > deadline) return `not healthy within ${this.d.healthGraceSecs} s: ${why}`;
      await sleep(this.d.pollMs ?? 250);
    }
  }
}

async function json(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/**
 * '' when all three services are healthy at `version`; else the first reason they are not. The
 * four routes are asked at once (a just-started process answers its first request slowly, and
 * asking them one after another added those delays up); the verdict reads them in order.
 */
export async function probeHealth(
  orch: string,
  chat: string,
  registry: string,
  version: string,
  migration: string | null,
): Promise<string> {
  const ask = (url: string) => json(url).catch((error: Error) => error);
  const [live, db, c, r] = await Promise.all([
    ask(`${orch}/api/v1/health`),
    ask(`${orch}/api/v1/health/db`),
    ask(`${chat}/api/health`),
    ask(`${registry}/health`),
  ]);
  for (const answer of [live, db, c, r])
    if (answer instanceof Error) return `a service does not answer (${answer.message})`;
  const [l, d, ch, re] = [live, db, c, r] as { status: number; body: any }[];
  if (l!.status !== 200) return `orchestration health answered ${l!.status}`;
  if (l!.body?.version !== version) return `orchestration runs ${l!.body?.version}, not ${version}`;
  if (d!.status !== 200) return `orchestration database health answered ${d!.status}`;
  if (migration && d!.body?.latest_migration !== migration)
    return `latest migration is ${d!.body?.latest_migration}, not ${migration}`;
  if (ch!.status !== 200 || ch!.body?.db_healthy !== true) return 'chat is not db_healthy';
  if (re!.status !== 200) return `registry health answered ${re!.status}`;
  return '';
}

/** The version an envelope's payload claims, before verification (shown while verifying). */
function peekVersion(envelope: unknown): string | null {
  try {
    const payload = JSON.parse(
      Buffer.from(String((envelope as { payload?: string }).payload ?? ''), 'base64').toString('utf8'),
    );
    return typeof payload.version === 'string' ? payload.version.slice(0, 128) : null;
  } catch {
    return null;
  }
}
