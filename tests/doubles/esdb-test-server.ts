// TEST DOUBLE: an in-process stand-in for an EventStoreDB node, for tests only. It is not a product
// and not an EventStoreDB implementation: it serves, over real gRPC and with the client's own
// generated stubs and messages, only the calls infra/eventstore/eventstoredb.ts makes through
// @eventstore/db-client, so the adapter is exercised on machines that cannot run EventStoreDB.
//
// Served: Streams.Append (client streaming) and Streams.Read for a stream, for `$all`, and for
// filtered `$all` subscriptions (catch-up, then live). Everything else answers UNIMPLEMENTED,
// which the client tolerates where it matters: with ServerFeatures unimplemented it assumes an
// old server and appends with Append rather than BatchAppend.
//
// Semantics kept from the real server, because the adapter relies on them:
// - expected revisions are checked here, and a mismatch is answered the way the server answers
//   it (an AppendResp carrying WrongExpectedVersion), so the client raises WrongExpectedVersionError;
// - re-appending the same event ids at the same place succeeds without writing, with the original
//   position;
// - positions grow with every record; the events of one append share a commit position and
//   each has its own prepare position, as in `$all`;
// - reading `$all` forwards from a position includes it, backwards excludes it, and a
//   subscription starts strictly after it;
// - `$all` starts with a few system events, which readers of the log must skip;
// - appends above `maxAppendSize` bytes fail as the server fails them (its default: 1 MiB).

import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import type { IStreamsServer } from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type { AppendReq, ReadReq } from '@eventstore/db-client/generated/streams_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';

const { AppendResp, ReadResp } = streamsPb;
const FORWARDS = streamsPb.ReadReq.Options.ReadDirection.FORWARDS;
const SERVER_DEFAULT_MAX_APPEND_SIZE = 1024 * 1024;

interface StoredEvent {
  stream: string;
  revision: bigint;
  id: string;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
  created: bigint; // .NET ticks (100 ns) since the Unix epoch, as the server sends `created`
  commit: bigint;
  prepare: bigint;
}

type Expected = { kind: 'any' | 'no_stream' | 'stream_exists' } | { kind: 'revision'; revision: bigint };
type Matcher = (e: StoredEvent) => boolean;

const after = (e: StoredEvent, commit: bigint, prepare: bigint) => e.commit > commit || (e.commit === commit && e.prepare > prepare);
const atOrAfter = (e: StoredEvent, commit: bigint, prepare: bigint) => after(e, commit, prepare) || (e.commit === commit && e.prepare === prepare);

/** The log: every event in `$all` order, and each stream's events by revision. */
class MemoryLog {
  readonly all: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly listeners = new Set<() => void>();
  private nextPosition = 0n;

