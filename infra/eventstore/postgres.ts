// The PostgreSQL adapter of the log: one append-only `events` table (migration 001).
//
// Appends are one INSERT ... SELECT statement that reads the stream's current revision and
// checks the expectation in the same statement; the unique (stream_id, revision) constraint
// settles races, so the expectation is enforced by the database itself. Readers of the whole
// log go in (transaction_id, position) order and only below the oldest running transaction,
// so an event whose transaction commits late is never skipped. NOTIFY only wakes readers.

import Emittery from 'emittery';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Pool } from '../db/pool.ts';
import type {
  AppendManyOptions,
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogFilter,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamAppend,
  StreamAppendOutcome,
  SubscribeOptions,
  Subscription,
} from './port.ts';
import { WrongExpectedRevisionError } from './port.ts';
import { comparePositions, START, type Position } from './position.ts';
import { subscriptionFromBatches } from './subscription.ts';

const CHANNEL = 'orchard_events';
const APPEND_RETRIES = 20; // for `any`/`exists`, which may lose a revision race and simply try again
const BATCH = 500;
const NOTIFY_WINDOW_MS = 5; // cross-process wake-ups: at most one NOTIFY per window, see wakeReaders

// Sent as a named statement (APPEND_STATEMENT): each pooled connection parses it once and,
// after five executions, PostgreSQL runs a cached generic plan. Planning this statement costs
// ~0.2 ms of server CPU, about three times its execution and several times a plain INSERT.
const APPEND_STATEMENT = 'orchard_events_append';
// One statement: the stream's current revision, the expectation, and the insert. When the
// expectation fails nothing is inserted and no row comes back; a racing writer that took the
// same revision meanwhile makes the unique (stream_id, revision) constraint fail instead.
const APPEND_SQL = `
INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
SELECT $1, cur.rev + e.ord, (e.v->>'id')::uuid, e.v->>'type', e.v->'data', e.v->'metadata'
FROM (SELECT coalesce(max(revision), -1) AS rev FROM events WHERE stream_id = $1) cur,
     jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(v, ord)
WHERE $3 = 'any'
   OR ($3 = 'no_stream' AND cur.rev = -1)
   OR ($3 = 'exists' AND cur.rev >= 0)
   OR ($3 = 'revision' AND cur.rev = $4::bigint)
RETURNING revision::text AS revision, position::text AS position, transaction_id::text AS txid`;

// `appendMany`: the same check per stream, in one statement. Streams whose expectation fails
// insert nothing (their outcome is decided afterwards); the others are written together, in the
// order given. A racing writer that took one stream's revision fails the whole statement on the
// unique constraint, and the statement is sent again: that stream then fails its check alone.
const APPEND_MANY_STATEMENT = 'orchard_events_append_many';
const APPEND_MANY_SQL = `
WITH input AS (
  SELECT a.ord, a.v->>'stream' AS stream, a.v->>'mode' AS mode, (a.v->>'revision')::bigint AS expected, a.v->'events' AS events
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(v, ord)),
accepted AS (
  SELECT input.*, cur.rev FROM input
  CROSS JOIN LATERAL (SELECT coalesce(max(revision), -1) AS rev FROM events WHERE stream_id = input.stream) cur
  WHERE input.mode = 'any' OR (input.mode = 'no_stream' AND cur.rev = -1)
     OR (input.mode = 'exists' AND cur.rev >= 0) OR (input.mode = 'revision' AND cur.rev = input.expected))
INSERT INTO events (stream_id, revision, event_id, type, data, metadata)
SELECT accepted.stream, accepted.rev + e.ord, (e.v->>'id')::uuid, e.v->>'type', e.v->'data', e.v->'metadata'
FROM accepted, jsonb_array_elements(accepted.events) WITH ORDINALITY AS e(v, ord)
ORDER BY accepted.ord, e.ord
RETURNING stream_id, revision::text AS revision, position::text AS position, transaction_id::text AS txid`;

// `appendMany(..., { atomic: true })`: the same statement, inserting only when every stream's
// expectation holds. One statement is one transaction, so a crash cannot leave part of it.
const APPEND_ALL_STATEMENT = 'orchard_events_append_all';
const APPEND_ALL_SQL = APPEND_MANY_SQL.replace(
  'ORDER BY accepted.ord, e.ord',
  'WHERE (SELECT count(*) FROM accepted) = (SELECT count(*) FROM input)\nORDER BY accepted.ord, e.ord',
);

