// The projection engine of DESIGN.md "Projections".
//
// Each projection is fed from a log subscription filtered to the event types it handles. Events
// are applied in batches; a batch's read-model changes and the projection's checkpoint commit in
// one transaction, so a crash never loses or doubles an event's effect. One process at a time
// runs a given projection (a session advisory lock); the checkpoint update is also guarded by the
// previous value, so even a lost lock cannot make two writers apply the same events.
//
// A process holds all its projection locks on one connection, its lock session: advisory locks
// belong to a session, and a connection held per projection would take as many connections out
// of the pool as there are projections (38 of its 40 once the chat spaces came), leaving the
// requests and the projections' own work queueing for the rest, or waiting forever. Losing that
// connection loses every lock: each projection stops, and they compete again on a new session.

import Emittery from 'emittery';
import type { DomainEvent } from '../../domain/shared/decider.ts';
import { inTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import { comparePositions, formatPosition, START, type Position } from '../eventstore/position.ts';
import { upcast } from '../eventstore/upcasters.ts';
import type { Logger } from '../logging.ts';
import { advisoryKey } from '../db/advisory-lock.ts';

/** A recorded event narrowed to one member of a domain union: `type` discriminates `data`. */
export type Recorded<Event extends DomainEvent> = Event extends DomainEvent
  ? Omit<RecordedEvent, 'type' | 'data'> & { type: Event['type']; data: Event['data'] }
  : never;

/**
 * A read model, typed by the event union it consumes: a renamed event field fails to compile
 * in its projection. (Methods, not function properties, so a projection of one union fits the
 * engine's list of all of them.)
 */
export interface Projection<Event extends DomainEvent = DomainEvent> {
  name: string;
  /** Event types it consumes; the engine subscribes to exactly these. */
  handles: readonly Event['type'][];
  /** Tables it owns (created by migrations); `rebuild` empties them. */
  tables: readonly string[];
  apply(event: Recorded<Event>, tx: PoolClient): Promise<void>;
  /**
   * Optional: apply a whole batch at once (multi-row SQL), used instead of `apply` when present.
   * One round trip per batch instead of one per event is what makes a catch-up fast.
   * `pool` is the engine's, for work beside the transaction that writes no read model (say,
   * computing on other connections, and so other cores, what the transaction then stores).
   */
  applyBatch?(events: Recorded<Event>[], tx: PoolClient, pool?: Pool): Promise<void>;
  /**
   * Optional: how much work an event is (say, rows it writes). A batch stops growing once its
   * events weigh `maxBatchWeight` (its first event is always taken), so one transaction, which
   * holds back every reader of the log while it is open, stays short.
   */
  weigh?(event: Recorded<Event>): number;
  maxBatchWeight?: number;
}

/** Declare a projection with its union spelled once: `defineProjection<UserEvent>({...})`. */
export const defineProjection = <Event extends DomainEvent>(projection: Projection<Event>): Projection<Event> => projection;

const MAX_BATCH = 500;
const RETRY_MS = 1000;
const STANDBY_POLL_MS = 2000;
const WAIT_POLL_MS = 20;

const NOT_READY: unique symbol = Symbol('not ready');

/** The connection holding this process's projection locks; `lost` settles when it fails. */
interface LockSession {
  client: PoolClient;
  lost: Promise<Error>;
  /** One query at a time on the connection (the projections share it; `pg` will stop queueing for us). */
  query(text: string, values: unknown[]): Promise<{ rows: { got?: boolean }[] }>;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const weighOf = (projection: Projection, event: RecordedEvent) => (projection.weigh ? projection.weigh(upcast(event) as Recorded<DomainEvent>) : 0);

/** Split events read in bulk into batches within the projection's weight limit. */
function byWeight(projection: Projection, events: RecordedEvent[]): RecordedEvent[][] {
  const max = projection.maxBatchWeight ?? Infinity;
  const batches: RecordedEvent[][] = [];
  let batch: RecordedEvent[] = [];
  let weight = 0;
  for (const event of events) {
    if (batch.length > 0 && weight >= max) {
      batches.push(batch);
      batch = [];
      weight = 0;
    }
    batch.push(event);
    weight += weighOf(projection, event);
  }
  if (batch.length) batches.push(batch);
  return batches;
}

/** A string as an SQL literal (standard_conforming_strings: only quotes are special). */
const sqlText = (value: string) => `'${value.replaceAll("'", "''")}'`;
/** A position part as an SQL number: a bigint prints digits only. */
const sqlNumber = (value: bigint) => BigInt(value).toString();

/** The advisory-lock key of a projection: stable across processes. */
const lockKey = (name: string) => advisoryKey(`projection:${name}`);

export async function readCheckpoint(db: Pool | PoolClient, name: string): Promise<Position | null> {
  const { rows } = await db.query<{ c: string; p: string }>(
    'SELECT commit_pos::text AS c, prepare_pos::text AS p FROM projection_checkpoints WHERE name = $1', [name]);
  return rows[0] ? { commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) } : null;
}

/** Every projection's checkpoint, in one query (the metrics read them all at each scrape). */
export async function readCheckpoints(db: Pool | PoolClient): Promise<Map<string, Position>> {
  const { rows } = await db.query<{ name: string; c: string; p: string }>(
    'SELECT name, commit_pos::text AS c, prepare_pos::text AS p FROM projection_checkpoints');
  return new Map(rows.map((r) => [r.name, { commit: BigInt(r.c), prepare: BigInt(r.p) }]));
}

export class ProjectionTimeoutError extends Error {
  constructor(readonly projection: string, readonly position: Position, ms: number) {
    super(`projection ${projection} did not reach ${formatPosition(position)} within ${ms} ms`);
    this.name = 'ProjectionTimeoutError';
  }
}

export class ProjectionEngine {
  private readonly progress = new Emittery<{ checkpoint: string }>();
  /**
   * What this process's projections committed, and when it starts or stops running one.
   * In-process caches of read models listen here; `waitFor` resolves only after they have.
   */
  readonly committed = new Emittery<{ batch: { projection: string; events: RecordedEvent[] }; activity: string }>();
  /** Checkpoints of the projections this process runs. */
  private readonly local = new Map<string, Position | null>();
  private readonly running: Promise<void>[] = [];
  /** Failures of the projections this process ran, for the metrics. */
  private readonly failures = new Map<string, { errors: number; lastErrorAt: Date | null; lastError: string | null }>();
  private stopped = false;
  /** The connection this process's projection locks are held on, once opened (see the header). */
  private lockSession: Promise<LockSession> | null = null;
  private stopSignal: () => void = () => {};
  private readonly stopping = new Promise<void>((r) => (this.stopSignal = r));

  constructor(
    private readonly store: EventStore,
    private readonly pool: Pool,
    readonly projections: Projection[],
    private readonly log: Logger,
  ) {}

  start(): void {
    for (const projection of this.projections) this.running.push(this.run(projection));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSignal();
    await Promise.all(this.running);
    const session = await this.lockSession?.catch(() => null);
    this.lockSession = null;
    // Each projection unlocked its own; closing the connection frees anything left besides.
    session?.client.release(true);
  }

  /** Failed batches of a projection in this process, and the last failure. */
  health(name: string): { errors: number; lastErrorAt: Date | null; lastError: string | null } {
    return this.failures.get(name) ?? { errors: 0, lastErrorAt: null, lastError: null };
  }

  /** Whether this process holds the named projection's lock and is running it. */
  isActive(name: string): boolean {
    return this.local.has(name);
  }

  /**
   * Read-your-writes: resolve once every projection that handles one of `eventTypes` has
   * applied the log up to `position` (whichever process runs it).
   */
  waitFor(position: Position, eventTypes: string[], timeoutMs = 5000): Promise<void> {
    return this.waitForEvents(eventTypes.map((type) => ({ type, position })), timeoutMs);
  }

  /**
   * Read-your-writes for appended events: each projection waits for the last of them it
   * handles. A projection's checkpoint only moves to events it handles, so waiting for the
   * append's last event would never end for one that handles only an earlier event of it.
   */
  async waitForEvents(events: { type: string; position: Position }[], timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const { name, handles } of this.projections) {
      const mine = events.filter((e) => handles.includes(e.type)).map((e) => e.position);
      if (mine.length === 0) continue;
      const position = mine.reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
      for (;;) {
        const at = this.local.has(name) ? this.local.get(name) : await readCheckpoint(this.pool, name);
        if (at && comparePositions(at, position) >= 0) break;
        const left = deadline - Date.now();
        if (left <= 0) throw new ProjectionTimeoutError(name, position, timeoutMs);
        await Promise.race([this.progress.once('checkpoint'), sleep(Math.min(left, WAIT_POLL_MS * (this.local.has(name) ? 10 : 1)))]);
      }
    }
  }

  private async run(projection: Projection): Promise<void> {
    while (!this.stopped) {
      const lock = await this.acquire(projection.name);
      if (!lock) return;
      // Losing the lock's connection loses the lock: stop consuming, then compete for it again.
      let lost = false;
      const halted = Promise.race([this.stopping, lock.lost.then((error) => {
        this.log.warn('projection_lock_lost', { projection: projection.name, error: error.message });
        lost = true;
      })]);
      try {
        while (!this.stopped && !lost) {
          try {
            await this.consume(projection, halted);
          } catch (error) {
            const message = (error as Error).message;
            this.log.error('projection_failed', { projection: projection.name, error: message });
            this.failures.set(projection.name, { errors: this.health(projection.name).errors + 1, lastErrorAt: new Date(), lastError: message });
            await Promise.race([sleep(RETRY_MS), halted]);
          }
        }
      } finally {
        this.local.delete(projection.name);
        await this.committed.emit('activity', projection.name);
        if (lost) this.dropLockSession(lock);
        else await lock.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey(projection.name)]).catch(() => {});
      }
    }
  }

  /** The lock session, opened on first use (and again after one is lost). */
  private openLockSession(): Promise<LockSession> {
    this.lockSession ??= (async () => {
      const client = await this.pool.connect();
      const lost = new Promise<Error>((resolve) => client.once('error', resolve));
      client.on('error', () => {}); // later errors of a dead session: nothing more to learn
      let queue: Promise<unknown> = Promise.resolve();
      const query = (text: string, values: unknown[]) => {
        const result = queue.then(() => client.query(text, values));
        queue = result.catch(() => {});
        return result;
      };
      return { client, lost, query };
    })();
    const opening = this.lockSession;
    opening.catch(() => {
      if (this.lockSession === opening) this.lockSession = null;
    });
    return opening;
  }

  /** Forget a lost session (once, whichever projection notices first) and close its connection. */
  private dropLockSession(session: LockSession): void {
    void this.lockSession?.then((current) => {
      if (current !== session) return;
      this.lockSession = null;
      session.client.release(true);
    }, () => {});
  }

  /** Wait (as a standby) until this process holds the projection's lock; null when stopped first. */
  private async acquire(name: string): Promise<LockSession | null> {
    while (!this.stopped) {
      let session: LockSession | null = null;
      try {
        session = await this.openLockSession();
        const { rows } = await session.query('SELECT pg_try_advisory_lock($1::bigint) AS got', [lockKey(name)]);
        if (rows[0]?.got) return session;
      } catch (error) {
        this.log.warn('projection_lock_unavailable', { projection: name, error: (error as Error).message });
        if (session) this.dropLockSession(session);
      }
      await Promise.race([sleep(STANDBY_POLL_MS), this.stopping]);
    }
    return null;
  }

  /** Feed the projection from its checkpoint until `halted` settles (stop, or the lock lost). */
  private async consume(projection: Projection, halted: Promise<void>): Promise<void> {
    let checkpoint = await readCheckpoint(this.pool, projection.name);
    this.local.set(projection.name, checkpoint);
    await this.committed.emit('activity', projection.name);
    const subscription = this.store.subscribe({ after: checkpoint ?? 'start', filter: { eventTypes: [...projection.handles] } });
    const events = subscription[Symbol.asyncIterator]();
    try {
      let pending = events.next();
      const haltedNow = halted.then((): typeof NOT_READY => NOT_READY);
      for (;;) {
        const first = await Promise.race([pending, haltedNow]);
        if (first === NOT_READY || first.done) return;
        // Take what is already delivered into the same batch; commit as soon as the feed waits.
        const batch = [first.value];
        let weight = weighOf(projection, first.value);
        for (;;) {
          pending = events.next();
          if (batch.length >= MAX_BATCH || weight >= (projection.maxBatchWeight ?? Infinity)) break;
          const next = await Promise.race([pending, new Promise<typeof NOT_READY>((r) => setImmediate(() => r(NOT_READY)))]);
          if (next === NOT_READY || next.done === true) break;
          batch.push(next.value);
          weight += weighOf(projection, next.value);
        }
        checkpoint = await this.applyBatch(projection, batch, checkpoint);
      }
    } finally {
      await subscription.close();
    }
  }

  /**
   * Apply a batch and move the checkpoint in one transaction; returns the new checkpoint. The
   * transaction opens and moves the checkpoint (guarded by its previous value) in one round trip,
   * before the batch is applied: every write of the log waits on a batch, so each round trip of
   * one counts. (One text with several statements goes only without parameters: the values are
   * written into it, a projection's name from the code and positions as numbers.)
   *
   * The batch commits asynchronously (`synchronous_commit = off`): a read model is derived data
   * whose checkpoint commits with it, so a server crash can lose only a last batch together with
   * its checkpoint move, and the projection applies those events again from the log (which keeps
   * synchronous commits). The commit is visible to every reader at once, so read-your-writes
   * holds; what it saves is a WAL flush on the path of every write that waits for a projection.
   */
  private async applyBatch(projection: Projection, batch: RecordedEvent[], previous: Position | null): Promise<Position> {
    const last = batch[batch.length - 1]!.position;
    const tx = await this.pool.connect();
    try {
      const name = sqlText(projection.name);
      const results = await tx.query(`BEGIN; SET LOCAL synchronous_commit = off; ${previous
        ? `UPDATE projection_checkpoints SET commit_pos = ${sqlNumber(last.commit)}, prepare_pos = ${sqlNumber(last.prepare)}, updated_at = now()
           WHERE name = ${name} AND commit_pos = ${sqlNumber(previous.commit)} AND prepare_pos = ${sqlNumber(previous.prepare)}`
        : `INSERT INTO projection_checkpoints (name, commit_pos, prepare_pos) VALUES (${name}, ${sqlNumber(last.commit)}, ${sqlNumber(last.prepare)})
           ON CONFLICT (name) DO NOTHING`}`) as unknown as { rowCount: number | null }[];
      if (results.at(-1)?.rowCount !== 1) throw new Error(`projection ${projection.name}: checkpoint moved under us; restarting from it`);
      // The subscription is filtered to `handles`, so each event is a member of the union.
      const events = batch.map(upcast) as Recorded<DomainEvent>[];
      if (projection.applyBatch) await projection.applyBatch(events, tx, this.pool);
      else for (const event of events) await projection.apply(event, tx);
      // Caches hear of the batch before the commit as well as after it: another process that
      // waits on the checkpoint may answer its client the moment the commit lands.
      await this.committed.emit('batch', { projection: projection.name, events: batch });
      await tx.query('COMMIT');
      // The batch's transaction may have held back events from every reader of the log.
      this.store.transactionEnded?.();
    } catch (error) {
      await tx.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      tx.release();
    }
    await this.committed.emit('batch', { projection: projection.name, events: batch });
    if (this.local.has(projection.name)) this.local.set(projection.name, last);
    void this.progress.emit('checkpoint', projection.name);
    return last;
  }

  /**
   * Empty the projection's tables and replay it from the start of the log up to its head.
   * Refused while another process runs the projection.
   */
  async rebuild(name: string): Promise<number> {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new Error(`no projection named ${name}`);
    const lock = await this.pool.connect();
    try {
      const { rows } = await lock.query('SELECT pg_try_advisory_lock($1::bigint) AS got', [lockKey(name)]);
      if (!rows[0].got) throw new Error(`projection ${name} is running in another process; stop it before rebuilding`);
      await inTransaction(this.pool, async (tx) => {
        if (projection.tables.length) await tx.query(`TRUNCATE ${projection.tables.join(', ')}`);
        await tx.query('DELETE FROM projection_checkpoints WHERE name = $1', [name]);
      });
      let checkpoint: Position | null = null;
      let applied = 0;
      for (;;) {
        const read = await this.store.readAll({ after: checkpoint ?? START, filter: { eventTypes: [...projection.handles] }, limit: MAX_BATCH });
        if (read.length === 0) return applied;
        for (const batch of byWeight(projection, read)) {
          checkpoint = await this.applyBatch(projection, batch, checkpoint);
          applied += batch.length;
        }
      }
    } finally {
      await lock.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      lock.release();
    }
  }
}
