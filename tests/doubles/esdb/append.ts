// TEST DOUBLE (see ../esdb-test-server.ts): the two write paths, Streams.Append (client streaming,
// what a client uses when ServerFeatures does not list BatchAppend) and Streams.BatchAppend
// (bidirectional, what @eventstore/db-client 6.x always uses when it does:
// EventStore-Client-NodeJS src/streams/appendToStream/index.ts).

import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import type { IStreamsServer } from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type { AppendReq, BatchAppendReq } from '@eventstore/db-client/generated/streams_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import codePb from '@eventstore/db-client/generated/code_pb.js';
import {
  decide,
  eventSize,
  maxAppendEventSizeExceeded,
  maxAppendSizeExceeded,
  requiredMetadataMissing,
  serverNotReady,
  type Decision,
  type Expected,
  type SizeRule,
} from './append-rules.ts';
import type { MemoryLog, ProposedEvent, StoredEvent } from './log.ts';

const { AppendResp, BatchAppendResp } = streamsPb;
const Code = codePb.Code;

/** Hooks a test sets on a running double to make appends fail as an unavailable node would. */
export interface EsdbFaults {
  /**
   * When it returns true for an append's stream, that append is refused with UNAVAILABLE and nothing
   * is written. On the BatchAppend path the whole call fails, as when the node goes away: appends in
   * flight on the same connection fail with it, and the client reconnects for the next one.
   */
  failAppend?: (stream: string) => boolean;
}

/** Appends received per write path, so a test can tell which one the client took. */
export interface EsdbCounters {
  append: number;
  batchAppend: number;
  /** Events written to clients by Streams.Read (reads and subscriptions): what a read costs on the wire. */
  eventsSent: number;
}

export interface AppendSettings {
  maxAppendSize: number;
  maxAppendEventSize: number;
  sizeRule: SizeRule;
  faults: EsdbFaults;
  counters: EsdbCounters;
}

const streamName = (identifier: sharedPb.StreamIdentifier | undefined) =>
  Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

type Proposed = AppendReq.ProposedMessage | BatchAppendReq.ProposedMessage;

type Refusal = { missing: 'type' | 'content-type' } | { tooBig: { id: string; size: number } };

/** A proposed message as the server takes it in: `type` and `content-type` are required, never defaulted. */
function takeIn(
  message: Proposed,
  settings: AppendSettings,
): { event: ProposedEvent; size: number } | { refused: Refusal } {
  const meta = message.getMetadataMap();
  const type = meta.get('type');
  if (type === undefined) return { refused: { missing: 'type' } };
  const contentType = meta.get('content-type');
  if (contentType === undefined) return { refused: { missing: 'content-type' } };
  const id = message.getId()?.getString() || randomUUID();
  const data = message.getData_asU8();
  const metadata = message.getCustomMetadata_asU8();
  const size = eventSize(settings.sizeRule, type, data, metadata);
  if (settings.sizeRule !== 'data-only' && size > settings.maxAppendEventSize)
    return { refused: { tooBig: { id, size } } };
  return { event: { id, type, isJson: contentType === 'application/json', data, metadata }, size };
}

/** Decide, and write when the decision is to write. */
function commit(
  log: MemoryLog,
  stream: string,
  expected: Expected,
  events: ProposedEvent[],
): Decision & { written?: StoredEvent } {
  const decision = decide(
    log,
    stream,
    expected,
    events.map((e) => e.id),
  );
  if (decision.kind !== 'write' || events.length === 0) return decision;
  const written = log.write(stream, events);
  return { kind: 'write', written: written[written.length - 1]! };
}

// ---- Streams.Append (Services/Transport/Grpc/Streams.Append.cs) ----