// ORDER BY below always names columns as `events.x`: a bare name matches an output column
// first, and these aliases are the ::text casts (so `ORDER BY position` would sort '10' < '9').
const COLUMNS = `position::text AS position, transaction_id::text AS txid, stream_id, revision::text AS revision,
  event_id::text AS event_id, type, data, metadata, created_at`;

// Events visible to a reader of the whole log: committed, and older than every running transaction.
const VISIBLE = `transaction_id < pg_snapshot_xmin(pg_current_snapshot())`;

interface Row {
  position: string;
  txid: string;
  stream_id: string;
  revision: string;
  event_id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: RecordedEvent['metadata'];
  created_at: Date;
}

function toEvent(row: Row): RecordedEvent {
  return {
    id: row.event_id,
    stream: row.stream_id,
    revision: BigInt(row.revision),
    position: { commit: BigInt(row.txid), prepare: BigInt(row.position) },
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    created_at: row.created_at,
  };
}

interface WrittenRow {
  event_id: string;
  revision: string;
  position: string;
  txid: string;
}

/** The append as it already stands, when `rows` (the stream's events with these ids, by revision) hold exactly these events where the expectation puts them. */
function retriedAppend(rows: WrittenRow[], events: EventToAppend[], expected: ExpectedRevision): AppendResult | null {
  if (rows.length !== events.length) return null;
  const first = BigInt(rows[0]!.revision);
  const inPlace = rows.every(
    (r, i) => r.event_id === events[i]!.id.toLowerCase() && BigInt(r.revision) === first + BigInt(i),
  );
  const expectedFirst = typeof expected === 'bigint' ? expected + 1n : expected === 'no_stream' ? 0n : first;
  if (!inPlace || first !== expectedFirst) return null;
  const last = rows[rows.length - 1]!;
  return {
    nextExpectedRevision: BigInt(last.revision),
    position: { commit: BigInt(last.txid), prepare: BigInt(last.position) },
  };
}

/** Whether a stream at `actual` meets `expected`. */
function holds(expected: ExpectedRevision, actual: bigint | 'no_stream'): boolean {
  return (
    expected === 'any' ||
    (expected === 'no_stream' && actual === 'no_stream') ||
    (expected === 'exists' && actual !== 'no_stream') ||
    (typeof expected === 'bigint' && actual === expected)
  );
}

function expectation(expected: ExpectedRevision): [string, string | null] {
  return typeof expected === 'bigint' ? ['revision', expected.toString()] : [expected, null];
}

function filterSql(filter: LogFilter | undefined, params: unknown[]): string {
  const clauses: string[] = [];
  if (filter?.streamPrefixes?.length) {
    params.push(filter.streamPrefixes.map((p) => p.replace(/[\\%_]/g, '\\$&') + '%'));
    clauses.push(`stream_id LIKE ANY($${params.length}::text[])`);
  }
  if (filter?.eventTypes?.length) {
    params.push(filter.eventTypes);
    clauses.push(`type = ANY($${params.length}::text[])`);
  }
  return clauses.map((c) => ` AND ${c}`).join('');
}

export class PostgresEventStore implements EventStore {
  /** Appends of this process (with their event types) and notifications from others (types unknown: null). */
  private readonly appended = new Emittery<{ appended: readonly string[] | null }>();
  /** Names this store's notifications, so it can tell its own from other processes'. */
  private readonly instance = randomUUID();
  private listener: pg.Client | null = null;
  private listening: Promise<void> | null = null;
  private notifyTimer: NodeJS.Timeout | null = null;
  private notifyAgain = false;
  private closed = false;
  /** Readers waiting on the visibility gate: the end of any transaction of this process may free them. */
  private readonly heldBackWaiters = new Set<() => void>();

  constructor(
    private readonly pool: Pool,
    private readonly url: string,
  ) {}

