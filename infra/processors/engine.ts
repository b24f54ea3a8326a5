// The processor engine: the one mechanism for everything that follows the log on behalf of the
// whole platform (DESIGN.md "Slices", "Projections"). A processor has a name and the event types
// it handles, and is one of two kinds:
//
// - a projection (infra/processors/projection.ts): `apply` writes its read model, and the batch's
//   writes and the checkpoint commit in one transaction, so a crash never loses or doubles an
//   event's effect; `rebuild` replays it from the start;
// - a reactor (./reactor.ts): `react` acts outside the read models, then the checkpoint moves, so
//   a crash hands the last batch over again and each reactor's effect is idempotent by event id.
//
// Each processor is fed from a log subscription filtered to its types, from its checkpoint (catch
// up, then live). A reactor of scope `each` (./reactor.ts) runs in every process instead: no lock,
// no stored checkpoint, it reconciles its state and then follows the log live from the head, with
// an optional periodic pass that the engine runs (and stops with it): a process's own background
// work that follows the log is a processor too, not a timer of its own. Otherwise one process at a time runs a given processor (a session advisory lock); the
// checkpoint update is also guarded by the previous value, so even a lost lock cannot make two
// writers move it past the same events.
//
// A process holds all its processor locks on one connection, its lock session: advisory locks
// belong to a session, and a connection held per processor would take as many connections out of
// the pool as there are processors (38 of its 40 once the chat spaces came), leaving the requests
// and the processors' own work queueing for the rest, or waiting forever. Losing that connection
// (the server ended the backend, the network went) loses every lock: the session closes once,
// whichever processor notices first, each processor stops, and they compete again on a new one.
// It never takes the process down.
//
// Processors are registered once, by the composition root (main/): the projections when the
// platform is built, each service's reactors when the service starts.

import Emittery from 'emittery';
import type { DomainEvent } from '../../domain/shared/decider.ts';
import { advisoryKey } from '../db/advisory-lock.ts';
import { inTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import { comparePositions, START, type Position } from '../eventstore/position.ts';
import { upcast } from '../eventstore/upcasters.ts';
import type { Logger } from '../logging.ts';
import { ProjectionTimeoutError, readCheckpoint, type Projection, type Recorded } from './projection.ts';
import { inEachProcess, moveReactorCheckpoint, reactorStart, type Reactor } from './reactor.ts';

export type Processor = Projection | Reactor;

export const isReactor = (processor: Processor): processor is Reactor => 'react' in processor;
/** A reactor every process runs (scope `each`): no lock, no stored checkpoint. */
const isEach = (processor: Processor): processor is Reactor => isReactor(processor) && inEachProcess(processor);
/** How logs name the processor's kind (`projection_failed`, `reactor_failed`: the names alerts match). */
const kindOf = (processor: Processor) => (isReactor(processor) ? 'reactor' : 'projection');

/** A processor's failures in this process, for the metrics. */
export interface ProcessorHealth {
  errors: number;
  lastErrorAt: Date | null;
  lastError: string | null;
}

const MAX_BATCH = 500;
const RETRY_MS = 1000;
const STANDBY_POLL_MS = 2000;
const WAIT_POLL_MS = 20;

const NOT_READY: unique symbol = Symbol('not ready');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An each-instance reactor's batch waits this long for the projections it reads. */
const PROJECTIONS_WAIT_MS = 30_000;

/** Wait `ms`, or until `halted` settles (then the timer is cleared at once); true when halted. */
function pause(ms: number, halted: Promise<void>): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    void halted.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** The connection holding this process's processor locks. */
interface LockSession {
  client: PoolClient;
  /** Settles when the connection fails or is closed; then every lock on it is gone. */
  lost: Promise<Error>;
  /** One query at a time on the connection (the processors share it; `pg` will stop queueing for us). */
  query(text: string, values: unknown[]): Promise<{ rows: { got?: boolean }[] }>;
  /** Give the connection back (destroyed): once, however many processors ask. */
  close(reason: Error): void;
}

/** Open a lock session on `client`: its error, or a close, settles `lost` and releases the client, once. */
function lockSessionOn(client: PoolClient): LockSession {
  let settle!: (error: Error) => void;
  const lost = new Promise<Error>((resolve) => (settle = resolve));
  let closed = false;
  const close = (reason: Error) => {
    if (closed) return;
    closed = true;
    settle(reason);
    client.release(true);
  };
  client.on('error', close); // later errors of a dead session land here too: nothing more to learn
  let queue: Promise<unknown> = Promise.resolve();
  const query = (text: string, values: unknown[]) => {
    const result = queue.then(() => client.query(text, values));
    queue = result.catch(() => {});
    return result;
  };
  return { client, lost, query, close };
}

const weighOf = (processor: Processor, event: RecordedEvent) =>
  !isReactor(processor) && processor.weigh ? processor.weigh(upcast(event) as Recorded<DomainEvent>) : 0;
const maxWeightOf = (processor: Processor) =>
  isReactor(processor) ? Infinity : (processor.maxBatchWeight ?? Infinity);

/** Split events read in bulk into batches within the projection's weight limit. */
function byWeight(processor: Processor, events: RecordedEvent[]): RecordedEvent[][] {
  const max = maxWeightOf(processor);
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
    weight += weighOf(processor, event);
  }
  if (batch.length) batches.push(batch);
  return batches;
}

