// The EventStoreDB adapter of the log, over @eventstore/db-client (gRPC).
//
// The server enforces expected revisions; we only translate. Against any server since 21.10 the
// client appends through Streams.BatchAppend (ServerFeatures lists it), whose refusals come back as
// google.rpc.Status details; the client turns a WrongExpectedVersion there into the same
// WrongExpectedVersionError as on the older Streams.Append path, which we map to ours.
// A retried append (same event ids) is answered with the original result, nothing written, when it
// names an explicit revision or `no_stream`; with `any` or `exists` the server only consults a
// bounded cache of recent event ids, so a late retry of those writes the events again.
// Global positions are `$all`'s (commit, prepare) pair, commit == prepare for every event.
// `$all` also holds system events (`$`-prefixed types or streams: the node's users, its
// `$stats-*` every 30 s, metadata, links); readers of the whole log never see them.
//
// Filtering: subscriptions filter on the server with one expression (stream prefixes, else event
// types, else "no system events") and check the whole filter again here. readAll filters only here:
// this client's readAll takes no filter, so it pages through `$all`; countAfter, called often (lag
// metrics), counts over a filtered subscription instead, so only matching events cross the wire.

import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamRecordedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type Filter,
  type JSONType,
  type ReadPosition,
  type ReadRevision,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import type {
  AppendManyOptions,
  AppendResult,
  EventMetadata,
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
import { START as LOG_START, isAfter, isStart, type Position } from './position.ts';

const DEFAULT_LIMIT = 500; // readAll without a limit returns one batch, as the PostgreSQL adapter does
const PAGE = 500; // events per gRPC read while paging through `$all`

type EsdbEvent = EsdbRecordedEvent | AllStreamRecordedEvent;

function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream':
      return NO_STREAM;
    case 'exists':
      return STREAM_EXISTS;
    case 'any':
      return ANY;
    default:
      return expected;
  }
}

function isSystem(event: EsdbEvent): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

function matches(event: EsdbEvent, filter: LogFilter | undefined): boolean {
  if (isSystem(event)) return false;
  if (filter?.eventTypes?.length && !filter.eventTypes.includes(event.type)) return false;
  if (filter?.streamPrefixes?.length && !filter.streamPrefixes.some((p) => event.streamId.startsWith(p))) return false;
  return true;
}

/** One expression the server can apply; `matches` re-checks everything client-side. */
function serverFilter(filter: LogFilter | undefined, checkpoints: Pick<Filter, 'checkpointReached'> = {}): Filter {
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: filter.streamPrefixes, ...checkpoints });
  if (filter?.eventTypes?.length) {
    // Exact names: the server's type prefixes would also let `A20` through for `A2`.
    const names = filter.eventTypes.map((t) => t.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'));
    return eventTypeFilter({ regex: `^(?:${names.join('|')})$`, ...checkpoints });
  }
  return excludeSystemEvents(checkpoints);
}

/** Position.End (2^64 - 1): what servers before 22.6 send as the position of an event read from a stream. */
const NO_POSITION = 2n ** 64n - 1n;

function toPosition(event: EsdbEvent): Position {
  // Reads of `$all` always carry the event's log position; reads of a stream only on servers since
  // 22.6 (KurrentDB Grpc/Enumerators.cs; before, Position.End). Each event has its own position,
  // commit == prepare, also within one append.
  if (!event.position || event.position.commit === NO_POSITION) {
    throw new Error(
      `EventStoreDB returned event ${event.id} of ${event.streamId} without a log position: the server is older than 22.6, which this adapter needs`,
    );
  }
  return { commit: event.position.commit, prepare: event.position.prepare };
}

function toRecorded(event: EsdbEvent): RecordedEvent {
  if (!event.isJson) throw new Error(`event ${event.id} in ${event.streamId} is not JSON`);
  return {
    id: event.id,
    stream: event.streamId,
    revision: event.revision,
    position: toPosition(event),
    type: event.type,
    data: event.data as Record<string, unknown>,
    metadata: event.metadata as EventMetadata,
    created_at: event.created,
  };
}

/**
 * Where the client starts for an exclusive `after`. Our START sentinel is the client's START. From a
 * position, subscriptions start strictly after it, but forward reads include it (readAll skips it).
 */
function readFrom(after: Position | 'start' | 'end' | undefined): ReadPosition {
  if (after === undefined || after === 'start' || (after !== 'end' && isStart(after))) return START;
  return after === 'end' ? END : after;
}

