// TEST DOUBLE (see ../esdb-test-server.ts): Streams.Read — reads of a stream, reads of `$all`, and
// subscriptions to `$all` (filtered or not).

import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import type { IStreamsServer } from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type { ReadReq } from '@eventstore/db-client/generated/streams_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import type { EsdbCounters } from './append.ts';
import type { MemoryLog, StoredEvent } from './log.ts';

const { ReadResp } = streamsPb;
const FORWARDS = streamsPb.ReadReq.Options.ReadDirection.FORWARDS;
/** Enumerators.cs ReadBatchSize: the search window when a filter names none. */
const DEFAULT_MAX_SEARCH_WINDOW = 32;

type Matcher = (e: StoredEvent) => boolean;

/** (commit, prepare) order; every stored event has commit == prepare == its position. */
const compareTo = (e: StoredEvent, commit: bigint, prepare: bigint) =>
  e.position !== commit ? (e.position < commit ? -1 : 1) : e.position === prepare ? 0 : e.position < prepare ? -1 : 1;

/**
 * ReaderIndex/EventFilter.cs DefaultAllFilterStrategy: reads and subscriptions of `$all` never return
 * `$epoch-information` or the checkpoints and parked messages of persistent subscriptions to `$all`;
 * every other system stream (`$users`, `$user-*`, `$stats-*`, metadata streams …) is returned.
 */
const defaultAllFilter: Matcher = (e) =>
  e.stream[0] !== '$' ||
  !(
    e.stream === '$epoch-information' ||
    (e.stream.startsWith('$persistentsubscription-$all::') &&
      (e.stream.endsWith('-checkpoint') || e.stream.endsWith('-parked')))
  );

/** A filter's expression (ordinal prefixes or a regex, on the stream name or the event type), after the default `$all` filter. */
function filterOf(options: ReadReq.Options): Matcher {
  const filter = options.hasFilter() ? options.getFilter() : undefined;
  if (!filter) return defaultAllFilter;
  const expression = filter.hasStreamIdentifier() ? filter.getStreamIdentifier() : filter.getEventType();
  const field = filter.hasStreamIdentifier() ? (e: StoredEvent) => e.stream : (e: StoredEvent) => e.type;
  const prefixes = expression?.getPrefixList() ?? [];
  if (prefixes.length > 0) return (e) => defaultAllFilter(e) && prefixes.some((p) => field(e).startsWith(p));
  const regex = new RegExp(expression?.getRegex() ?? ''); // .NET and JavaScript agree on the expressions our adapter sends
  return (e) => defaultAllFilter(e) && regex.test(field(e));
}

/** Position.End, what servers before 22.6 put in an event read from a stream (oss-v21.10 Grpc/Enumerators.cs). */
const POSITION_END = (2n ** 64n - 1n).toString();

/** Grpc/Enumerators.cs: events carry their `$all` position on stream reads too (servers since 22.6, unless `positioned` is false). */
function eventMessage(e: StoredEvent, positioned = true): InstanceType<typeof ReadResp> {
  const position = positioned ? e.position.toString() : POSITION_END;
  const record = new ReadResp.ReadEvent.RecordedEvent()
    .setId(new sharedPb.UUID().setString(e.id))
    .setStreamIdentifier(new sharedPb.StreamIdentifier().setStreamName(Buffer.from(e.stream, 'utf8')))
    .setStreamRevision(e.revision.toString())
    .setCommitPosition(position)
    .setPreparePosition(position)
    .setData(e.data)
    .setCustomMetadata(e.metadata);
  record
    .getMetadataMap()
    .set('type', e.type)
    .set('content-type', e.isJson ? 'application/json' : 'application/octet-stream')
    .set('created', e.created.toString());
  const read = new ReadResp.ReadEvent().setEvent(record);
  if (positioned) read.setCommitPosition(e.position.toString());
  else read.setNoPosition(new sharedPb.Empty());
  return new ReadResp().setEvent(read);
}

const checkpointMessage = (position: bigint) =>
  new ReadResp().setCheckpoint(
    new ReadResp.Checkpoint().setCommitPosition(position.toString()).setPreparePosition(position.toString()),
  );

const streamName = (identifier: sharedPb.StreamIdentifier | undefined) =>
  Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

