// A reactor: a follower of the log that acts on events rather than keeping a read model (the
// scheduled-message poster, the web-push sender). It reads the event types it names from its
// checkpoint, hands each page to `handle`, then moves the checkpoint (`chat_reactor_checkpoints`).
// One process runs a reactor at a time (a session advisory lock on its own connection; the
// others stand by and take over when that connection goes, as after a kill -9).
//
// Delivery is at least once: a crash between `handle` and the checkpoint hands the page over
// again, so handlers must be idempotent (the poster appends with `no_stream`; the push sender's
// resend carries the same Topic and replaces the first). `rebuild` never touches a reactor.

import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from '../db/pool.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import type { Position } from '../eventstore/position.ts';
import type { Logger } from '../logging.ts';

export interface ReactorOptions {
  name: string;
  eventTypes: string[];
  store: Pick<EventStore, 'readAll' | 'headPosition'>;
  pool: Pool;
  log: Logger;
  handle(events: RecordedEvent[]): Promise<void>;
  /** Where a reactor with no checkpoint starts: the log's start (default) or its head. */
  startAt?: 'start' | 'head';
  pollMs?: number;
  standbyMs?: number;
  page?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lockKey = (name: string) => createHash('sha256').update(`reactor:${name}`).digest().readBigInt64BE(0).toString();

export class Reactor {
  private lock: PoolClient | null = null;
  /** The checkpoint as this process last read or wrote it: only the lock holder moves it, so it is read once per hold. */
  private known: Position | 'start' | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /** Serialises drains (a test's and the loop's) inside this process. */
  private busy: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ReactorOptions) {}

  /** Whether this process holds the reactor's lock (taking it when free). */
  private async holdLock(): Promise<boolean> {
    if (this.lock) return true;
    const client = await this.options.pool.connect();
    try {
      const { rows } = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS got', [lockKey(this.options.name)]);
      if (rows[0]?.got) {
        client.on('error', () => void this.dropLock(true));
        this.lock = client;
        return true;
      }
    } catch {
      client.release(true);
      return false;
    }
    client.release();
    return false;
  }

  private async dropLock(broken: boolean): Promise<void> {
    const client = this.lock;
    this.lock = null;
    this.known = null;
    if (!client) return;
    if (broken) return client.release(true);
    await client.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey(this.options.name)]).catch(() => {});
    client.release();
  }

  private async checkpoint(): Promise<Position | 'start'> {
    const { rows } = await this.options.pool.query<{ c: string; p: string }>(
      'SELECT commit_pos::text AS c, prepare_pos::text AS p FROM chat_reactor_checkpoints WHERE name = $1', [this.options.name]);
    if (rows[0]) return { commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) };
    if (this.options.startAt !== 'head') return 'start';
    const head = await this.options.store.headPosition();
    if (head) await this.save(head);
    return head ?? 'start';
  }

  private async save(position: Position): Promise<void> {
    await this.options.pool.query(
      `INSERT INTO chat_reactor_checkpoints (name, commit_pos, prepare_pos, updated_at) VALUES ($1, $2, $3, now())
       ON CONFLICT (name) DO UPDATE SET commit_pos = EXCLUDED.commit_pos, prepare_pos = EXCLUDED.prepare_pos, updated_at = now()`,
      [this.options.name, position.commit.toString(), position.prepare.toString()]);
  }

  /** Handle one page if this process holds the lock; the number of events handled (0: none waiting, or another process runs it). */
  async step(): Promise<number> {
    const run = this.busy.then(async () => {
      if (!(await this.holdLock())) return 0;
      const after = (this.known ??= await this.checkpoint());
      const events = await this.options.store.readAll({ after, filter: { eventTypes: this.options.eventTypes }, limit: this.options.page ?? 500 });
      if (!events.length) return 0;
      await this.options.handle(events);
      await this.save(events.at(-1)!.position);
      this.known = events.at(-1)!.position;
      return events.length;
    });
    this.busy = run.catch(() => {});
    return run;
  }

  /** Handle everything there is now (tests). */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.step(); n > 0; n = await this.step()) total += n;
    return total;
  }

  start(): void {
    if (this.running) return;
    this.stopped = false;
    this.running = (async () => {
      while (!this.stopped) {
        try {
          const handled = await this.step();
          if (handled === 0) await sleep(this.lock ? this.options.pollMs ?? 100 : this.options.standbyMs ?? 1000);
        } catch (error) {
          if (this.stopped) break;
          this.options.log.error('reactor_failed', { reactor: this.options.name, error: (error as Error).message });
          await this.dropLock(true);
          await sleep(1000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    this.running = null;
    await this.busy;
    await this.dropLock(false);
  }
}
