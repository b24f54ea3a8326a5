// The scheduler: fires what is due in `scheduled_jobs` (a projection of the log, so a restart or
// a rebuild loses nothing), on any number of instances at once.
//
// - Claim: one statement takes up to `batch` due jobs whose lease is free or lapsed, with
//   `FOR UPDATE SKIP LOCKED` (two instances never claim the same row at once), and leases them
//   for 30 s. A job whose instance dies is claimed again once its lease lapses.
// - Fire: the kind's handler decides from the log and appends (each firing to its own stream,
//   with the revision it read or `no_stream`), so a job fired twice, by a lapsed lease or a lagging
//   read model, appends once: exactly once comes from the log, not from the lease. A batch handler
//   takes all the claimed jobs of its kind at once and appends their firings together (one
//   `appendMany`, each stream still under its own expectation); a plain handler fires one job.
//   On EventStoreDB that append can stop half way (no transaction across streams): `runMany`
//   settles each job on its own stream (infra/commands.ts), so a job whose firing landed is done
//   and one whose firing did not fails alone and is fired again after its back-off.
// - Done: the projection removes (or moves) the job when it applies the event the firing
//   appended. A handler that fails keeps its lease for a short back-off and is tried again.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../logging.ts';

export const LEASE_MS = 30_000;
const RETRY_AFTER_FAILURE_MS = 5_000;

export interface Job {
  id: string;
  kind: string;
  subject_id: string;
  due_at: Date;
  data: Record<string, unknown>;
}

/** Shared by the firings of one claimed batch: memoised reads (a channel's members, its stream). */
export interface FireContext {
  now: Date;
  memo<T>(key: string, load: () => Promise<T>): Promise<T>;
}

export type JobHandler = (job: Job, context: FireContext) => Promise<void>;

/**
 * Fires every claimed job of its kind at once (so their appends can share one log transaction);
 * answers the jobs that failed, by id, with why. A throw fails the whole batch.
 */
export interface BatchJobHandler {
  batch(jobs: Job[], context: FireContext): Promise<Map<string, Error>>;
}

export interface SchedulerOptions {
  pool: Pool;
  clock: Clock;
  log: Logger;
  handlers: Record<string, JobHandler | BatchJobHandler>;
  /** Jobs claimed at once (default 200). */
  batch?: number;
  /** Firings in flight at once (default 16). */
  concurrency?: number;
  /** Sleep between claims when nothing was due (default 250 ms). */
  pollMs?: number;
  leaseMs?: number;
}

export async function mapLimit<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item);
    }
  });
  await Promise.all(runners);
}

export class Scheduler {
  readonly owner = randomUUID();
  /** Firings this instance completed (handlers that returned), for the bench and tests. */
  fired = 0;
  private running: Promise<void> | null = null;
  private stopped = false;
  private wake: () => void = () => {};

  constructor(private readonly options: SchedulerOptions) {}

  /** Claim one batch of due jobs and fire them; the number claimed. */
  async tick(): Promise<number> {
    const { pool, clock, log, handlers } = this.options;
    const now = clock.now();
    const leaseMs = this.options.leaseMs ?? LEASE_MS;
    const { rows } = await pool.query<Job>(
      `UPDATE scheduled_jobs j SET lease_owner = $2, lease_until = $3
       FROM (SELECT id FROM scheduled_jobs WHERE due_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
             ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED) due
       WHERE j.id = due.id RETURNING j.id, j.kind, j.subject_id, j.due_at, j.data`,
      [now, this.owner, new Date(now.getTime() + leaseMs), this.options.batch ?? 200],
    );
    if (!rows.length) return 0;
    const memos = new Map<string, Promise<unknown>>();
    const context: FireContext = {
      now,
      memo<T>(key: string, load: () => Promise<T>): Promise<T> {
        let hit = memos.get(key) as Promise<T> | undefined;
        if (!hit) memos.set(key, (hit = load()));
        return hit;
      },
    };
    const failed = async (job: Job, error: Error) => {
      log.error('scheduler_job_failed', { job_id: job.id, kind: job.kind, error: error.message });
      await pool
        .query('UPDATE scheduled_jobs SET lease_until = $3 WHERE id = $1 AND lease_owner = $2', [
          job.id,
          this.owner,
          new Date(clock.now().getTime() + RETRY_AFTER_FAILURE_MS),
        ])
        .catch(() => {});
    };
    const single: Job[] = [];
    const batches = new Map<BatchJobHandler, Job[]>();
    for (const job of rows) {
      const handler = handlers[job.kind];
      if (handler && typeof handler !== 'function') batches.set(handler, [...(batches.get(handler) ?? []), job]);
      else single.push(job);
    }
    await Promise.all([
      ...[...batches].map(async ([handler, jobs]) => {
        let failures: Map<string, Error>;
        try {
          failures = await handler.batch(jobs, context);
        } catch (error) {
          failures = new Map(jobs.map((job) => [job.id, error as Error]));
        }
        for (const job of jobs) {
          const error = failures.get(job.id);
          if (error) await failed(job, error);
          else this.fired += 1;
        }
      }),
      mapLimit(single, this.options.concurrency ?? 16, async (job) => {
        const handler = handlers[job.kind];
        try {
          if (typeof handler !== 'function') throw new Error(`no handler for job kind ${job.kind}`);
          await handler(job, context);
          this.fired += 1;
        } catch (error) {
          await failed(job, error as Error);
        }
      }),
    ]);
    return rows.length;
  }

  start(): void {
    if (this.running) return;
    this.stopped = false;
    const batch = this.options.batch ?? 200;
    this.running = (async () => {
      while (!this.stopped) {
        let claimed = 0;
        try {
          claimed = await this.tick();
        } catch (error) {
          if (this.stopped) break;
          this.options.log.error('scheduler_claim_failed', { error: (error as Error).message });
        }
        if (claimed < batch && !this.stopped) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.options.pollMs ?? 250);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.running;
    this.running = null;
  }
}