export class EventStoreDbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;

  /** `connectionString`: EVENTSTORE_URL, e.g. `esdb://host:2113?tls=false`. */
  constructor(connectionString: string) {
    this.client = EventStoreDBClient.connectionString(connectionString);
  }

  async append(
    stream: string,
    events: EventToAppend[],
    { expected }: { expected: ExpectedRevision },
  ): Promise<AppendResult> {
    if (events.length === 0) return this.checkOnly(stream, expected);
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) =>
          jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: e.metadata as JSONType }),
        ),
        { expectedRevision: toExpected(expected) },
      );
      if (!result.position) throw new Error(`EventStoreDB acknowledged an append to ${stream} without a position`);
      return { nextExpectedRevision: result.nextExpectedRevision, position: result.position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError)
        throw new WrongExpectedRevisionError(stream, expected, error.actualVersion);
      throw error;
    }
  }

  /**
   * EventStoreDB has no transaction across streams: a sequence of single appends, each checked
   * by the server on its own, so one stream's conflict refuses only that stream. A failure other
   * than a conflict stops the sequence (the streams before it are written; a retry is idempotent).
   * For the same reason it cannot append all or nothing: `atomicAppendMany` is false, and an
   * atomic call is refused before anything is written (callers check the flag and fall back).
   */
  readonly atomicAppendMany = false;

  async appendMany(appends: StreamAppend[], options: AppendManyOptions = {}): Promise<StreamAppendOutcome[]> {
    if (options.atomic)
      throw new Error('appendMany: EventStoreDB cannot append several streams atomically (atomicAppendMany is false)');
    if (new Set(appends.map((a) => a.stream)).size !== appends.length)
      throw new Error('appendMany: a stream may appear once');
    const outcomes: StreamAppendOutcome[] = [];
    for (const a of appends) {
      try {
        outcomes.push({ ok: true, result: await this.append(a.stream, a.events, { expected: a.expected }) });
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        outcomes.push({ ok: false, error });
      }
    }
    return outcomes;
  }

  /** Nothing to write, so nothing to protect: just report whether the expectation holds. */
  private async checkOnly(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const [last] = await this.readStream(stream, { direction: 'backwards', limit: 1 });
    const actual = last ? last.revision : 'no_stream';
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && actual === 'no_stream') ||
      (expected === 'exists' && actual !== 'no_stream') ||
      (typeof expected === 'bigint' && actual === expected);
    if (!ok) throw new WrongExpectedRevisionError(stream, expected, actual);
    return { nextExpectedRevision: last ? last.revision : -1n, position: (await this.headPosition()) ?? LOG_START };
  }

  /** One read per stream (the client has no multi-stream read), 16 at a time. */
  async readStreams(streams: string[]): Promise<Map<string, RecordedEvent[]>> {
    const read = new Map<string, RecordedEvent[]>(streams.map((stream) => [stream, []]));
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(16, streams.length) }, async () => {
        while (next < streams.length) {
          const stream = streams[next++]!;
          read.set(stream, await this.readStream(stream));
        }
      }),
    );
    return read;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.limit === 0) return [];
    const backwards = options.direction === 'backwards';
    const from: ReadRevision =
      options.from === undefined
        ? backwards
          ? END
          : START
        : options.from === 'start'
          ? START
          : options.from === 'end'
            ? END
            : options.from;
    const events: EsdbEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(stream, {
        fromRevision: from,
        direction: backwards ? BACKWARDS : FORWARDS,
        maxCount: options.limit ?? Number.MAX_SAFE_INTEGER,
      })) {
        if (resolved.event) events.push(resolved.event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    // Converted once the read is over: leaving the loop early (a throw) would leave the call
    // unread, and the client's dispose() waits for every call to finish.
    return events.map(toRecorded);
  }

  /** One page of raw `$all` records (system events included), so callers can page on positions. */
  private async readAllPage(
    from: ReadPosition,
    direction: typeof FORWARDS | typeof BACKWARDS,
    maxCount = PAGE,
  ): Promise<AllStreamRecordedEvent[]> {
    const page: AllStreamRecordedEvent[] = [];
    for await (const resolved of this.client.readAll({ fromPosition: from, direction, maxCount })) {
      if (resolved.event) page.push(resolved.event);
    }
    return page;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.limit ?? DEFAULT_LIMIT;
    const found: RecordedEvent[] = [];
    let after = options.after === undefined || options.after === 'start' ? LOG_START : options.after;
    while (found.length < limit) {
      const page = await this.readAllPage(readFrom(after), FORWARDS);
      for (const event of page) {
        const position = toPosition(event);
        if (!isAfter(position, after)) continue; // the read included `after` itself
        after = position;
        if (!matches(event, options.filter)) continue;
        found.push(toRecorded(event));
        if (found.length === limit) break;
      }
      if (page.length < PAGE) break; // reached the end of the log
    }
    return found;
  }

  /**
   * Counted on the server's side of the wire: a filtered subscription from `after` (the event-type
   * or stream filter runs on the server, so only matching events cross; `readAll` would page through
   * all of `$all`), up to the last record of `$all` when we start. The subscription never ends by
   * itself, so we stop at whichever comes first: `max`; an event at or past that record; a Checkpoint
   * at or past it (the server has looked at everything up to there and sent what matched before the
   * checkpoint); CaughtUp (servers since 23.10; older ones stop on the checkpoint or event only).
   */
  async countAfter(after: Position | 'start', filter: LogFilter, max: number): Promise<number> {
    if (max <= 0) return 0;
    const [last] = await this.readAllPage(END, BACKWARDS, 1); // system records too: a bound, not a result
    if (!last) return 0;
    const end = toPosition(last);
    if (after !== 'start' && !isStart(after) && !isAfter(end, after)) return 0;

    let count = 0;
    let settle: (error?: Error) => void = () => {};
    const done = new Promise<void>((resolve, reject) => (settle = (error) => (error ? reject(error) : resolve())));
    let finished = false;
    const source: AllStreamSubscription = this.client.subscribeToAll({
      fromPosition: readFrom(after),
      filter: serverFilter(filter, {
        checkpointReached: (_s, position) => {
          drain();
          if (!isAfter(end, position)) finish();
        },
      }),
    });
    const finish = (error?: Error) => {
      if (finished) return;
      finished = true;
      settle(error);
    };
    // Paused mode: at a checkpoint or CaughtUp every event before it is already in the buffer, so
    // draining it there counts them all before we decide to stop.
    const drain = () => {
      for (
        let resolved = source.read() as { event?: AllStreamRecordedEvent } | null;
        resolved && !finished;
        resolved = source.read()
      ) {
        const event = resolved.event;
        if (!event) continue;
        const position = toPosition(event);
        if (isAfter(position, end)) return finish();
        if (matches(event, filter) && ++count >= max) return finish();
        if (!isAfter(end, position)) return finish();
      }
    };
    source.on('readable', drain);
    source.on('caughtUp', () => {
      drain();
      finish();
    });
    source.on('error', (error) => finish(error));
    source.on('end', () => finish(new Error('EventStoreDB ended a subscription to $all')));
    try {
      await done;
    } finally {
      await source.unsubscribe();
      source.destroy();
    }
    return Math.min(count, max);
  }

  async headPosition(): Promise<Position | null> {
    let from: ReadPosition = END;
    for (;;) {
      const page = await this.readAllPage(from, BACKWARDS); // backwards from a position excludes it
      const newest = page.find((e) => !isSystem(e));
      if (newest) return toPosition(newest);
      if (page.length < PAGE) return null;
      from = toPosition(page[page.length - 1]!);
    }
  }

  subscribe(options: SubscribeOptions = {}): Subscription {
    // The server delivers catch-up then live, strictly after `fromPosition`.
    const source = this.client.subscribeToAll({
      fromPosition: readFrom(options.after),
      filter: serverFilter(options.filter),
    });
    return wrapSubscription(source, options.filter);
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }
}

/** Our Subscription over the client's stream: closing ends a pending read at once. */
function wrapSubscription(source: AllStreamSubscription, filter: LogFilter | undefined): Subscription {
  let released: Promise<void> | null = null;
  let signalClose: () => void = () => {};
  const closing = new Promise<null>((resolve) => (signalClose = () => resolve(null)));
  const release = () => {
    signalClose();
    released ??= source.unsubscribe().then(() => void source.destroy());
    return released;
  };
  const reader = source[Symbol.asyncIterator]() as AsyncIterator<{ event?: AllStreamRecordedEvent }>;

  async function* run(): AsyncGenerator<RecordedEvent> {
    try {
      while (!released) {
        const next = reader.next();
        next.catch(() => {}); // once closed, nobody awaits this read; its rejection is expected
        const result = await Promise.race([next, closing]);
        if (!result || result.done) return;
        const event = result.value.event;
        if (event && matches(event, filter)) yield toRecorded(event);
      }
    } finally {
      await release();
    }
  }

  const iterator = run();
  return {
    [Symbol.asyncIterator]: () => iterator,
    async close() {
      await release();
      await iterator.return(undefined);
    },
  };
}
