// The port every release runtime implements: `docker` (production: compose and the Docker
// socket) and `process` (tests and container-less installs: the services as child processes of
// the sidecar). The executor drives the apply through it and never knows which one runs.

import type { Manifest, Requirement } from '../../domain/updates/manifest.ts';

export type RequirementStatus = 'present' | 'missing' | 'unverifiable';

export interface DeliveryItem extends Requirement {
  status: RequirementStatus;
}

/** A step failed for a reason the apply names (`digest_mismatch`, `snapshot_tool_too_old`, ...). */
export class StepError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'StepError';
  }
}

export interface HealthTargets {
  orch: string;
  chat: string;
  registry: string;
}

export interface ReleaseRuntime {
  readonly name: 'docker' | 'process';
  /** Where the three services answer (base URLs). */
  readonly health: HealthTargets;
  /** The version running now (null when unknown). */
  currentVersion(): Promise<string | null>;
  /** At sidecar start: run the current release if it is not running. */
  startCurrent(): Promise<void>;
  /** pg_dump of the whole database (log included) into `file`. */
  snapshot(file: string): Promise<void>;
  /** Restore `file` in one transaction; throws when it fails. */
  restore(file: string): Promise<void>;
  pull(manifest: Manifest): Promise<void>;
  /** Check the pulled release against the manifest (the process runtime also unpacks it then). */
  verifyDigest(manifest: Manifest): Promise<void>;
  /**
   * Optional: load release `version` ahead of its start, opening neither the database nor a
   * port (the process runtime's standby child), so that starting it later is quick. Pre-flight
   * prepares the target (a failure: `release_not_ready`, nothing touched); a rollback prepares
   * the prior release while the snapshot is restored.
   */
  prepare?(version: string): Promise<void>;
  /** Stop a prepared release that will not be started (a rollback, a frozen apply). */
  discardPrepared?(): Promise<void>;
  /** Stop the running services (SIGTERM, killed after the drain time); a prepared release stays. */
  drain(): Promise<void>;
  /** The new release's migrations (`orchard migrate`; the process runtime's prepared standby). */
  migrate(manifest: Manifest): Promise<void>;
  /** Start the new release. */
  recreate(manifest: Manifest): Promise<void>;
  /** Stop whatever runs and start `version` (a release the runtime ran before). */
  restartPrior(version: string): Promise<void>;
  delivery(requirements: Requirement[]): Promise<DeliveryItem[]>;
  close(): Promise<void>;
}
