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
// this client's readAll takes no filter, so it pages through `$all`.

import {
  ANY, BACKWARDS, END, EventStoreDBClient, FORWARDS, NO_STREAM, START, STREAM_EXISTS, StreamNotFoundError,
  WrongExpectedVersionError, eventTypeFilter, excludeSystemEvents, jsonEvent, streamNameFilter,
  type AllStreamRecordedEvent, type AllStreamSubscription, type AppendExpectedRevision, type Filter,
  type JSONType, type ReadPosition, type ReadRevision, type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import type {
  AppendResult, EventMetadata, EventStore, EventToAppend, ExpectedRevision, LogFilter, ReadAllOptions,
  ReadStreamOptions, RecordedEvent, StreamAppend, StreamAppendOutcome, SubscribeOptions, Subscription,
} from './port.ts';
import { WrongExpectedRevisionError } from './port.ts';
import { START as LOG_START, isAfter, isStart, type Position } from './position.ts';

const DEFAULT_LIMIT = 500; // readAll without a limit returns one batch, as the PostgreSQL adapter does
const PAGE = 500; // events per gRPC read while paging through `$all`

type EsdbEvent = EsdbRecordedEvent | AllStreamRecordedEvent;

function toExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'no_stream': return NO_STREAM;
    case 'exists': return STREAM_EXISTS;
    case 'any': return ANY;
    default: return expected;
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
function serverFilter(filter: LogFilter | undefined): Filter {
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: filter.streamPrefixes });
  if (filter?.eventTypes?.length) {
    // Exact names: the server's type prefixes would also let `A20` through for `A2`.
    const names = filter.eventTypes.map((t) => t.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&'));
    return eventTypeFilter({ regex: `^(?:${names.join('|')})$` });
  }
  return excludeSystemEvents();
}

/** Position.End (2^64 - 1): what servers before 22.6 send as the position of an event read from a stream. */
const NO_POSITION = 2n ** 64n - 1n;

function toPosition(event: EsdbEvent): Position {
  // Reads of `$all` always carry the event's log position; reads of a stream only on servers since
  // 22.6 (KurrentDB Grpc/Enumerators.cs; before, Position.End). Each event has its own position,
  // commit == prepare, also within one append.
  if (!event.position || event.position.commit === NO_POSITION) {
    throw new Error(`EventStoreDB returned event ${event.id} of ${event.streamId} without a log position: the server is older than 22.6, which this adapter needs`);
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

  async append(stream: string, events: EventToAppend[], { expected }: { expected: ExpectedRevision }): Promise<AppendResult> {
    if (events.length === 0) return this.checkOnly(stream, expected);
    try {
      const result = await this.client.appendToStream(
        stream,
        events.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data as JSONType, metadata: e.metadata as JSONType })),
        { expectedRevision: toExpected(expected) },
      );
      if (!result.position) throw new Error(`EventStoreDB acknowledged an append to ${stream} without a position`);
      return { nextExpectedRevision: result.nextExpectedRevision, position: result.position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) throw new WrongExpectedRevisionError(stream, expected, error.actualVersion);
      throw error;
    }
  }

  /**
   * EventStoreDB has no transaction across streams: a sequence of single appends, each checked
   * by the server on its own, so one stream's conflict refuses only that stream. A failure other
   * than a conflict stops the sequence (the streams before it are written; a retry is idempotent).
   */
  async appendMany(appends: StreamAppend[]): Promise<StreamAppendOutcome[]> {
    if (new Set(appends.map((a) => a.stream)).size !== appends.length) throw new Error('appendMany: a stream may appear once');
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
    const ok = expected === 'any'
      || (expected === 'no_stream' && actual === 'no_stream')
      || (expected === 'exists' && actual !== 'no_stream')
      || (typeof expected === 'bigint' && actual === expected);
    if (!ok) throw new WrongExpectedRevisionError(stream, expected, actual);
    return { nextExpectedRevision: last ? last.revision : -1n, position: (await this.headPosition()) ?? LOG_START };
  }

  /** One read per stream (the client has no multi-stream read), 16 at a time. */
  async readStreams(streams: string[]): Promise<Map<string, RecordedEvent[]>> {
    const read = new Map<string, RecordedEvent[]>(streams.map((stream) => [stream, []]));
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(16, streams.length) }, async () => {
      while (next < streams.length) {
        const stream = streams[next++]!;
        read.set(stream, await this.readStream(stream));
      }
    }));
    return read;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.limit === 0) return [];
    const backwards = options.direction === 'backwards';
    const from: ReadRevision = options.from === undefined ? (backwards ? END : START)
      : options.from === 'start' ? START : options.from === 'end' ? END : options.from;
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(stream, {
        fromRevision: from,
        direction: backwards ? BACKWARDS : FORWARDS,
        maxCount: options.limit ?? Number.MAX_SAFE_INTEGER,
      })) {
        if (resolved.event) events.push(toRecorded(resolved.event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  /** One page of raw `$all` records (system events included), so callers can page on positions. */
  private async readAllPage(from: ReadPosition, direction: typeof FORWARDS | typeof BACKWARDS): Promise<AllStreamRecordedEvent[]> {
    const page: AllStreamRecordedEvent[] = [];
    for await (const resolved of this.client.readAll({ fromPosition: from, direction, maxCount: PAGE })) {
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

  async countAfter(after: Position | 'start', filter: LogFilter, max: number): Promise<number> {
    return (await this.readAll({ after, filter, limit: max })).length;
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
    const source = this.client.subscribeToAll({ fromPosition: readFrom(options.after), filter: serverFilter(options.filter) });
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
