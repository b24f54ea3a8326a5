// TEST DOUBLE: an in-process stand-in for an EventStoreDB node, for tests only. It is not a product,
// not a server, and not an EventStoreDB implementation: it serves, over real gRPC and with the
// official client's own generated stubs and messages, the calls infra/eventstore/eventstoredb.ts
// makes through @eventstore/db-client, so the adapter runs on machines that cannot run EventStoreDB.
// Each behaviour follows the server's source (kurrent-io/KurrentDB, oss-v23.10.8 and v24.10.x); the
// files under tests/doubles/esdb/ name the server file that fixes each one.
//
// Served:
// - ServerFeatures.GetSupportedMethods listing Streams/BatchAppend (esdb/server-features.ts), so the
//   client appends with BatchAppend as against any server since 21.10; `serverFeatures: false`
//   leaves it unimplemented, and the client falls back to Streams.Append as against an old server;
// - Streams.Append and Streams.BatchAppend (esdb/append.ts): expected revisions, idempotent retries
//   (explicit revision / no_stream by position, any / stream_exists by a bounded cache of recent ids),
//   the append size rule of a chosen server version, required `type` and `content-type`; failures as
//   each path reports them (AppendResp / trailers on Append, google.rpc.Status with packed details
//   per correlation on BatchAppend);
// - Streams.Read (esdb/read.ts): streams, `$all` (forwards includes the start, backwards excludes
//   it), and `$all` subscriptions (confirmation, Checkpoint, CaughtUp, live);
// - the log itself (esdb/log.ts): commit == prepare == each event's own position; a node's system
//   events in `$all` (`$epoch-information`, `$users`, `$user-*`, a periodic `$stats-*` writer).
// Everything else (stream subscriptions, deletes, gossip, persistent subscriptions…) answers UNIMPLEMENTED.

import grpc from '@grpc/grpc-js';
import type { IStreamsServer } from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import featuresGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import { createAppend, createBatchAppend, type EsdbCounters, type EsdbFaults } from './esdb/append.ts';
import type { SizeRule } from './esdb/append-rules.ts';
import { MemoryLog, seedSystemEvents, startStatsWriter } from './esdb/log.ts';
import { createRead } from './esdb/read.ts';
import { createServerFeatures } from './esdb/server-features.ts';

export type { EsdbCounters, EsdbFaults } from './esdb/append.ts';
export type { SizeRule } from './esdb/append-rules.ts';

/** ClusterVNodeOptions MaxAppendSize default: 1 MiB. */
const SERVER_DEFAULT_MAX_APPEND_SIZE = 1024 * 1024;
/** MaxAppendEventSize default (24.10.4 and later): int.MaxValue, no per-event limit. */
const SERVER_DEFAULT_MAX_APPEND_EVENT_SIZE = 2 ** 31 - 1;
/** StatsPeriodSec default: 30 s. */
const SERVER_DEFAULT_STATS_INTERVAL_MS = 30_000;
/**
 * Entries of the committed-ids cache: the server bounds it at 8 MiB (ESConsts.CommitedEventsMemCacheLimit)
 * at roughly 24 bytes plus the stream id per entry, i.e. about a hundred thousand recent events.
 */
const SERVER_LIKE_ID_CACHE_SIZE = 100_000;

export interface EsdbTestServerOptions {
  /** MaxAppendSize: what one append may carry, counted by `sizeRule`; the server's default is 1 MiB. */
  maxAppendSize?: number;
  /** MaxAppendEventSize (only under the 'v24.10.5' rule); default: no limit, as the server. */
  maxAppendEventSize?: number;
  /** Which server version's size accounting: data only (≤ 24.10.3) or data + metadata + 2 × type (default). */
  sizeRule?: SizeRule;
  /** false: ServerFeatures unimplemented, so the client appends with Streams.Append (an old server). Default true. */
  serverFeatures?: boolean;
  /** Recent event ids remembered for `any` / `stream_exists` retries; small in tests of the bound. */
  idCacheSize?: number;
  /** false: stream reads carry no log position (Position.End), as on servers before 22.6. Default true. */
  positionsOnStreamReads?: boolean;
  /** How often the node writes a `$stats-*` event; default 30 s, tests set it short. 0: never. */
  statsIntervalMs?: number;
}

export interface EsdbTestServer {
  url: string;
  /** Set or clear at any time; read on every append. */
  faults: EsdbFaults;
  counters: EsdbCounters;
  stop(): Promise<void>;
}

export async function startEsdbTestServer(options: EsdbTestServerOptions = {}): Promise<EsdbTestServer> {
  const sizeRule = options.sizeRule ?? 'v24.10.5';
  const log = new MemoryLog(options.idCacheSize ?? SERVER_LIKE_ID_CACHE_SIZE);
  seedSystemEvents(log);
  const faults: EsdbFaults = {};
  const counters: EsdbCounters = { append: 0, batchAppend: 0, eventsSent: 0 };
  const settings = {
    maxAppendSize: options.maxAppendSize ?? SERVER_DEFAULT_MAX_APPEND_SIZE,
    maxAppendEventSize: options.maxAppendEventSize ?? SERVER_DEFAULT_MAX_APPEND_EVENT_SIZE,
    sizeRule,
    faults,
    counters,
  };
  const unimplemented = (what: string) => ({
    code: grpc.status.UNIMPLEMENTED,
    details: `${what} is not implemented by the test double`,
  });

  const server = new grpc.Server();
  const streams: IStreamsServer = {
    append: createAppend(log, settings),
    batchAppend: createBatchAppend(log, settings),
    read: createRead(log, counters, options.positionsOnStreamReads ?? true),
    delete: (_call, callback) => callback(unimplemented('Streams.Delete')),
    tombstone: (_call, callback) => callback(unimplemented('Streams.Tombstone')),
  };
  server.addService(streamsGrpc.StreamsService, streams);
  if (options.serverFeatures !== false) {
    server.addService(
      featuresGrpc.ServerFeaturesService,
      createServerFeatures(sizeRule === 'data-only' ? '23.10.8' : '24.10.5'),
    );
  }
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  const statsInterval = options.statsIntervalMs ?? SERVER_DEFAULT_STATS_INTERVAL_MS;
  const stopStats = statsInterval > 0 ? startStatsWriter(log, statsInterval, `127.0.0.1:${port}`) : () => {};
  return {
    url: `esdb://127.0.0.1:${port}?tls=false`,
    faults,
    counters,
    async stop() {
      stopStats();
      server.forceShutdown();
    },
  };
}