  async append(
    stream: string,
    events: EventToAppend[],
    { expected }: { expected: ExpectedRevision },
  ): Promise<AppendResult> {
    if (events.length === 0) return this.checkOnly(stream, expected);
    const [mode, revision] = expectation(expected);
    const payload = JSON.stringify(events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })));
    for (let attempt = 0; ; attempt++) {
      let rows: { revision: string; position: string; txid: string }[];
      try {
        ({ rows } = await this.pool.query({
          name: APPEND_STATEMENT,
          text: APPEND_SQL,
          values: [stream, payload, mode, revision],
        }));
      } catch (error) {
        // Another writer took the revision between our read and our insert.
        if ((error as { code?: string }).code !== '23505') throw error;
        const again = await this.alreadyAppended(stream, events, expected);
        if (again) return again;
        if ((mode === 'any' || mode === 'exists') && attempt < APPEND_RETRIES) continue;
        throw new WrongExpectedRevisionError(stream, expected, await this.currentRevision(stream));
      }
      if (rows.length > 0) {
        this.wakeReaders(events.map((e) => e.type));
        const written = rows
          .map((r) => ({
            revision: BigInt(r.revision),
            position: { commit: BigInt(r.txid), prepare: BigInt(r.position) },
          }))
          .sort((a, b) => (a.revision < b.revision ? -1 : 1));
        const last = written.at(-1)!;
        return {
          nextExpectedRevision: last.revision,
          position: last.position,
          positions: written.map((w) => w.position),
        };
      }
      const again = await this.alreadyAppended(stream, events, expected);
      if (again) return again;
      throw new WrongExpectedRevisionError(stream, expected, await this.currentRevision(stream));
    }
  }

  /** A retried request: the same event ids already stand where this append would put them. */
  private async alreadyAppended(
    stream: string,
    events: EventToAppend[],
    expected: ExpectedRevision,
  ): Promise<AppendResult | null> {
    const { rows } = await this.pool.query<WrittenRow>(
      `SELECT event_id::text AS event_id, revision::text AS revision, position::text AS position, transaction_id::text AS txid
       FROM events WHERE stream_id = $1 AND event_id = ANY($2::uuid[]) ORDER BY events.revision`,
      [stream, events.map((e) => e.id)],
    );
    return retriedAppend(rows, events, expected);
  }

  readonly atomicAppendMany = true;

  async appendMany(appends: StreamAppend[], options: AppendManyOptions = {}): Promise<StreamAppendOutcome[]> {
    if (new Set(appends.map((a) => a.stream)).size !== appends.length)
      throw new Error('appendMany: a stream may appear once');
    if (options.atomic) return this.appendAll(appends);
    const outcomes: (StreamAppendOutcome | undefined)[] = await Promise.all(
      appends.map(async (a) => {
        if (a.events.length > 0) return undefined;
        try {
          return { ok: true as const, result: await this.checkOnly(a.stream, a.expected) };
        } catch (error) {
          if (error instanceof WrongExpectedRevisionError) return { ok: false as const, error };
          throw error;
        }
      }),
    );
    const writing = appends.filter((a) => a.events.length > 0);
    if (!writing.length) return outcomes as StreamAppendOutcome[];
    const payload = JSON.stringify(
      writing.map((a) => {
        const [mode, revision] = expectation(a.expected);
        return {
          stream: a.stream,
          mode,
          revision,
          events: a.events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
        };
      }),
    );
    let rows: { stream_id: string; revision: string; position: string; txid: string }[];
    for (let attempt = 0; ; attempt++) {
      try {
        ({ rows } = await this.pool.query({ name: APPEND_MANY_STATEMENT, text: APPEND_MANY_SQL, values: [payload] }));
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== '23505' || attempt >= APPEND_RETRIES) throw error;
      }
    }
    if (rows.length) this.wakeReaders([...new Set(writing.flatMap((a) => a.events.map((e) => e.type)))]);
    const written = new Map<string, { revision: bigint; position: Position }[]>();
    for (const r of rows) {
      const list = written.get(r.stream_id) ?? [];
      list.push({ revision: BigInt(r.revision), position: { commit: BigInt(r.txid), prepare: BigInt(r.position) } });
      written.set(r.stream_id, list);
    }
    const refused = writing.filter((a) => !written.has(a.stream));
    const settled = new Map(await this.refusedOutcomes(refused));
    appends.forEach((a, i) => {
      if (outcomes[i]) return;
      const mine = written.get(a.stream)?.sort((x, y) => (x.revision < y.revision ? -1 : 1));
      outcomes[i] = mine
        ? {
            ok: true,
            result: {
              nextExpectedRevision: mine.at(-1)!.revision,
              position: mine.at(-1)!.position,
              positions: mine.map((w) => w.position),
            },
          }
        : settled.get(a.stream)!;
    });
    return outcomes as StreamAppendOutcome[];
  }

  /** `appendMany` all or nothing (see AppendManyOptions). */
  private async appendAll(appends: StreamAppend[]): Promise<StreamAppendOutcome[]> {
    if (appends.some((a) => a.events.length === 0))
      throw new Error('appendMany: an atomic append needs events in every part');
    if (!appends.length) return [];
    const payload = JSON.stringify(
      appends.map((a) => {
        const [mode, revision] = expectation(a.expected);
        return {
          stream: a.stream,
          mode,
          revision,
          events: a.events.map((e) => ({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
        };
      }),
    );
    let rows: { stream_id: string; revision: string; position: string; txid: string }[];
    for (let attempt = 0; ; attempt++) {
      try {
        ({ rows } = await this.pool.query({ name: APPEND_ALL_STATEMENT, text: APPEND_ALL_SQL, values: [payload] }));
        break;
      } catch (error) {
        // A racing writer took a revision between the check and the insert: checked again, that
        // stream's expectation now fails and nothing is written.
        if ((error as { code?: string }).code !== '23505' || attempt >= APPEND_RETRIES) throw error;
      }
    }
    if (!rows.length) {
      // Nothing written: a retried call whose streams all stand written, else the first stream
      // whose expectation failed (the others held theirs and were only held back by it).
      const settled = await this.refusedOutcomes(appends);
      if (settled.every(([, o]) => o.ok)) return settled.map(([, o]) => o);
      const refused = settled
        .map(([, o]) => o)
        .filter((o): o is { ok: false; error: WrongExpectedRevisionError } => !o.ok);
      throw (refused.find((o) => !holds(o.error.expected, o.error.actual)) ?? refused[0]!).error;
    }
    this.wakeReaders([...new Set(appends.flatMap((a) => a.events.map((e) => e.type)))]);
    return appends.map((a) => {
      const mine = rows
        .filter((r) => r.stream_id === a.stream)
        .map((r) => ({
          revision: BigInt(r.revision),
          position: { commit: BigInt(r.txid), prepare: BigInt(r.position) },
        }))
        .sort((x, y) => (x.revision < y.revision ? -1 : 1));
      return {
        ok: true as const,
        result: {
          nextExpectedRevision: mine.at(-1)!.revision,
          position: mine.at(-1)!.position,
          positions: mine.map((w) => w.position),
        },
      };
    });
  }

  /** Streams `appendMany` did not write: a retry already in place (appended), else a conflict with the actual revision. */
  private async refusedOutcomes(refused: StreamAppend[]): Promise<[string, StreamAppendOutcome][]> {
    if (!refused.length) return [];
    const streams = refused.map((a) => a.stream);
    const [mine, current] = await Promise.all([
      this.pool.query<WrittenRow & { stream_id: string }>(
        `SELECT stream_id, event_id::text AS event_id, revision::text AS revision, position::text AS position, transaction_id::text AS txid
         FROM events WHERE stream_id = ANY($1::text[]) AND event_id = ANY($2::uuid[]) ORDER BY events.stream_id, events.revision`,
        [streams, refused.flatMap((a) => a.events.map((e) => e.id))],
      ),
      this.pool.query<{ stream_id: string; rev: string }>(
        'SELECT stream_id, max(revision)::text AS rev FROM events WHERE stream_id = ANY($1::text[]) GROUP BY stream_id',
        [streams],
      ),
    ]);
    const revisions = new Map(current.rows.map((r) => [r.stream_id, BigInt(r.rev)]));
    return refused.map((a) => {
      const again = retriedAppend(
        mine.rows.filter((r) => r.stream_id === a.stream),
        a.events,
        a.expected,
      );
      return [
        a.stream,
        again
          ? { ok: true, result: again }
          : {
              ok: false,
              error: new WrongExpectedRevisionError(a.stream, a.expected, revisions.get(a.stream) ?? 'no_stream'),
            },
      ];
    });
  }

  private async currentRevision(stream: string): Promise<bigint | 'no_stream'> {
    const { rows } = await this.pool.query<{ rev: string | null }>(
      'SELECT max(revision)::text AS rev FROM events WHERE stream_id = $1',
      [stream],
    );
    return rows[0]?.rev == null ? 'no_stream' : BigInt(rows[0].rev);
  }

  private async checkOnly(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const actual = await this.currentRevision(stream);
    const ok = holds(expected, actual);
    if (!ok) throw new WrongExpectedRevisionError(stream, expected, actual);
    return {
      nextExpectedRevision: actual === 'no_stream' ? -1n : actual,
      position: (await this.headPosition()) ?? START,
    };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const params: unknown[] = [stream];
    let where = 'stream_id = $1';
    if (typeof options.from === 'bigint') {
      params.push(options.from.toString());
      where += backwards ? ` AND revision <= $2::bigint` : ` AND revision >= $2::bigint`;
    }
    let sql = `SELECT ${COLUMNS} FROM events WHERE ${where} ORDER BY events.revision ${backwards ? 'DESC' : 'ASC'}`;
    if (options.limit !== undefined) {
      params.push(options.limit);
      sql += ` LIMIT $${params.length}`;
    }
    const { rows } = await this.pool.query<Row>(sql, params);
    return rows.map(toEvent);
  }

  async readStreams(streams: string[]): Promise<Map<string, RecordedEvent[]>> {
    const read = new Map(streams.map((stream) => [stream, [] as RecordedEvent[]]));
    if (!streams.length) return read;
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = ANY($1::text[]) ORDER BY events.stream_id, events.revision`,
      [streams],
    );
    for (const row of rows) read.get(row.stream_id)!.push(toEvent(row));
    return read;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.after === undefined || options.after === 'start' ? START : options.after;
    return (await this.readPage(after, options.filter, options.limit ?? BATCH)).events;
  }

  /**
   * A page of visible events after `after`, and the newest visible position of the whole log,
   * both under one snapshot. When the page is not full, every visible event up to `scannedTo`
   * that matches the filter is in it, so a filtered reader may move its cursor there: it does
   * not scan the same unrelated events again on its next poll.
   */
  private async readPage(
    after: Position,
    filter: LogFilter | undefined,
    limit: number,
  ): Promise<{ events: RecordedEvent[]; scannedTo: Position | null }> {
    const params: unknown[] = [after.commit.toString(), after.prepare.toString()];
    const where = filterSql(filter, params);
    params.push(limit);
    const { rows } = await this.pool.query<Row & { head_txid: string | null; head_position: string | null }>(
      `WITH gate AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
       head AS MATERIALIZED (
         SELECT events.transaction_id::text AS head_txid, events.position::text AS head_position
         FROM events, gate WHERE events.transaction_id < gate.xmin
         ORDER BY events.transaction_id DESC, events.position DESC LIMIT 1),
       page AS (
         SELECT ${COLUMNS}, events.transaction_id AS order_txid, events.position AS order_position
         FROM events, gate
         WHERE (events.transaction_id, events.position) > ($1::text::xid8, $2::bigint) AND events.transaction_id < gate.xmin${where}
         ORDER BY events.transaction_id, events.position LIMIT $${params.length})
       SELECT page.*, head.head_txid, head.head_position
       FROM (SELECT 1) one LEFT JOIN head ON true LEFT JOIN page ON true
       ORDER BY page.order_txid, page.order_position`,
      params,
    );
    const first = rows[0];
    const scannedTo = first?.head_txid
      ? { commit: BigInt(first.head_txid), prepare: BigInt(first.head_position!) }
      : null;
    return { events: rows.filter((r) => r.event_id !== null).map(toEvent), scannedTo };
  }

  async headPosition(): Promise<Position | null> {
    const { rows } = await this.pool.query<{ txid: string; position: string }>(
      `SELECT transaction_id::text AS txid, position::text AS position FROM events WHERE ${VISIBLE}
       ORDER BY events.transaction_id DESC, events.position DESC LIMIT 1`,
    );
    return rows[0] ? { commit: BigInt(rows[0].txid), prepare: BigInt(rows[0].position) } : null;
  }

  async countAfter(after: Position | 'start', filter: LogFilter, max: number): Promise<number> {
    const from = after === 'start' ? START : after;
    const params: unknown[] = [from.commit.toString(), from.prepare.toString()];
    const where = filterSql(filter, params);
    params.push(max);
    const { rows } = await this.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM events
         WHERE (events.transaction_id, events.position) > ($1::text::xid8, $2::bigint) AND ${VISIBLE}${where}
         LIMIT $${params.length}) counted`,
      params,
    );
    return rows[0]!.n;
  }

  /** True when events matching `filter` exist past `after` that the visibility gate still holds back. */
  private async heldBack(after: Position, filter: LogFilter | undefined): Promise<boolean> {
    const params: unknown[] = [after.commit.toString(), after.prepare.toString()];
    const where = filterSql(filter, params);
    // The index scan must start at the gate, not at `after`: a held-back event is one at or past
    // the oldest running transaction, so only those few rows are read. (Written as the row
    // comparison, the scan started at `after` and, while every reader polls this during a burst
    // of appends, walked the whole visible tail each time; without ORDER BY the planner chose a
    // sequential scan of the log, which was the scheduler's bottleneck.) The OR is `(transaction,
    // position) > after` for rows whose transaction is at least after's.
    const { rows } = await this.pool.query(
      `SELECT 1 FROM events
       WHERE events.transaction_id >= greatest($1::text::xid8, pg_snapshot_xmin(pg_current_snapshot()))
         AND (events.transaction_id > $1::text::xid8 OR events.position > $2::bigint)${where}
       ORDER BY events.transaction_id, events.position LIMIT 1`,
      params,
    );
    return rows.length > 0;
  }

  subscribe(options: SubscribeOptions = {}): Subscription {
    void this.listen();
    // Wake-ups for this subscription only: an append of this process whose types the filter
    // cannot match does not wake it (every projection reading the log on every append made each
    // write wait behind a herd of queries); a notification from another process always does. A
    // count of wake-ups, taken before each read, keeps one that arrives during the read.
    const types = options.filter?.eventTypes?.length ? new Set(options.filter.eventTypes) : null;
    let wakeups = 0;
    let waiters: (() => void)[] = [];
    const off = this.appended.on('appended', (appendedTypes) => {
      if (types && appendedTypes && !appendedTypes.some((t) => types.has(t))) return;
      wakeups += 1;
      const ready = waiters;
      waiters = [];
      for (const wake of ready) wake();
    });
    return subscriptionFromBatches({
      start: async () =>
        options.after === 'end'
          ? ((await this.headPosition()) ?? START)
          : options.after === undefined || options.after === 'start'
            ? START
            : options.after,
      next: async (after) => {
        const { events, scannedTo } = await this.readPage(after, options.filter, BATCH);
        const last = events.at(-1)?.position ?? after;
        const resume = events.length < BATCH && scannedTo && comparePositions(scannedTo, last) > 0 ? scannedTo : last;
        return { events, resume };
      },
      heldBack: (after) => this.heldBack(after, options.filter),
      wake: (timeoutMs, since, heldBack) => {
        if (since !== undefined && wakeups !== since) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const timer = setTimeout(done, timeoutMs);
          waiters.push(done);
          if (heldBack) this.heldBackWaiters.add(done);
          const held = this.heldBackWaiters;
          function done() {
            clearTimeout(timer);
            waiters = waiters.filter((w) => w !== done);
            held.delete(done);
            resolve();
          }
        });
      },
      wakeups: () => wakeups,
      close: () => {
        off();
        for (const wake of [...waiters]) wake();
      },
    });
  }

  transactionEnded(): void {
    for (const wake of [...this.heldBackWaiters]) wake();
  }

  private wakeReaders(types: readonly string[]): void {
    void this.appended.emit('appended', types);
    // The append's own transaction has ended: a reader of other types it held back may go on.
    this.transactionEnded();
    // Other processes learn of appends through NOTIFY, sent outside the append's transaction
    // (a NOTIFY inside it would serialise every commit) and throttled: the first append after a
    // quiet spell notifies at once, later ones within NOTIFY_WINDOW_MS share one trailing NOTIFY.
    // One NOTIFY per append costs about as much CPU as a quarter of the append itself.
    if (this.closed) return;
    if (this.notifyTimer) {
      this.notifyAgain = true;
      return;
    }
    this.sendNotify();
  }

  private sendNotify(): void {
    this.notifyAgain = false;
    this.pool.query(`SELECT pg_notify('${CHANNEL}', $1)`, [this.instance]).catch(() => {});
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      if (this.notifyAgain && !this.closed) this.sendNotify();
    }, NOTIFY_WINDOW_MS);
    this.notifyTimer.unref();
  }

  private listen(): Promise<void> {
    this.listening ??= (async () => {
      const client = new pg.Client({ connectionString: this.url, application_name: 'orchard-listen' });
      client.on('error', () => {});
      // Our own notifications are ignored: this process already woke the readers concerned.
      client.on('notification', (message) => {
        if (message.payload !== this.instance) void this.appended.emit('appended', null);
      });
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.closed) await client.end();
      else this.listener = client;
    })().catch(() => {
      // Without LISTEN, subscribers still poll; correctness never depends on notifications.
    });
    return this.listening;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.notifyTimer = null;
    await this.listening;
    await this.listener?.end().catch(() => {});
    this.listener = null;
  }
}

export function matches(event: RecordedEvent, filter: LogFilter | undefined): boolean {
  if (filter?.eventTypes?.length && !filter.eventTypes.includes(event.type)) return false;
  if (filter?.streamPrefixes?.length && !filter.streamPrefixes.some((p) => event.stream.startsWith(p))) return false;
  return true;
}