function expectedOfAppend(options: AppendReq.Options): Expected {
  if (options.hasRevision()) return { kind: 'revision', revision: BigInt(options.getRevision()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

function appendWrongExpectedVersion(current: bigint, expected: Expected): InstanceType<typeof AppendResp> {
  const wev = new AppendResp.WrongExpectedVersion();
  if (current < 0n) wev.setCurrentNoStream(new sharedPb.Empty());
  else wev.setCurrentRevision(current.toString());
  switch (expected.kind) {
    case 'revision':
      wev.setExpectedRevision(expected.revision.toString());
      break;
    case 'no_stream':
      wev.setExpectedNoStream(new sharedPb.Empty());
      break;
    case 'stream_exists':
      wev.setExpectedStreamExists(new sharedPb.Empty());
      break;
    case 'any':
      wev.setExpectedAny(new sharedPb.Empty());
      break;
  }
  return new AppendResp().setWrongExpectedVersion(wev);
}

/** Success carries the last event's revision and its log position as both commit and prepare (RequestManager/Managers/WriteEvents.cs). */
function appendSuccess(last: StoredEvent): InstanceType<typeof AppendResp> {
  const position = new AppendResp.Position()
    .setCommitPosition(last.position.toString())
    .setPreparePosition(last.position.toString());
  return new AppendResp().setSuccess(
    new AppendResp.Success().setCurrentRevision(last.revision.toString()).setPosition(position),
  );
}

export function createAppend(log: MemoryLog, settings: AppendSettings): IStreamsServer['append'] {
  return (call, callback) => {
    settings.counters.append += 1;
    let options: AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    let size = 0;
    let answered = false;
    const answer: typeof callback = (error, value) => {
      if (answered) return;
      answered = true;
      callback(error, value);
    };
    // The server takes messages in as they stream and fails the call at the first bad one.
    call.on('data', (req: AppendReq) => {
      if (answered) return;
      if (req.hasOptions()) {
        options = req.getOptions();
        return;
      }
      const message = req.getProposedMessage();
      if (!options || !message)
        return answer({ code: grpc.status.INVALID_ARGUMENT, details: 'append without options first' });
      const taken = takeIn(message, settings);
      if ('refused' in taken) {
        const r = taken.refused;
        return answer(
          'missing' in r
            ? requiredMetadataMissing(r.missing)
            : maxAppendEventSizeExceeded(r.tooBig.id, r.tooBig.size, settings.maxAppendEventSize),
        );
      }
      size += taken.size;
      if (size > settings.maxAppendSize) return answer(maxAppendSizeExceeded(settings.maxAppendSize));
      events.push(taken.event);
    });
    call.on('error', () => {});
    call.on('end', () => {
      if (answered) return;
      if (!options) return answer({ code: grpc.status.INVALID_ARGUMENT, details: 'append without options' });
      const stream = streamName(options.getStreamIdentifier());
      if (settings.faults.failAppend?.(stream)) return answer(serverNotReady());
      const expected = expectedOfAppend(options);
      const outcome = commit(log, stream, expected, events);
      if (outcome.kind === 'wrong_expected_version')
        return answer(null, appendWrongExpectedVersion(outcome.current, expected));
      const last = outcome.kind === 'idempotent' ? outcome.last : outcome.written;
      if (last) return answer(null, appendSuccess(last));
      const current = BigInt(log.stream(stream)?.length ?? 0) - 1n; // nothing proposed: nothing written, no position
      const empty = new AppendResp.Success().setNoPosition(new sharedPb.Empty());
      if (current < 0n) empty.setNoStream(new sharedPb.Empty());
      else empty.setCurrentRevision(current.toString());
      answer(null, new AppendResp().setSuccess(empty));
    });
  };
}

// ---- Streams.BatchAppend (Services/Transport/Grpc/Streams.BatchAppend.cs) ----

function expectedOfBatch(options: BatchAppendReq.Options): Expected {
  if (options.hasStreamPosition()) return { kind: 'revision', revision: BigInt(options.getStreamPosition()) };
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  return { kind: 'any' };
}

/** A google.rpc.Status with its detail packed in an Any, as Grpc/Status.cs builds them; the client unpacks them in unpackError.ts. */
function status(
  code: number,
  message: string,
  detail: { serializeBinary(): Uint8Array },
  typeName: string,
): statusPb.Status {
  const any = new anyPb.Any();
  any.pack(detail.serializeBinary(), typeName);
  return new statusPb.Status().setCode(code).setMessage(message).setDetails(any);
}

/** Grpc/Status.cs WrongExpectedVersion with Grpc/WrongExpectedVersion.cs: ALREADY_EXISTS; `current_no_stream` when the stream is missing. */
function batchWrongExpectedVersion(current: bigint, expected: Expected): statusPb.Status {
  const wev = new sharedPb.WrongExpectedVersion();
  if (current < 0n) wev.setCurrentNoStream(new emptyPb.Empty());
  else wev.setCurrentStreamRevision(current.toString());
  switch (expected.kind) {
    case 'revision':
      wev.setExpectedStreamPosition(expected.revision.toString());
      break;
    case 'no_stream':
      wev.setExpectedNoStream(new emptyPb.Empty());
      break;
    case 'stream_exists':
      wev.setExpectedStreamExists(new emptyPb.Empty());
      break;
    case 'any':
      wev.setExpectedAny(new emptyPb.Empty());
      break;
  }
  return status(Code.ALREADY_EXISTS, 'WrongExpectedVersion', wev, 'event_store.client.WrongExpectedVersion');
}

const batchMaxAppendSizeExceeded = (max: number) =>
  status(
    Code.INVALID_ARGUMENT,
    'MaximumAppendSizeExceeded',
    new sharedPb.MaximumAppendSizeExceeded().setMaxappendsize(max),
    'event_store.client.MaximumAppendSizeExceeded',
  );

// The proto message MaximumAppendEventSizeExceeded is newer than the client's generated code, so
// its fields are left unset; client 6.x does not know the type and reports an UnknownError anyway.
const batchMaxAppendEventSizeExceeded = () =>
  status(
    Code.INVALID_ARGUMENT,
    'MaximumAppendEventSizeExceeded',
    new sharedPb.Empty(),
    'event_store.client.MaximumAppendEventSizeExceeded',
  );

// A message without `type` or `content-type` makes the server's indexer throw, and the worker answers
// that correlation with Status.BadRequest(exception message).
const batchBadRequest = (message: string) =>
  status(
    Code.INVALID_ARGUMENT,
    'BadRequest',
    new sharedPb.BadRequest().setMessage(message),
    'event_store.client.BadRequest',
  );

interface PendingWrite {
  identifier: sharedPb.StreamIdentifier;
  stream: string;
  expected: Expected;
  events: ProposedEvent[];
  size: number;
}

export function createBatchAppend(log: MemoryLog, settings: AppendSettings): IStreamsServer['batchAppend'] {
  return (call) => {
    // Per call, appends in progress by correlation id: one append may span several requests.
    const pending = new Map<string, PendingWrite>();
    let failed = false;

    const respond = (
      correlation: sharedPb.UUID | undefined,
      identifier: sharedPb.StreamIdentifier | undefined,
      result: { error: statusPb.Status } | { last: StoredEvent } | { nothingWritten: bigint },
    ) => {
      const resp = new BatchAppendResp().setStreamIdentifier(identifier ?? new sharedPb.StreamIdentifier());
      if (correlation) resp.setCorrelationId(correlation);
      if ('error' in result) resp.setError(result.error);
      else if ('nothingWritten' in result) {
        const success = new BatchAppendResp.Success().setNoPosition(new emptyPb.Empty());
        if (result.nothingWritten < 0n) success.setNoStream(new emptyPb.Empty());
        else success.setCurrentRevision(result.nothingWritten.toString());
        resp.setSuccess(success);
      } else {
        const position = new sharedPb.AllStreamPosition()
          .setCommitPosition(result.last.position.toString())
          .setPreparePosition(result.last.position.toString());
        resp.setSuccess(
          new BatchAppendResp.Success().setCurrentRevision(result.last.revision.toString()).setPosition(position),
        );
      }
      call.write(resp);
    };

    call.on('data', (req: BatchAppendReq) => {
      if (failed) return;
      const correlation = req.getCorrelationId();
      const key = correlation ? Buffer.from(correlation.serializeBinary()).toString('base64') : '';
      const options = req.getOptions();
      if (options) {
        if (!options.hasStreamIdentifier()) {
          return respond(correlation, undefined, {
            error: batchBadRequest('Required field StreamIdentifier not set.'),
          });
        }
        if (!pending.has(key)) {
          const identifier = options.getStreamIdentifier()!;
          pending.set(key, {
            identifier,
            stream: streamName(identifier),
            expected: expectedOfBatch(options),
            events: [],
            size: 0,
          });
        }
      }
      const write = pending.get(key);
      if (!write) return; // an append already answered (refused) or never opened: its later requests are ignored

      for (const message of req.getProposedMessagesList()) {
        const taken = takeIn(message, settings);
        if ('refused' in taken) {
          pending.delete(key);
          const r = taken.refused;
          const error =
            'missing' in r
              ? batchBadRequest(`The given key '${r.missing}' was not present in the dictionary.`)
              : batchMaxAppendEventSizeExceeded();
          return respond(correlation, write.identifier, { error });
        }
        write.size += taken.size;
        write.events.push(taken.event);
      }
      // The size is checked once per request, over everything received so far for this append.
      if (write.size > settings.maxAppendSize) {
        pending.delete(key);
        return respond(correlation, write.identifier, { error: batchMaxAppendSizeExceeded(settings.maxAppendSize) });
      }
      if (!req.getIsFinal()) return;

      pending.delete(key);
      settings.counters.batchAppend += 1;
      if (settings.faults.failAppend?.(write.stream)) {
        failed = true;
        call.emit('error', serverNotReady());
        return;
      }
      const outcome = commit(log, write.stream, write.expected, write.events);
      if (outcome.kind === 'wrong_expected_version') {
        return respond(correlation, write.identifier, {
          error: batchWrongExpectedVersion(outcome.current, write.expected),
        });
      }
      const last = outcome.kind === 'idempotent' ? outcome.last : outcome.written;
      if (!last)
        return respond(correlation, write.identifier, {
          nothingWritten: BigInt(log.stream(write.stream)?.length ?? 0) - 1n,
        });
      respond(correlation, write.identifier, { last });
    });
    call.on('error', () => {});
    call.on('end', () => {
      if (!failed) call.end();
    });
  };
}
