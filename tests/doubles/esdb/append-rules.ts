// TEST DOUBLE (see ../esdb-test-server.ts): how the server decides an append, shared by the Append
// and BatchAppend paths.

import grpc from '@grpc/grpc-js';
import type { MemoryLog, StoredEvent } from './log.ts';

export type Expected = { kind: 'any' | 'no_stream' | 'stream_exists' } | { kind: 'revision'; revision: bigint };

export type Decision =
  { kind: 'write' } | { kind: 'idempotent'; last: StoredEvent } | { kind: 'wrong_expected_version'; current: bigint }; // current: -1n when the stream does not exist

/**
 * The commit check of Services/Storage/ReaderIndex/IndexWriter.cs (CheckCommit):
 * - `stream_exists` on a missing stream, an exact revision other than the current one, or
 *   `no_stream` on an existing stream fail with the stream's current revision;
 * - `any` / `stream_exists`: each id is looked up in the bounded cache of recently committed ids
 *   only. All found in this stream: the append is a retry, answered with the last one's position
 *   and nothing written. The first not found: a new append, written, even if those ids were written
 *   long ago (the cache forgot them: duplicates). Found, then not: "corrupted idempotency", which
 *   the server answers as a wrong expected version;
 * - an explicit revision or `no_stream` behind the stream's end: the ids must stand exactly at the
 *   revisions after the expected one (cache or index); then a retry, else a wrong expected version.
 */
export function decide(log: MemoryLog, stream: string, expected: Expected, ids: string[]): Decision {
  const events = log.stream(stream) ?? [];
  const current = BigInt(events.length) - 1n;
  const wrong: Decision = { kind: 'wrong_expected_version', current };

  if (expected.kind === 'stream_exists' && current < 0n) return wrong;
  if (expected.kind === 'any' || expected.kind === 'stream_exists') {
    let last: bigint | null = null;
    for (const id of ids) {
      const cached = log.recentIds.get(id);
      if (!cached || cached.stream !== stream) return last === null ? { kind: 'write' } : wrong;
      last = cached.revision;
    }
    return last === null ? { kind: 'write' } : { kind: 'idempotent', last: events[Number(last)]! };
  }

  const expectedRevision = expected.kind === 'revision' ? expected.revision : -1n; // no_stream is revision -1
  if (expectedRevision < current) {
    let revision = expectedRevision;
    for (const id of ids) {
      revision += 1n;
      const cached = log.recentIds.get(id);
      const atRevision = events[Number(revision)];
      const same = (cached?.stream === stream && cached.revision === revision) || atRevision?.id === id;
      if (!same) return wrong; // first id elsewhere: a conflict; a later one: corrupted idempotency
    }
    if (revision === expectedRevision) return wrong; // nothing proposed
    return { kind: 'idempotent', last: events[Number(revision)]! };
  }
  if (expectedRevision > current) return wrong;
  return { kind: 'write' };
}

/**
 * What counts towards MaxAppendSize. Up to 24.10.3 the server summed
 * `data?.Length ?? 0 + metadata?.Length ?? 0 + eventType.Length * 2`, which C# parses as the
 * data's length only (Streams.Append.cs / Streams.BatchAppend.cs of oss-v23.10.8); from 24.10.4/5
 * on, Data/Event.cs SizeOnDisk counts data + metadata + 2 × the type's UTF-16 characters, and each
 * event is also held to MaxAppendEventSize (default int.MaxValue: no limit).
 */
export type SizeRule = 'data-only' | 'v24.10.5';

export function eventSize(rule: SizeRule, type: string, data: Uint8Array, metadata: Uint8Array): number {
  return rule === 'data-only' ? data.length : data.length + metadata.length + type.length * 2;
}

/** The Append path's errors, as Services/Transport/Grpc/RpcExceptions.cs raises them (status + trailers). */
export function rpcError(code: grpc.status, details: string, trailers: Record<string, string> = {}): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(trailers)) metadata.set(key, value);
  return Object.assign(new Error(details), { code, details, metadata });
}

export const maxAppendSizeExceeded = (max: number) =>
  rpcError(grpc.status.INVALID_ARGUMENT, `Maximum Append Size of ${max} Exceeded.`, {
    exception: 'maximum-append-size-exceeded',
    'maximum-append-size': String(max),
  });

export const maxAppendEventSizeExceeded = (eventId: string, size: number, max: number) =>
  rpcError(
    grpc.status.INVALID_ARGUMENT,
    `Event with Id: ${eventId}, Size: ${size}, exceeds Maximum Append Event Size of ${max}.`,
    {
      exception: 'maximum-append-event-size-exceeded',
      'maximum-append-event-size': String(max),
      'event-id': eventId,
      'proposed-append-event-size': String(size),
    },
  );

export const requiredMetadataMissing = (property: string) =>
  rpcError(grpc.status.INVALID_ARGUMENT, `Required Metadata Property '${property}' is missing`, {
    exception: 'missing-required-metadata-property',
    'required-metadata-properties': 'type,content-type',
  });

/** NotHandled(NotReady) of a node that cannot take writes (RpcExceptions.ServerNotReady). */
export const serverNotReady = () => rpcError(grpc.status.UNAVAILABLE, 'Server Is Not Ready');