/** `positionsOnStreamReads`: false for a server before 22.6. `counters.eventsSent`: events written to clients, reads and subscriptions alike. */
export function createRead(
  log: MemoryLog,
  counters: EsdbCounters,
  positionsOnStreamReads = true,
): IStreamsServer['read'] {
  return (call) => {
    // A server-streaming call ends with an error status when 'error' is emitted on it (grpc-js).
    const fail = (code: grpc.status, details: string) => void call.emit('error', { code, details });
    const options = call.request.getOptions();
    if (!options) return fail(grpc.status.INVALID_ARGUMENT, 'read without options');
    const forwards = options.getReadDirection() === FORWARDS;
    const count = options.hasCount() ? BigInt(options.getCount()) : null;
    const sendOne = (e: StoredEvent, positioned = true) => {
      counters.eventsSent += 1;
      call.write(eventMessage(e, positioned));
    };
    const send = (events: StoredEvent[], positioned = true) => {
      for (const e of events) sendOne(e, positioned);
    };

    if (options.hasStream()) {
      if (count === null)
        return fail(grpc.status.UNIMPLEMENTED, 'subscriptions to a stream are not implemented by the test double');
      const streamOptions = options.getStream()!;
      const events = log.stream(streamName(streamOptions.getStreamIdentifier()));
      if (!events) {
        call.write(
          new ReadResp().setStreamNotFound(
            new ReadResp.StreamNotFound().setStreamIdentifier(streamOptions.getStreamIdentifier()),
          ),
        );
        return call.end();
      }
      const last = events.length - 1;
      const from = streamOptions.hasRevision()
        ? Number(streamOptions.getRevision())
        : streamOptions.hasEnd()
          ? forwards
            ? events.length
            : last
          : forwards
            ? 0
            : last;
      const selected = forwards ? events.slice(from) : events.slice(0, Math.min(from, last) + 1).reverse();
      send(selected.slice(0, Number(count)), positionsOnStreamReads);
      return call.end();
    }

    const all = options.getAll()!;
    const keep = filterOf(options);
    const position = all.hasPosition() ? all.getPosition()! : null;
    const commit = position ? BigInt(position.getCommitPosition()) : 0n;
    const prepare = position ? BigInt(position.getPreparePosition()) : 0n;

    if (count !== null) {
      // Storage/ReaderIndex/AllReader.cs: forwards from a position includes it, backwards excludes it.
      let selected: StoredEvent[];
      if (forwards) {
        selected = all.hasEnd() ? [] : position ? log.all.filter((e) => compareTo(e, commit, prepare) >= 0) : log.all;
      } else {
        selected = (position ? log.all.filter((e) => compareTo(e, commit, prepare) < 0) : all.hasStart() ? [] : log.all)
          .slice()
          .reverse();
      }
      send(selected.filter(keep).slice(0, Number(count)));
      return call.end();
    }

    subscribe(log, call, sendOne, options, keep, all.hasEnd() ? 'end' : position ? { commit, prepare } : 'start');
  };
}

/**
 * A subscription to `$all` (Grpc/Enumerators.AllSubscriptionFiltered.cs; AllSubscription.cs without a
 * filter): a confirmation first; catch-up in pages of maxSearchWindow considered events, with a
 * Checkpoint whenever checkpointInterval × maxSearchWindow events were considered (at the last
 * event sent in that page, else where the page started); CaughtUp (servers ≥ 23.10); then live events.
 * From a position, the server reads the one event at or after it and starts at the next: the
 * subscription starts strictly after an event's position.
 * Live checkpoints follow the same counting (one per checkpoint interval of considered events, at the
 * event that completes it); the server's live path (SubscriptionsService) is not reproduced in detail.
 */
function subscribe(
  log: MemoryLog,
  call: Parameters<IStreamsServer['read']>[0],
  sendOne: (e: StoredEvent) => void,
  options: ReadReq.Options,
  keep: Matcher,
  from: 'start' | 'end' | { commit: bigint; prepare: bigint },
): void {
  const filter = options.hasFilter() ? options.getFilter()! : null;
  const window = filter?.hasMax() ? filter.getMax() : DEFAULT_MAX_SEARCH_WINDOW;
  const interval = filter ? Math.max(1, filter.getCheckpointintervalmultiplier()) * window : Infinity;
  let considered = 0;

  call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
  let next: number;
  if (from === 'start') next = 0;
  else if (from === 'end') next = log.all.length;
  else {
    const at = log.all.findIndex((e) => compareTo(e, from.commit, from.prepare) >= 0);
    next = at < 0 ? log.all.length : at + 1;
  }

  // Catch-up, page by page, up to the end of the log as it stands.
  while (next < log.all.length) {
    const page = log.all.slice(next, next + window);
    const sent = page.filter(keep);
    for (const e of sent) sendOne(e);
    const pageStart = page[0]!.position;
    next += page.length;
    considered += page.length;
    if (next >= log.all.length) break; // end of stream: the count carries into the live phase
    if (considered >= interval) {
      considered %= interval;
      call.write(checkpointMessage(sent.at(-1)?.position ?? pageStart));
    }
  }
  call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));

  const pump = () => {
    if (call.cancelled || call.destroyed) return;
    for (const e of log.all.slice(next)) {
      if (keep(e)) sendOne(e);
      considered += 1;
      if (considered >= interval) {
        considered = 0;
        call.write(checkpointMessage(e.position));
      }
    }
    next = log.all.length;
  };
  const off = log.onAppend(pump);
  call.on('cancelled', off);
  call.on('close', off);
  call.on('error', off);
}
