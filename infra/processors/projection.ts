// A projection: the processor kind that keeps a read model (DESIGN.md "Projections"). The
// processor engine (infra/processors/engine.ts) runs it: each batch's read-model writes and the
// projection's checkpoint (`projection_checkpoints`) commit in one transaction, so a crash never
// loses or doubles an event's effect; `rebuild` replays it from the start of the log.

import type { DomainEvent } from '../../domain/shared/decider.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import type { RecordedEvent } from '../eventstore/port.ts';
import { formatPosition, type Position } from '../eventstore/position.ts';

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
   * Optional, used before `applyBatch`/`apply`: the batch's writes as data-modifying statements
   * (INSERT, UPDATE or DELETE, no WITH of their own) over one list of parameters, or null for a
   * batch they cannot express. The engine sends them with its checkpoint move as one statement,
   * so the batch costs one round trip. They run as sibling CTEs: on one snapshot, in no set
   * order, none seeing another's writes, so each must be independent of the others and touch a
   * row at most once.
   */
  batchStatement?(events: Recorded<Event>[]): { writes: string[]; values: unknown[] } | null;
  /**
   * Optional: how much work an event is (say, rows it writes). A batch stops growing once its
   * events weigh `maxBatchWeight` (its first event is always taken), so one transaction, which
   * holds back every reader of the log while it is open, stays short.
   */
  weigh?(event: Recorded<Event>): number;
  maxBatchWeight?: number;
}

/** Declare a projection with its union spelled once: `defineProjection<UserEvent>({...})`. */
export const defineProjection = <Event extends DomainEvent>(projection: Projection<Event>): Projection<Event> =>
  projection;

export async function readCheckpoint(db: Pool | PoolClient, name: string): Promise<Position | null> {
  const { rows } = await db.query<{ c: string; p: string }>(
    'SELECT commit_pos::text AS c, prepare_pos::text AS p FROM projection_checkpoints WHERE name = $1',
    [name],
  );
  return rows[0] ? { commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) } : null;
}

/** Every projection's checkpoint, in one query (the metrics read them all at each scrape). */
export async function readCheckpoints(db: Pool | PoolClient): Promise<Map<string, Position>> {
  const { rows } = await db.query<{ name: string; c: string; p: string }>(
    'SELECT name, commit_pos::text AS c, prepare_pos::text AS p FROM projection_checkpoints',
  );
  return new Map(rows.map((r) => [r.name, { commit: BigInt(r.c), prepare: BigInt(r.p) }]));
}

export class ProjectionTimeoutError extends Error {
  constructor(
    readonly projection: string,
    readonly position: Position,
    ms: number,
  ) {
    super(`projection ${projection} did not reach ${formatPosition(position)} within ${ms} ms`);
    this.name = 'ProjectionTimeoutError';
  }
}
