// The log's port: what every event-store adapter offers, and nothing more.
// Both adapters (PostgreSQL, EventStoreDB) pass the same contract suite
// (tests/infra/eventstore.contract.ts), so callers never care which one runs.

import type { Position } from './position.ts';

export type { Position } from './position.ts';

/** Who caused an event. */
export interface Actor {
  kind: 'user' | 'agent' | 'service' | 'visitor' | 'system';
  id: string | null;
}

/** Metadata carried by every event (DESIGN.md, "Events"). */
export interface EventMetadata {
  actor: Actor;
  correlation_id: string | null;
  causation_id: string | null;
  /** Version of the data shape; upcasters turn old shapes into the current one at read time. */
  schema: number;
  [extra: string]: unknown;
}

export interface EventToAppend {
  /** UUID chosen by the writer; re-appending the same id at the same place is a no-op. */
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
}

export interface RecordedEvent {
  id: string;
  stream: string;
  /** Revision inside its stream; the first event of a stream is revision 0. */
  revision: bigint;
  /** Global position in the log; totally ordered, see position.ts. */
  position: Position;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  created_at: Date;
}

/**
 * `no_stream`: the stream must not exist. `exists`: it must exist. `any`: no check.
 * A bigint: the revision of the stream's last event must be exactly this.
 */
export type ExpectedRevision = 'no_stream' | 'exists' | 'any' | bigint;

export interface AppendResult {
  /** Revision of the last event written: pass it as `expected` for the next append. */
  nextExpectedRevision: bigint;
  /** Global position of the last event written. */
  position: Position;
  /** Each written event's position, in order, when the store reports them (saves reading a mixed append back). */
  positions?: Position[];
}

export interface ReadStreamOptions {
  /** First revision to return (inclusive); default: the start (forwards) or the end (backwards). */
  from?: bigint | 'start' | 'end';
  direction?: 'forwards' | 'backwards';
  limit?: number;
}

/** Server-side filter for reads of the whole log; both fields combine with AND. */
export interface LogFilter {
  streamPrefixes?: string[];
  eventTypes?: string[];
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Default: the start of the log. */
  after?: Position | 'start';
  filter?: LogFilter;
  limit?: number;
}

export interface SubscribeOptions {
  /** Exclusive: deliver events strictly after this position. `end`: only events appended from now on. */
  after?: Position | 'start' | 'end';
  filter?: LogFilter;
}

/** Catch-up then live, in global order, never skipping or repeating an event. */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

/** One stream's part of `appendMany`. */
export interface StreamAppend {
  stream: string;
  events: EventToAppend[];
  expected: ExpectedRevision;
}

/**
 * `atomic`: all or nothing. Every stream's expectation must hold, else nothing is written and the
 * first stream whose expectation failed is thrown as a `WrongExpectedRevisionError` (a retried call
 * whose streams all stand written answers as appended). Every part must carry events. Only on a
 * store whose `atomicAppendMany` is true; elsewhere it throws before writing anything.
 */
export interface AppendManyOptions {
  atomic?: boolean;
}

/** What became of one stream's part of `appendMany`: appended, or refused by its expectation. */
export type StreamAppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: WrongExpectedRevisionError };

export interface EventStore {
  append(stream: string, events: EventToAppend[], options: { expected: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Appends to several distinct streams, each under its own expectation, with an outcome per
   * stream (in the order given): a stream whose expectation fails is refused alone (a conflict
   * outcome, not a thrown error) and the others are still written. Each stream's events are
   * all-or-nothing; a retried call (same event ids, same expectations) duplicates nothing. Any
   * other failure throws.
   *
   * What a thrown failure leaves differs by store, so callers must be correct under both:
   * - PostgreSQL: atomic. The accepted streams are written in one statement (one transaction):
   *   after a throw none of them is.
   * - EventStoreDB: per stream, in order, possibly partial. It has no transaction across
   *   streams, so this is a sequence of single appends; a throw stops it half way, with the
   *   streams before the failing one written (and, when the answer was lost, perhaps that one).
   * A caller therefore uses explicit expectations (a revision or `no_stream`: the server's
   * idempotence for `any`/`exists` is only a bounded cache of recent ids) and, after a throw,
   * either retries the same call (same ids, same expectations: written streams answer with
   * their original positions) or settles each stream on what it holds (`CommandRunner.runMany`).
   */
  appendMany(appends: StreamAppend[], options?: AppendManyOptions): Promise<StreamAppendOutcome[]>;
  /**
   * Whether `appendMany(..., { atomic: true })` is available: several streams written in one log
   * transaction, all or none (PostgreSQL: yes; EventStoreDB: no, it has no transaction across
   * streams). Callers that need it check this and fall back to their own way when it is false.
   */
  readonly atomicAppendMany: boolean;
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Several whole streams at once (forwards), by name; a missing stream reads as empty. For a
   * batch that decides on many streams (one round trip instead of one per stream).
   */
  readStreams(streams: string[]): Promise<Map<string, RecordedEvent[]>>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribe(options?: SubscribeOptions): Subscription;
  /** Position of the newest event visible to readers, or null for an empty log. */
  headPosition(): Promise<Position | null>;
  /**
   * How many visible events match `filter` after `after`, counting at most `max` (a projection's
   * lag for the metrics: a cap keeps a far-behind projection from costing a full scan).
   */
  countAfter(after: Position | 'start', filter: LogFilter, max: number): Promise<number>;
  /**
   * A write transaction of this process ended (a projection's batch committed). Readers that
   * wait because a running transaction holds events back read again at once rather than at
   * their next poll. Optional: only a store with a visibility gate needs it.
   */
  transactionEnded?(): void;
  close(): Promise<void>;
}

/** The store refused an append because the stream is not where the writer expected. */
export class WrongExpectedRevisionError extends Error {
  readonly stream: string;
  readonly expected: ExpectedRevision;
  readonly actual: bigint | 'no_stream';

  constructor(stream: string, expected: ExpectedRevision, actual: bigint | 'no_stream') {
    super(`wrong expected revision on stream ${stream}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
    this.stream = stream;
    this.expected = expected;
    this.actual = actual;
  }
}
