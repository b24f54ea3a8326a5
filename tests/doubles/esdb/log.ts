// TEST DOUBLE (see ../esdb-test-server.ts): the double's in-memory transaction log.
//
// Positions follow the server's single-stream writes (kurrent-io/KurrentDB
// src/EventStore.Core/Services/Storage/StorageWriterService.cs, WriteEvents: every event is written
// as its own prepare flagged Data|IsCommitted|TransactionBegin|TransactionEnd; and
// Services/Storage/ReaderIndex/AllReader.cs, which reads such a prepare back with commit position =
// its own log position): for every event commit == prepare == the event's own log position, and
// events of one append do not share a commit position. Positions are byte offsets, so they grow by
// each record's size and have gaps.

import { randomUUID } from 'node:crypto';

export interface StoredEvent {
  stream: string;
  revision: bigint;
  id: string;
  type: string;
  /** The server keeps only "is JSON" and answers `application/json` or `application/octet-stream`. */
  isJson: boolean;
  data: Uint8Array;
  metadata: Uint8Array;
  created: bigint; // .NET ticks (100 ns) since the Unix epoch, as the server sends `created`
  /** Log position: commit and prepare position alike. */
  position: bigint;
}

export type ProposedEvent = Pick<StoredEvent, 'id' | 'type' | 'isJson' | 'data' | 'metadata'>;

/** Where an event id was last written, as the server's committed-events cache remembers it. */
export interface CachedId {
  stream: string;
  revision: bigint;
}

/**
 * The server's memory of recently committed event ids (IndexWriter's `_committedEvents`, bounded by
 * ESConsts.CommitedEventsMemCacheLimit = 8 MiB, Settings/ESConsts.cs): idempotency of `any` and
 * `stream_exists` appends consults only this. Bounded here by a number of entries; the oldest go first.
 */
class IdCache {
  private readonly entries = new Map<string, CachedId>();
  constructor(private readonly capacity: number) {}

  get(id: string): CachedId | undefined {
    return this.entries.get(id);
  }

  put(id: string, entry: CachedId): void {
    this.entries.delete(id); // a re-written id is remembered at its newest place (PutRecord, throwOnDuplicate: false)
    this.entries.set(id, entry);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

// A node's first records (chunk header, epoch) come before any client event.
const FIRST_POSITION = 1_024n;

/** The log: every event in `$all` order, and each stream's events by revision. */
export class MemoryLog {
  readonly all: StoredEvent[] = [];
  readonly recentIds: IdCache;
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly listeners = new Set<() => void>();
  private nextPosition = FIRST_POSITION;

  constructor(idCacheSize: number) {
    this.recentIds = new IdCache(idCacheSize);
  }

  stream(name: string): StoredEvent[] | undefined {
    return this.streams.get(name);
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  write(stream: string, proposed: ProposedEvent[]): StoredEvent[] {
    const events = this.streams.get(stream) ?? [];
    this.streams.set(stream, events);
    const created = BigInt(Date.now()) * 10_000n;
    const written = proposed.map((p) => {
      const e: StoredEvent = { ...p, stream, revision: BigInt(events.length), created, position: this.nextPosition };
      // A prepare record's size on disk, roughly: header, stream name, type, data and metadata.
      this.nextPosition += BigInt(90 + stream.length + 2 * p.type.length + p.data.length + p.metadata.length);
      events.push(e);
      this.all.push(e);
      this.recentIds.put(e.id, { stream, revision: e.revision });
      return e;
    });
    for (const listener of [...this.listeners]) listener();
    return written;
  }

  /** A system write (the node's own streams), as the server's services append them. */
  writeSystem(stream: string, type: string, data: unknown): StoredEvent {
    const json = new TextEncoder().encode(JSON.stringify(data));
    return this.write(stream, [{ id: randomUUID(), type, isJson: true, data: json, metadata: new Uint8Array() }])[0]!;
  }
}

/**
 * What a fresh single node writes before any client does: its epoch record, the default users
 * created by the user management service (`$users` lists them, `$user-<login>` holds each), and
 * the stream metadata it sets on them. Readers of the log must skip all of it.
 */
export function seedSystemEvents(log: MemoryLog): void {
  log.writeSystem('$epoch-information', '$epoch', {
    epochNumber: 0,
    epochId: randomUUID(),
    leaderInstanceId: randomUUID(),
  });
  for (const login of ['admin', 'ops']) {
    log.writeSystem('$users', '$UserCreated', login);
    log.writeSystem(`$user-${login}`, '$user', {
      loginName: login,
      fullName: login === 'admin' ? 'Event Store Administrator' : 'Event Store Operations',
      groups: [`$${login}s`],
    });
  }
  log.writeSystem('$$$users', '$metadata', { $acl: { $r: '$admins', $w: '$admins' } });
}

/**
 * The monitoring service's stats writer: a `$statsCollected` event in `$stats-<node endpoint>`
 * every StatsPeriodSec (30 s by default; Services/Monitoring/MonitoringService.cs).
 */
export function startStatsWriter(log: MemoryLog, intervalMs: number, endpoint: string): () => void {
  const timer = setInterval(() => {
    log.writeSystem(`$stats-${endpoint}`, '$statsCollected', {
      'proc-startTime': new Date().toISOString(),
      'sys-freeMem': 1,
    });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
