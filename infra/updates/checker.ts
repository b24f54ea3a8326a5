// Update checks of one service: at startup, then every interval plus a random 0-10%. One
// instance checks at a time (a session advisory lock held only for the check), and an instance
// skips a scheduled check another one made recently. Each check, verified or not, is an
// `UpdateCheckCompleted` event; the last verified manifest is the cached channel head. Checks
// pause while maintenance holds the write gate.

import { createHash } from 'node:crypto';
import { ManifestRefusal } from '../../domain/updates/manifest.ts';
import { nextCheckDelayMs, type CheckSchedule } from '../../domain/updates/schedule.ts';
import type { UpdateEvent, UpdateService } from '../../domain/updates/events.ts';
import { updateCheckStream } from '../../domain/updates/streams.ts';
import type { Clock } from '../clock.ts';
import type { CommandRunner } from '../commands.ts';
import type { UpdateChannelConfig } from '../config.ts';
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../logging.ts';
import { fetchManifest, verifyManifestEnvelope } from './manifest-source.ts';
import type { WriteGate } from './write-gate.ts';

type CheckEvent = Extract<UpdateEvent, { type: 'UpdateCheckCompleted' }>;
export type CheckData = CheckEvent['data'];

export interface CheckerDeps {
  service: UpdateService;
  channel: UpdateChannelConfig;
  schedule: CheckSchedule;
  publicKey: Uint8Array;
  commands: CommandRunner;
  db: Pool;
  clock: Clock;
  log: Logger;
  gate?: WriteGate | null;
  /** Injected in tests: the jitter source and the wait between checks. */
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const lockKey = (service: string) =>
  BigInt('0x' + createHash('sha256').update(`orchard:update-check:${service}`).digest('hex').slice(0, 15));

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

export class UpdateChecker {
  nextCheckAt: Date | null = null;
  private readonly abort = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(private readonly deps: CheckerDeps) {}

  get enabled(): boolean {
    return this.deps.channel.host !== null;
  }

  /** The effective interval (after the 900 s floor). */
  get intervalSecs(): number {
    return this.deps.schedule.intervalSecs;
  }

  get background(): boolean {
    return this.enabled && this.deps.schedule.background;
  }

  /** Fetch, verify and record one check; returns what was recorded. */
  async check(correlationId: string | null = null): Promise<CheckData> {
    const { service, channel, clock, db } = this.deps;
    if (!channel.host) throw new Error('no manifest host is configured');
    const { rows } = await db.query<{ channel: string; highest_version: string | null }>(
      'SELECT channel, highest_version FROM update_checks WHERE service = $1',
      [service],
    );
    const highest = rows[0]?.channel === channel.channel ? rows[0].highest_version : null;
    const data: CheckData = {
      service,
      channel: channel.channel,
      host: channel.host,
      checked_at: clock.now().toISOString(),
      result: 'failed',
      latest_version: null,
      envelope: null,
      error: null,
    };
    try {
      const fetched = await fetchManifest(channel.host, channel.channel);
      if (fetched.kind === 'empty') {
        data.result = 'empty';
      } else {
        const manifest = verifyManifestEnvelope(fetched.envelope, this.deps.publicKey, {
          channel: channel.channel,
          now: clock.now(),
          highestVerified: highest,
        });
        Object.assign(data, {
          result: 'verified',
          latest_version: manifest.version,
          envelope: fetched.envelope as Record<string, unknown>,
        });
      }
    } catch (error) {
      const code =
        error instanceof ManifestRefusal
          ? error.code
          : (error as { code?: string }).code === 'manifest_unreachable'
            ? 'manifest_unreachable'
            : 'check_failed';
      data.error = { code, message: (error as Error).message };
      this.deps.log.warn('update_check_failed', { service, code, message: (error as Error).message });
    }
    await this.deps.commands.record(
      updateCheckStream(service),
      { type: 'UpdateCheckCompleted', data },
      {
        actor: { kind: 'system', id: `update-checker-${service}` },
        correlationId,
      },
    );
    return data;
  }

  /**
   * One scheduled check under the lock; skipped when another instance holds it, when one
   * checked within half an interval (not at startup), or while maintenance holds the gate.
   */
  async tick(reason: 'startup' | 'scheduled'): Promise<'checked' | 'skipped'> {
    const { db, service, clock, schedule } = this.deps;
    if (this.deps.gate?.isClosed) return 'skipped';
    const client = await db.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        lockKey(service).toString(),
      ]);
      if (!rows[0]!.locked) return 'skipped';
      try {
        if (reason === 'scheduled') {
          const last = await client.query<{ checked_at: Date }>(
            'SELECT checked_at FROM update_checks WHERE service = $1',
            [service],
          );
          const at = last.rows[0]?.checked_at;
          if (at && clock.now().getTime() - at.getTime() < schedule.intervalSecs * 500) return 'skipped';
        }
        await this.check();
        return 'checked';
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [lockKey(service).toString()]);
      }
    } catch (error) {
      if (!this.abort.signal.aborted)
        this.deps.log.error('update_check_tick_failed', { service, error: (error as Error).message });
      return 'skipped';
    } finally {
      client.release();
    }
  }

  /** The background loop: nothing when checks or background checks are off. */
  start(): void {
    if (!this.background || this.loop) return;
    const sleep = this.deps.sleep ?? defaultSleep;
    const random = this.deps.random ?? Math.random;
    this.loop = (async () => {
      await this.tick('startup');
      while (!this.abort.signal.aborted) {
        const delay = nextCheckDelayMs(this.deps.schedule, random());
        this.nextCheckAt = new Date(this.deps.clock.now().getTime() + delay);
        await sleep(delay, this.abort.signal);
        if (this.abort.signal.aborted) break;
        await this.tick('scheduled');
      }
    })();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    this.loop = null;
  }
}