  stream(name: string): StoredEvent[] | undefined {
    return this.streams.get(name);
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  write(stream: string, proposed: Omit<StoredEvent, 'stream' | 'revision' | 'created' | 'commit' | 'prepare'>[]): StoredEvent[] {
    const events = this.streams.get(stream) ?? [];
    this.streams.set(stream, events);
    const commit = this.nextPosition;
    const created = BigInt(Date.now()) * 10_000n;
    const written = proposed.map((p) => {
      const e: StoredEvent = { ...p, stream, revision: BigInt(events.length), created, commit, prepare: this.nextPosition };
      // A record's size on disk, roughly: positions are byte offsets in the real log.
      this.nextPosition += BigInt(100 + stream.length + p.type.length + p.data.length + p.metadata.length);
      events.push(e);
      this.all.push(e);
      return e;
    });
    for (const listener of [...this.listeners]) listener();
    return written;
  }
}

function seedSystemEvents(log: MemoryLog): void {
  const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  const system = (type: string, data: unknown) => ({
    id: randomUUID(), type, contentType: 'application/json', data: json(data), metadata: new Uint8Array(),
  });
  log.write('$users', [system('$UserCreated', { loginName: 'admin' })]);
  log.write('$$$scavenges', [system('$metadata', { $maxCount: 30 })]);
  log.write('$stats-127.0.0.1:2113', [system('$statsCollected', {})]);
}

function streamName(identifier: sharedPb.StreamIdentifier | undefined): string {
  return Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');
}

function readExpected(options: AppendReq.Options): Expected {
  if (options.hasRevision()) return { kind: 'revision', revision: BigInt(options.getRevision()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

/** Where a retried append would have landed, if its events already stand there: the server answers it idempotently. */
function alreadyWritten(events: StoredEvent[], ids: string[], expected: Expected): StoredEvent[] | null {
  const first = expected.kind === 'revision' ? Number(expected.revision) + 1
    : expected.kind === 'no_stream' ? 0
    : events.findIndex((e) => e.id === ids[0]);
  if (first < 0 || first + ids.length > events.length) return null;
  const slice = events.slice(first, first + ids.length);
  return slice.every((e, i) => e.id === ids[i]) ? slice : null;
}

function wrongExpectedVersion(current: bigint, expected: Expected): InstanceType<typeof AppendResp> {
  const wev = new AppendResp.WrongExpectedVersion();
  if (current < 0n) wev.setCurrentNoStream(new sharedPb.Empty());
  else wev.setCurrentRevision(current.toString());
  switch (expected.kind) {
    case 'revision': wev.setExpectedRevision(expected.revision.toString()); break;
    case 'no_stream': wev.setExpectedNoStream(new sharedPb.Empty()); break;
    case 'stream_exists': wev.setExpectedStreamExists(new sharedPb.Empty()); break;
    case 'any': wev.setExpectedAny(new sharedPb.Empty()); break;
  }
  return new AppendResp().setWrongExpectedVersion(wev);
}

function success(last: StoredEvent): InstanceType<typeof AppendResp> {
  const position = new AppendResp.Position().setCommitPosition(last.commit.toString()).setPreparePosition(last.prepare.toString());
  return new AppendResp().setSuccess(new AppendResp.Success().setCurrentRevision(last.revision.toString()).setPosition(position));
}

function eventMessage(e: StoredEvent): InstanceType<typeof ReadResp> {
  const record = new ReadResp.ReadEvent.RecordedEvent()
    .setId(new sharedPb.UUID().setString(e.id))
    .setStreamIdentifier(new sharedPb.StreamIdentifier().setStreamName(Buffer.from(e.stream, 'utf8')))
    .setStreamRevision(e.revision.toString())
    .setCommitPosition(e.commit.toString())
    .setPreparePosition(e.prepare.toString())
    .setData(e.data)
    .setCustomMetadata(e.metadata);
  record.getMetadataMap().set('type', e.type).set('content-type', e.contentType).set('created', e.created.toString());
  return new ReadResp().setEvent(new ReadResp.ReadEvent().setEvent(record).setCommitPosition(e.commit.toString()));
}

function filterOf(options: ReadReq.Options): Matcher {
  const filter = options.hasFilter() ? options.getFilter() : undefined;
  if (!filter) return () => true;
  const expression = filter.hasStreamIdentifier() ? filter.getStreamIdentifier() : filter.getEventType();
  const field = filter.hasStreamIdentifier() ? (e: StoredEvent) => e.stream : (e: StoredEvent) => e.type;
  const prefixes = expression?.getPrefixList() ?? [];
  if (prefixes.length > 0) return (e) => prefixes.some((p) => field(e).startsWith(p));
  const regex = new RegExp(expression?.getRegex() ?? '');
  return (e) => regex.test(field(e));
}

/** Hooks a test sets on a running double to make appends fail as an unavailable node would. */
export interface EsdbFaults {
  /** When it returns true for an append's stream, that append is refused with UNAVAILABLE and nothing is written. */
  failAppend?: (stream: string) => boolean;
}

/** Requests served per write path, so a test can tell which one the client took. */
export interface EsdbCounters {
  append: number;
  batchAppend: number;
}

function createStreamsService(log: MemoryLog, maxAppendSize: number, faults: EsdbFaults, counters: EsdbCounters): IStreamsServer {
  const unimplemented = (what: string) => ({ code: grpc.status.UNIMPLEMENTED, details: `${what} is not implemented by the test double` });
  // A server-streaming call ends with an error status when 'error' is emitted on it (grpc-js).
  const fail = (call: { emit(event: 'error', error: unknown): boolean }, status: { code: grpc.status; details: string }) =>
    void call.emit('error', status);

  return {
    append(call, callback) {
      counters.append += 1;
      let options: AppendReq.Options | undefined;
      const proposed: AppendReq.ProposedMessage[] = [];
      call.on('data', (req: AppendReq) => {
        if (req.hasOptions()) options = req.getOptions();
        else if (req.hasProposedMessage()) proposed.push(req.getProposedMessage()!);
      });
      call.on('error', () => {});
      call.on('end', () => {
        if (!options) return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'append without options' });
        const stream = streamName(options.getStreamIdentifier());
        if (faults.failAppend?.(stream)) {
          return callback({ code: grpc.status.UNAVAILABLE, details: `append to ${stream} refused by the test double's fault hook` });
        }
        const expected = readExpected(options);
        const incoming = proposed.map((m) => {
          const meta = m.getMetadataMap();
          return {
            id: m.getId()?.getString() ?? randomUUID(),
            type: meta.get('type') ?? '',
            contentType: meta.get('content-type') ?? 'application/octet-stream',
            data: m.getData_asU8(),
            metadata: m.getCustomMetadata_asU8(),
          };
        });
        const size = incoming.reduce((n, e) => n + e.data.length + e.metadata.length + Buffer.byteLength(e.type), 0);
        if (size > maxAppendSize) {
          const metadata = new grpc.Metadata();
          metadata.set('exception', 'maximum-append-size-exceeded');
          metadata.set('maximum-append-size', String(maxAppendSize));
          return callback({ code: grpc.status.INVALID_ARGUMENT, details: `Maximum Append Size of ${maxAppendSize} Exceeded.`, metadata });
        }
        const events = log.stream(stream) ?? [];
        const current = BigInt(events.length) - 1n;
        const retried = incoming.length > 0 ? alreadyWritten(events, incoming.map((e) => e.id), expected) : null;
        if (retried) return callback(null, success(retried[retried.length - 1]!));
        const ok = expected.kind === 'any'
          || (expected.kind === 'no_stream' && current === -1n)
          || (expected.kind === 'stream_exists' && current >= 0n)
          || (expected.kind === 'revision' && current === expected.revision);
        if (!ok) return callback(null, wrongExpectedVersion(current, expected));
        if (incoming.length === 0) {
          const empty = new AppendResp.Success().setNoPosition(new sharedPb.Empty());
          if (current < 0n) empty.setNoStream(new sharedPb.Empty());
          else empty.setCurrentRevision(current.toString());
          return callback(null, new AppendResp().setSuccess(empty));
        }
        const written = log.write(stream, incoming);
        callback(null, success(written[written.length - 1]!));
      });
    },

    read(call) {
      const options = call.request.getOptions();
      if (!options) return fail(call, { code: grpc.status.INVALID_ARGUMENT, details: 'read without options' });
      const forwards = options.getReadDirection() === FORWARDS;
      const count = options.hasCount() ? BigInt(options.getCount()) : null;
      const send = (events: StoredEvent[]) => {
        for (const e of events) call.write(eventMessage(e));
      };

      if (options.hasStream()) {
        if (count === null) return fail(call, unimplemented('subscriptions to a stream'));
        const streamOptions = options.getStream()!;
        const name = streamName(streamOptions.getStreamIdentifier());
        const events = log.stream(name);
        if (!events) {
          const notFound = new ReadResp.StreamNotFound().setStreamIdentifier(streamOptions.getStreamIdentifier());
          call.write(new ReadResp().setStreamNotFound(notFound));
          return call.end();
        }
        const last = events.length - 1;
        const from = streamOptions.hasRevision() ? Number(streamOptions.getRevision())
          : streamOptions.hasEnd() ? (forwards ? events.length : last) : (forwards ? 0 : last);
        const selected = forwards ? events.slice(from) : events.slice(0, Math.min(from, last) + 1).reverse();
        send(selected.slice(0, Number(count)));
        return call.end();
      }

      const all = options.getAll()!;
      const keep = filterOf(options);
      const position = all.hasPosition() ? all.getPosition()! : null;
      const commit = position ? BigInt(position.getCommitPosition()) : 0n;
      const prepare = position ? BigInt(position.getPreparePosition()) : 0n;

      if (count !== null) {
        let selected: StoredEvent[];
        if (forwards) {
          selected = all.hasEnd() ? [] : position ? log.all.filter((e) => atOrAfter(e, commit, prepare)) : log.all;
        } else {
          selected = (position ? log.all.filter((e) => !atOrAfter(e, commit, prepare)) : all.hasStart() ? [] : log.all).slice().reverse();
        }
        send(selected.filter(keep).slice(0, Number(count)));
        return call.end();
      }

      // A subscription to `$all`: confirm, catch up strictly after the start, then follow appends.
      call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
      let next = all.hasEnd() ? log.all.length : position ? log.all.findIndex((e) => after(e, commit, prepare)) : 0;
      if (next < 0) next = log.all.length;
      const pump = () => {
        if (call.cancelled || call.destroyed) return;
        send(log.all.slice(next).filter(keep));
        next = log.all.length;
      };
      const off = log.onAppend(pump);
      call.on('cancelled', off);
      call.on('close', off);
      call.on('error', off);
      pump();
    },

    delete(_call, callback) {
      callback(unimplemented('Streams.Delete'));
    },
    tombstone(_call, callback) {
      callback(unimplemented('Streams.Tombstone'));
    },
    batchAppend(call) {
      counters.batchAppend += 1;
      fail(call, unimplemented('Streams.BatchAppend'));
    },
  };
}

export interface EsdbTestServerOptions {
  /** Bytes of data, metadata and type one append may carry; the real server's default is 1 MiB. */
  maxAppendSize?: number;
}

export interface EsdbTestServer {
  url: string;
  /** Set or clear at any time; read on every append. */
  faults: EsdbFaults;
  counters: EsdbCounters;
  stop(): Promise<void>;
}

export async function startEsdbTestServer(options: EsdbTestServerOptions = {}): Promise<EsdbTestServer> {
  const log = new MemoryLog();
  seedSystemEvents(log);
  const faults: EsdbFaults = {};
  const counters: EsdbCounters = { append: 0, batchAppend: 0 };
  const server = new grpc.Server();
  server.addService(streamsGrpc.StreamsService, createStreamsService(log, options.maxAppendSize ?? SERVER_DEFAULT_MAX_APPEND_SIZE, faults, counters));
  // ServerFeatures, Gossip and the rest are not registered: grpc-js answers them UNIMPLEMENTED.
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return {
    url: `esdb://127.0.0.1:${port}?tls=false`,
    faults,
    counters,
    async stop() {
      server.forceShutdown();
    },
  };
}
