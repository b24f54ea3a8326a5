// A reactor: the processor kind that acts on events (posts a message, sends a push) rather than
// keeping a read model. The processor engine (./engine.ts) runs it as it runs a projection (one
// active instance across processes, catch-up then live) but commits differently: the effect
// first, then the checkpoint, in `chat_reactor_checkpoints`. A crash between the two hands the
// batch over again, so every reactor's effect must be idempotent by event id (each one says how).
// `rebuild` never touches a reactor: its effects are outside the database.
//
//
// A reactor has one of two scopes:
// - `one` (the default): one active instance across processes (the engine's advisory lock), with
//   a stored checkpoint, as above;
// - `each`: every process runs it (state of the process itself: its sockets, its write gate). No
//   lock and no stored checkpoint: at start it `reconcile`s its state (from the read models, or
//   the log), then follows the log live from the head it took before reconciling, so nothing
//   between the two is missed (an event seen by both is reconciled twice: the effect is a
//   reconciliation, idempotent by construction). A failed batch is handed over again from the
//   last position this process acted on. `every` is a periodic pass the engine runs while the
//   reactor runs (work no event announces); reconcile, react and the pass never overlap.
//   `afterProjections` hands a batch over only once the projections that handle its events
//   have applied them (a reactor that reconciles against a read model reads the event's effect).
//
// The checkpoint table keeps its first owner's name (the chat reactors came first): renaming it
// would take a migration and move nothing but the name; the rows and their meaning are general.

import type { DomainEvent } from '../../domain/shared/decider.ts';
import type { Pool } from '../db/pool.ts';
import type { EventStore } from '../eventstore/port.ts';
import type { Position } from '../eventstore/position.ts';
import type { Recorded } from './projection.ts';

export interface Reactor<Event extends DomainEvent = DomainEvent> {
  name: string;
  /** Event types it acts on; the engine subscribes to exactly these. */
  handles: readonly Event['type'][];
  /** Act on a batch, in log order. Called again with the same events after a crash: idempotent by event id. */
  react(events: Recorded<Event>[]): Promise<void>;
  /**
   * Where a reactor with no checkpoint starts: the log's start (default: every event it handles
   * is acted on once) or its head (history is never acted on, as for notifications).
   */
  startAt?: 'start' | 'head';
  /** One active instance across processes (default), or one in each process (see the header). */
  scope?: 'one' | 'each';
  /** `each` only: bring the process's state in line before following the log (and after a failure). */
  reconcile?(): Promise<void>;
  /** `each` only: a pass every `ms` while the reactor runs in this process (work no event announces). */
  every?: { ms: number; run(): Promise<void> };
  /** `each` only: a batch waits until the projections handling its events have applied them. */
  afterProjections?: boolean;
}

/** Whether every process runs the reactor (no lock, no stored checkpoint). */
export const inEachProcess = (reactor: Reactor): boolean => reactor.scope === 'each';

/** Declare a reactor with its union spelled once: `defineReactor<MessageEvent>({...})`. */
export const defineReactor = <Event extends DomainEvent>(reactor: Reactor<Event>): Reactor<Event> => reactor;

export async function readReactorCheckpoint(db: Pool, name: string): Promise<Position | null> {
  const { rows } = await db.query<{ c: string; p: string }>(
    'SELECT commit_pos::text AS c, prepare_pos::text AS p FROM chat_reactor_checkpoints WHERE name = $1',
    [name],
  );
  return rows[0] ? { commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) } : null;
}

/** Every reactor's checkpoint, in one query (the metrics read them all at each scrape). */
export async function readReactorCheckpoints(db: Pool): Promise<Map<string, Position>> {
  const { rows } = await db.query<{ name: string; c: string; p: string }>(
    'SELECT name, commit_pos::text AS c, prepare_pos::text AS p FROM chat_reactor_checkpoints',
  );
  return new Map(rows.map((r) => [r.name, { commit: BigInt(r.c), prepare: BigInt(r.p) }]));
}

/**
 * The reactor's checkpoint, or where it starts: with none yet, the log's start, or its head
 * (written at once, so a restart before the first event neither pushes history nor skips).
 */
export async function reactorStart(
  db: Pool,
  store: Pick<EventStore, 'headPosition'>,
  reactor: Reactor,
): Promise<Position | null> {
  const known = await readReactorCheckpoint(db, reactor.name);
  if (known || reactor.startAt !== 'head') return known;
  const head = await store.headPosition();
  if (!head) return null;
  await db.query(
    'INSERT INTO chat_reactor_checkpoints (name, commit_pos, prepare_pos) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
    [reactor.name, head.commit.toString(), head.prepare.toString()],
  );
  return readReactorCheckpoint(db, reactor.name);
}

/**
 * Move the checkpoint from `previous` to `next` once the effects are done. Guarded by the previous
 * value, like a projection's: false when another process moved it meanwhile (this one lost its
 * lock), which then restarts from the checkpoint it finds.
 */
export async function moveReactorCheckpoint(
  db: Pool,
  name: string,
  previous: Position | null,
  next: Position,
): Promise<boolean> {
  const { rowCount } = previous
    ? await db.query(
        `UPDATE chat_reactor_checkpoints SET commit_pos = $2, prepare_pos = $3, updated_at = now()
       WHERE name = $1 AND commit_pos = $4 AND prepare_pos = $5`,
        [
          name,
          next.commit.toString(),
          next.prepare.toString(),
          previous.commit.toString(),
          previous.prepare.toString(),
        ],
      )
    : await db.query(
        'INSERT INTO chat_reactor_checkpoints (name, commit_pos, prepare_pos) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
        [name, next.commit.toString(), next.prepare.toString()],
      );
  return rowCount === 1;
}