/** A string as an SQL literal (standard_conforming_strings: only quotes are special). */
const sqlText = (value: string) => `'${value.replaceAll("'", "''")}'`;
/** A position part as an SQL number: a bigint prints digits only. */
const sqlNumber = (value: bigint) => BigInt(value).toString();
/** What a one-statement batch fails with when its checkpoint guard matched no row. */
const CHECKPOINT_MOVED = 'projection checkpoint moved under us:';

/**
 * The advisory-lock key of a processor: stable across processes and releases (each kind keeps
 * the key it had before the two shared an engine, so an old and a new process never both run one).
 */
const lockKey = (processor: Processor) =>
  advisoryKey(`${isReactor(processor) ? 'reactor' : 'projection'}:${processor.name}`);

/** One processor running in this process: how to halt it, and its loop. */
interface Running {
  halt(): void;
  halted: Promise<void>;
  done: Promise<void>;
}

export class ProcessorEngine {
  private readonly progress = new Emittery<{
    checkpoint: string;
    live: string;
    failed: { name: string; error: Error };
  }>();
  /** Processors following the log live in this process (subscribed, an each-instance reactor reconciled). */
  private readonly following = new Set<string>();
  /** Each-instance reactors' work in turn: reconcile, react and the periodic pass never overlap. */
  private readonly turns = new Map<string, Promise<unknown>>();
  /**
   * What this process's projections committed, and when it starts or stops running one.
   * In-process caches of read models listen here; `waitFor` resolves only after they have.
   */
  readonly committed = new Emittery<{ batch: { projection: string; events: RecordedEvent[] }; activity: string }>();
  /** Every registered processor, projections first. */
  private readonly all: Processor[];
  /** Checkpoints of the processors this process runs (holds the lock of). */
  private readonly local = new Map<string, Position | null>();
  private readonly running = new Map<string, Running>();
  private readonly failures = new Map<string, ProcessorHealth>();
  /** The connection this process's locks are held on, once opened (see the header). */
  private lockSession: Promise<LockSession> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly pool: Pool,
    readonly projections: Projection[],
    private readonly log: Logger,
  ) {
    this.all = [];
    this.register(projections);
  }

  /** Every registered processor: the projections, then the reactors in the order registered. */
  get processors(): readonly Processor[] {
    return this.all;
  }

  get reactors(): Reactor[] {
    return this.all.filter(isReactor);
  }

  /** Add processors (once each: a second registration of a name is a wiring mistake). They run once started. */
  register(processors: readonly Processor[]): void {
    for (const processor of processors) {
      if (this.all.some((p) => p.name === processor.name))
        throw new Error(`processor ${processor.name} is registered already`);
      if (
        isReactor(processor) &&
        !inEachProcess(processor) &&
        (processor.reconcile || processor.every || processor.afterProjections)
      ) {
        throw new Error(
          `reactor ${processor.name}: reconcile, every and afterProjections are for a reactor of scope each`,
        );
      }
      this.all.push(processor);
    }
  }

  /**
   * Stop the named processors and forget them: a service stopped inside a running process (and
   * perhaps started again, registering its processors anew) leaves none behind.
   */
  async unregister(names: readonly string[]): Promise<void> {
    await this.stop(names);
    for (const name of names) {
      const at = this.all.findIndex((p) => p.name === name);
      if (at >= 0 && !isReactor(this.all[at]!))
        throw new Error(`projection ${name} stays registered: the platform owns it`);
      if (at >= 0) this.all.splice(at, 1);
    }
  }

  /** Run the named processors (default: every registered one) in this process, as the active instance or a standby. */
  start(names?: readonly string[]): void {
    for (const processor of this.all) {
      if (names && !names.includes(processor.name)) continue;
      if (this.running.has(processor.name)) continue;
      let halt!: () => void;
      const halted = new Promise<void>((r) => (halt = r));
      this.running.set(processor.name, { halt, halted, done: this.run(processor, halted) });
    }
  }

  /** Stop the named processors (default: all, and close the lock session). */
  async stop(names?: readonly string[]): Promise<void> {
    const stopping = [...this.running].filter(([name]) => !names || names.includes(name));
    for (const [, r] of stopping) r.halt();
    await Promise.all(stopping.map(([, r]) => r.done));
    for (const [name] of stopping) this.running.delete(name);
    if (names) return;
    const session = await this.lockSession?.catch(() => null);
    this.lockSession = null;
    // Each processor unlocked its own; closing the connection frees anything left besides.
    session?.close(new Error('engine stopped'));
  }

  /** Failed batches of a processor in this process, and the last failure. */
  health(name: string): ProcessorHealth {
    return this.failures.get(name) ?? { errors: 0, lastErrorAt: null, lastError: null };
  }

  /** Whether this process holds the named processor's lock and is running it (an each-instance reactor: runs it). */
  isActive(name: string): boolean {
    return this.local.has(name);
  }

  /** How far this process's run of the processor has come (an each-instance reactor's only checkpoint). */
  position(name: string): Position | null | undefined {
    return this.local.get(name);
  }

  /**
   * Resolves once this process follows the log live for the processor (an each-instance
   * reactor: reconciled and subscribed); rejects if it fails first (the engine retries it still).
   */
  whenLive(name: string): Promise<void> {
    if (this.following.has(name)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = [
        this.progress.on('live', (live) => {
          if (live !== name) return;
          off.forEach((f) => f());
          resolve();
        }),
        this.progress.on('failed', (failure) => {
          if (failure.name !== name) return;
          off.forEach((f) => f());
          reject(failure.error);
        }),
      ];
    });
  }

  /**
   * Read-your-writes: resolve once every projection that handles one of `eventTypes` has
   * applied the log up to `position` (whichever process runs it).
   */
  waitFor(position: Position, eventTypes: string[], timeoutMs = 5000): Promise<void> {
    return this.waitForEvents(
      eventTypes.map((type) => ({ type, position })),
      timeoutMs,
    );
  }

  /**
   * Read-your-writes for appended events: each projection waits for the last of them it
   * handles. A projection's checkpoint only moves to events it handles, so waiting for the
   * append's last event would never end for one that handles only an earlier event of it.
   * Reactors are never waited for: a response does not read their effects.
   */
  async waitForEvents(events: { type: string; position: Position }[], timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const { name, handles } of this.projections) {
      const mine = events.filter((e) => (handles as readonly string[]).includes(e.type)).map((e) => e.position);
      if (mine.length === 0) continue;
      const position = mine.reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
      for (;;) {
        const at = this.local.has(name) ? this.local.get(name) : await readCheckpoint(this.pool, name);
        if (at && comparePositions(at, position) >= 0) break;
        const left = deadline - Date.now();
        if (left <= 0) throw new ProjectionTimeoutError(name, position, timeoutMs);
        await Promise.race([
          this.progress.once('checkpoint'),
          sleep(Math.min(left, WAIT_POLL_MS * (this.local.has(name) ? 10 : 1))),
        ]);
      }
    }
  }

  private async run(processor: Processor, halted: Promise<void>): Promise<void> {
    if (isEach(processor)) return this.runEach(processor, halted);
    const { name } = processor;
    let halt = false;
    void halted.then(() => (halt = true));
    while (!halt) {
      const lock = await this.acquire(processor, halted);
      if (!lock) return;
      // Losing the lock's connection loses the lock: stop consuming, then compete for it again.
      let lost = false;
      const done = Promise.race([
        halted,
        lock.lost.then((error) => {
          this.log.warn(`${kindOf(processor)}_lock_lost`, { [kindOf(processor)]: name, error: error.message });
          lost = true;
        }),
      ]);
      try {
        while (!halt && !lost) {
          try {
            await this.consume(processor, done);
          } catch (error) {
            this.failed(processor, error as Error);
            await Promise.race([sleep(RETRY_MS), done]);
          }
        }
      } finally {
        this.local.delete(name);
        await this.committed.emit('activity', name);
        if (!lost) await lock.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey(processor)]).catch(() => {});
      }
    }
  }

  /**
   * An each-instance reactor: no lock; reconcile, then follow the log live (again from where it
   * was after a failure) until halted, with its periodic pass beside.
   */
  private async runEach(reactor: Reactor, halted: Promise<void>): Promise<void> {
    let halt = false;
    void halted.then(() => (halt = true));
    const passes = reactor.every ? this.passes(reactor, reactor.every, halted) : Promise.resolve();
    try {
      while (!halt) {
        try {
          await this.consume(reactor, halted);
        } catch (error) {
          if (halt) break;
          this.failed(reactor, error as Error);
          await pause(RETRY_MS, halted);
        }
      }
    } finally {
      await passes;
      this.local.delete(reactor.name);
      await this.committed.emit('activity', reactor.name);
    }
  }

  /** The periodic pass of an each-instance reactor, every `ms` until halted. */
  private async passes(reactor: Reactor, every: NonNullable<Reactor['every']>, halted: Promise<void>): Promise<void> {
    while (!(await pause(every.ms, halted))) {
      try {
        await this.inTurn(reactor, () => every.run());
      } catch (error) {
        this.failed(reactor, error as Error);
      }
    }
  }

  /** Run an each-instance reactor's work after the work it already has. */
  private inTurn<T>(reactor: Reactor, work: () => Promise<T>): Promise<T> {
    const result = (this.turns.get(reactor.name) ?? Promise.resolve()).then(work);
    const settled = result.catch(() => {});
    this.turns.set(reactor.name, settled);
    void settled.then(() => {
      if (this.turns.get(reactor.name) === settled) this.turns.delete(reactor.name);
    });
    return result;
  }

  private failed(processor: Processor, error: Error): void {
    this.log.error(`${kindOf(processor)}_failed`, { [kindOf(processor)]: processor.name, error: error.message });
    this.failures.set(processor.name, {
      errors: this.health(processor.name).errors + 1,
      lastErrorAt: new Date(),
      lastError: error.message,
    });
    void this.progress.emit('failed', { name: processor.name, error });
  }

  /**
   * The lock session, opened on first use and again after one is lost. The engine forgets a
   * session as it closes, so every processor that noticed the loss meets the next one.
   */
  private openLockSession(): Promise<LockSession> {
    if (this.lockSession) return this.lockSession;
    const opening = this.pool.connect().then(lockSessionOn);
    this.lockSession = opening;
    const forget = () => {
      if (this.lockSession === opening) this.lockSession = null;
    };
    opening.then((session) => session.lost.then(forget), forget);
    return opening;
  }

  /** Wait (as a standby) until this process holds the processor's lock; null when halted first. */
  private async acquire(processor: Processor, halted: Promise<void>): Promise<LockSession | null> {
    let halt = false;
    void halted.then(() => (halt = true));
    while (!halt) {
      let session: LockSession | null = null;
      try {
        session = await this.openLockSession();
        const { rows } = await session.query('SELECT pg_try_advisory_lock($1::bigint) AS got', [lockKey(processor)]);
        if (rows[0]?.got) {
          if (!halt) return session;
          await session.query('SELECT pg_advisory_unlock($1::bigint)', [lockKey(processor)]);
        }
      } catch (error) {
        this.log.warn(`${kindOf(processor)}_lock_unavailable`, {
          [kindOf(processor)]: processor.name,
          error: (error as Error).message,
        });
        session?.close(error as Error);
      }
      await Promise.race([sleep(STANDBY_POLL_MS), halted]);
    }
    return null;
  }

  /**
   * Where the processor resumes: its checkpoint (a reactor's first start: the log's start or head).
   * An each-instance reactor: where this process's run of it was, else the head taken before it
   * reconciles (which it does at each start).
   */
  private async resumeAt(processor: Processor): Promise<Position | null> {
    if (isEach(processor)) {
      const at = this.local.has(processor.name) ? this.local.get(processor.name)! : await this.store.headPosition();
      if (processor.reconcile) await this.inTurn(processor, () => processor.reconcile!());
      return at;
    }
    return isReactor(processor)
      ? reactorStart(this.pool, this.store, processor)
      : readCheckpoint(this.pool, processor.name);
  }

  /** Feed the processor from its checkpoint until `done` settles (halted, or the lock lost). */
  private async consume(processor: Processor, done: Promise<void>): Promise<void> {
    let checkpoint = await this.resumeAt(processor);
    this.local.set(processor.name, checkpoint);
    await this.committed.emit('activity', processor.name);
    const subscription = this.store.subscribe({
      after: checkpoint ?? 'start',
      filter: { eventTypes: [...processor.handles] },
    });
    const events = subscription[Symbol.asyncIterator]();
    this.following.add(processor.name);
    void this.progress.emit('live', processor.name);
    try {
      let pending = events.next();
      const doneNow = done.then((): typeof NOT_READY => NOT_READY);
      for (;;) {
        const first = await Promise.race([pending, doneNow]);
        if (first === NOT_READY || first.done) return;
        // Take what is already delivered into the same batch; commit as soon as the feed waits.
        const batch = [first.value];
        let weight = weighOf(processor, first.value);
        for (;;) {
          pending = events.next();
          if (batch.length >= MAX_BATCH || weight >= maxWeightOf(processor)) break;
          const next = await Promise.race([
            pending,
            new Promise<typeof NOT_READY>((r) => setImmediate(() => r(NOT_READY))),
          ]);
          if (next === NOT_READY || next.done === true) break;
          batch.push(next.value);
          weight += weighOf(processor, next.value);
        }
        checkpoint = await this.process(processor, batch, checkpoint);
      }
    } finally {
      this.following.delete(processor.name);
      await subscription.close();
    }
  }

  /** One batch through the processor, checkpoint included; returns the new checkpoint. */
  private async process(processor: Processor, batch: RecordedEvent[], previous: Position | null): Promise<Position> {
    const last = batch[batch.length - 1]!.position;
    // The subscription is filtered to `handles`, so each event is a member of the union.
    if (isEach(processor)) {
      if (processor.afterProjections) {
        const applied = this.waitForEvents(
          batch.map(({ type, position }) => ({ type, position })),
          PROJECTIONS_WAIT_MS,
        );
        applied.catch(() => {});
        // Stopping stops the projections too: the wait ends with the reactor.
        const halted = this.running.get(processor.name)?.halted.then(() => NOT_READY) ?? new Promise<never>(() => {});
        if ((await Promise.race([applied, halted])) === NOT_READY) throw new Error(`reactor ${processor.name} stopped`);
      }
      await this.inTurn(processor, () => processor.react(batch.map(upcast) as Recorded<DomainEvent>[]));
    } else if (isReactor(processor)) {
      await processor.react(batch.map(upcast) as Recorded<DomainEvent>[]);
      if (!(await moveReactorCheckpoint(this.pool, processor.name, previous, last))) {
        throw new Error(`reactor ${processor.name}: checkpoint moved under us; restarting from it`);
      }
    } else {
      await this.applyBatch(processor, batch, previous);
    }
    if (this.local.has(processor.name)) this.local.set(processor.name, last);
    void this.progress.emit('checkpoint', processor.name);
    return last;
  }

  /**
   * Apply a projection's batch and move its checkpoint in one transaction.
   *
   * A projection whose `batchStatement` expresses the batch: one statement, one round trip. The
   * checkpoint move (guarded by its previous value) and the projection's writes are sibling
   * CTEs of it, and its final SELECT fails the statement when the guard matched no row, so the
   * writes roll back with it: the statement is its own transaction, atomic with the checkpoint.
   *
   * Otherwise the transaction opens and moves the checkpoint in one round trip, before the
   * batch is applied (`applyBatch` or `apply`), then commits: every write of the log waits on a
   * batch, so each round trip of one counts. (One text with several statements goes only
   * without parameters: the values are written into it, a projection's name from the code and
   * positions as numbers.)
   *
   * The batch commits asynchronously (`synchronous_commit = off`): a read model is derived data
   * whose checkpoint commits with it, so a server crash can lose only a last batch together with
   * its checkpoint move, and the projection applies those events again from the log (which keeps
   * synchronous commits). The commit is visible to every reader at once, so read-your-writes
   * holds; what it saves is a WAL flush on the path of every write that waits for a projection.
   */
  private async applyBatch(projection: Projection, batch: RecordedEvent[], previous: Position | null): Promise<void> {
    const last = batch[batch.length - 1]!.position;
    const name = sqlText(projection.name);
    const moveCheckpoint = previous
      ? `UPDATE projection_checkpoints SET commit_pos = ${sqlNumber(last.commit)}, prepare_pos = ${sqlNumber(last.prepare)}, updated_at = now()
           WHERE name = ${name} AND commit_pos = ${sqlNumber(previous.commit)} AND prepare_pos = ${sqlNumber(previous.prepare)}`
      : `INSERT INTO projection_checkpoints (name, commit_pos, prepare_pos) VALUES (${name}, ${sqlNumber(last.commit)}, ${sqlNumber(last.prepare)})
           ON CONFLICT (name) DO NOTHING`;
    const moved = () => new Error(`projection ${projection.name}: checkpoint moved under us; restarting from it`);
    const events = batch.map(upcast) as Recorded<DomainEvent>[];
    const statement = projection.batchStatement?.(events);
    if (statement) {
      // Caches hear of the batch before the commit as well as after it: another process that
      // waits on the checkpoint may answer its client the moment the commit lands.
      await this.committed.emit('batch', { projection: projection.name, events: batch });
      const writes = statement.writes.map((write, i) => `, w${i} AS (${write})`).join('');
      try {
        // The guard's failure is a cast of a non-constant text (so never folded at planning):
        // plain SQL has no RAISE. Data-modifying CTEs run to completion even unread, after it.
        await this.pool.query(
          `WITH checkpoint AS (${moveCheckpoint} RETURNING 1)${writes}
           SELECT CASE WHEN (SELECT count(*) FROM checkpoint) = 1 THEN set_config('synchronous_commit', 'off', true)
             ELSE ('${CHECKPOINT_MOVED} ' || (SELECT count(*) FROM checkpoint))::int::text END`,
          statement.values,
        );
      } catch (error) {
        if ((error as Error).message.includes(CHECKPOINT_MOVED)) throw moved();
        throw error;
      } finally {
        // The batch's transaction may have held back events from every reader of the log.
        this.store.transactionEnded?.();
      }
      await this.committed.emit('batch', { projection: projection.name, events: batch });
      return;
    }
    const tx = await this.pool.connect();
    try {
      const results = (await tx.query(`BEGIN; SET LOCAL synchronous_commit = off; ${moveCheckpoint}`)) as unknown as {
        rowCount: number | null;
      }[];
      if (results.at(-1)?.rowCount !== 1) throw moved();
      if (projection.applyBatch) await projection.applyBatch(events, tx, this.pool);
      else for (const event of events) await projection.apply(event, tx);
      // Caches hear of the batch before the commit as well as after it (see above).
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
  }

  /** Do `work` holding the processor's lock on a connection of its own (`rebuild`, `drain`); null when another process holds it. */
  private async exclusively<T>(processor: Processor, work: () => Promise<T>): Promise<T | null> {
    const lock = await this.pool.connect();
    try {
      const { rows } = await lock.query('SELECT pg_try_advisory_lock($1::bigint) AS got', [lockKey(processor)]);
      if (!rows[0].got) return null;
      return await work();
    } finally {
      await lock.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      lock.release();
    }
  }

  /** Read from `after` in pages and put each batch through the processor; the number of events. */
  private async catchUp(processor: Processor, after: Position | null): Promise<number> {
    let checkpoint = after;
    let handled = 0;
    for (;;) {
      const read = await this.store.readAll({
        after: checkpoint ?? START,
        filter: { eventTypes: [...processor.handles] },
        limit: MAX_BATCH,
      });
      if (read.length === 0) return handled;
      for (const batch of byWeight(processor, read)) {
        checkpoint = await this.process(processor, batch, checkpoint);
        handled += batch.length;
      }
    }
  }

  /**
   * Empty the projection's tables and replay it from the start of the log up to its head.
   * Refused while another process runs the projection. Reactors are never rebuilt.
   */
  async rebuild(name: string): Promise<number> {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new Error(`no projection named ${name}`);
    const applied = await this.exclusively(projection, async () => {
      await inTransaction(this.pool, async (tx) => {
        if (projection.tables.length) await tx.query(`TRUNCATE ${projection.tables.join(', ')}`);
        await tx.query('DELETE FROM projection_checkpoints WHERE name = $1', [name]);
      });
      return this.catchUp(projection, null);
    });
    if (applied === null)
      throw new Error(`projection ${name} is running in another process; stop it before rebuilding`);
    return applied;
  }

  /**
   * Put everything the log holds now through a processor that is not started here, in this
   * process (tests drive reactors so); the number of events. 0 when another process runs it.
   * A failing batch throws, and is handed over again next time.
   */
  async drain(name: string): Promise<number> {
    const processor = this.all.find((p) => p.name === name);
    if (!processor) throw new Error(`no processor named ${name}`);
    if (this.running.has(name))
      throw new Error(`processor ${name} is started in this process; drain only drives one that is not`);
    if (isEach(processor))
      throw new Error(`reactor ${name} runs in each process from the head: there is nothing to drain`);
    return (
      (await this.exclusively(processor, async () => this.catchUp(processor, await this.resumeAt(processor)))) ?? 0
    );
  }
}
