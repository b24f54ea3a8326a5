// Live delivery of the log to this instance's `/ws` sockets: one subscription to the log while
// any socket is open, fanned out to each socket by the visibility rules (./visibility.ts).
//
// Catch-up then live, with no gap and no duplicate: a socket opened with `from` (exclusive) first
// joins the live fan-out, buffering what it hears, then reads the log page by page from `from`
// until it reaches the end of what is visible, and then sends the buffered events it has not sent
// yet, all in one synchronous step, and goes live. The live subscription started at the head of
// the log when its first socket joined, and the catch-up read ends at or past it, so every event
// is covered by one of the two; positions tell the duplicates apart.
//
// Back-pressure: sends never wait. A socket whose unsent bytes pass `maxBufferedBytes`, or whose
// buffer of live events during its catch-up passes `maxPending`, is closed with 4008 and dropped;
// the others are not held back. A catch-up waits for its own socket to drain between pages.

import { LiveTail } from '../../../infra/eventstore/live-tail.ts';
import type { EventStore, RecordedEvent } from '../../../infra/eventstore/port.ts';
import { comparePositions, formatPosition, type Position } from '../../../infra/eventstore/position.ts';
import type { Logger } from '../../../infra/logging.ts';
import { mayView, visibleData, type Viewer } from './visibility.ts';

export const SLOW_CONSUMER_CLOSE = 4008;

export interface FeedLimits {
  maxBufferedBytes: number;
  maxPending: number;
}

// 8 MiB: several of the largest events (just under 1 MB each) may be in flight to a healthy socket.
export const DEFAULT_FEED_LIMITS: FeedLimits = { maxBufferedBytes: 8 * 1024 * 1024, maxPending: 10_000 };

export interface FeedSocket {
  viewer: Viewer;
  send(text: string): void;
  /** Bytes queued for the socket and not yet written. */
  bufferedAmount(): number;
  close(code: number, reason: string): void;
}

interface Member {
  socket: FeedSocket;
  live: boolean;
  pending: RecordedEvent[];
  /** The last event this socket has been given or passed over; later ones only. */
  seen: Position | null;
  closed: boolean;
}

const CATCH_UP_PAGE = 500;
const DRAIN_POLL_MS = 20;

/** Frames are shared between sockets: built once per event for admins and once for everyone else. */
const frames = new WeakMap<RecordedEvent, { admin?: string; other?: string }>();

export function frameOf(event: RecordedEvent, viewer: Viewer): string {
  let cached = frames.get(event);
  if (!cached) frames.set(event, (cached = {}));
  const variant = viewer.kind === 'admin' ? 'admin' : 'other';
  return (cached[variant] ??= JSON.stringify({
    position: formatPosition(event.position),
    stream: event.stream,
    type: event.type,
    data: visibleData(event, viewer),
    metadata: event.metadata,
    at: event.created_at.toISOString(),
  }));
}

export class LogFeed {
  private readonly members = new Set<Member>();
  private readonly tail: LiveTail;

  constructor(
    private readonly events: Pick<EventStore, 'subscribe' | 'headPosition' | 'readAll'>,
    private readonly log: Logger,
    private readonly limits: FeedLimits = DEFAULT_FEED_LIMITS,
  ) {
    this.tail = new LiveTail(events, {
      deliver: (event) => this.deliver(event),
      failed: (error) => this.interrupted(error),
      idle: () => this.members.size === 0,
    });
  }

  get connections(): number {
    return this.members.size;
  }

  /**
   * Deliver to `socket` from `from` (exclusive; null: from now on). Resolves once the socket is
   * live; returns a function that removes it.
   */
  async open(socket: FeedSocket, from: Position | null): Promise<() => void> {
    const member: Member = { socket, live: from === null, pending: [], seen: from, closed: false };
    this.members.add(member);
    const leave = () => this.leave(member);
    await this.tail.start();
    if (from !== null) await this.catchUp(member, from);
    return leave;
  }

  private leave(member: Member): void {
    member.closed = true;
    member.pending = [];
    if (this.members.delete(member) && this.members.size === 0) void this.stop();
  }

  private drop(member: Member, reason: string): void {
    if (member.closed) return;
    this.leave(member);
    // An operator sees which clients cannot keep up (and a test sees the close happen: the client
    // only reads the close frame once it reads past the backlog queued before it).
    this.log.warn('ws_slow_consumer_closed', { reason, viewer: member.socket.viewer.kind });
    member.socket.close(SLOW_CONSUMER_CLOSE, reason);
  }

  private async catchUp(member: Member, from: Position): Promise<void> {
    let after = from;
    for (;;) {
      const page = await this.events.readAll({ after, limit: CATCH_UP_PAGE });
      if (member.closed) return;
      for (const event of page) this.send(member, event);
      if (page.length < CATCH_UP_PAGE) break;
      after = page.at(-1)!.position;
      while (!member.closed && member.socket.bufferedAmount() > this.limits.maxBufferedBytes / 2) {
        await new Promise((r) => setTimeout(r, DRAIN_POLL_MS));
      }
      if (member.closed) return;
    }
    // Synchronously from here: nothing can be delivered between the last read and going live.
    member.live = true;
    const pending = member.pending;
    member.pending = [];
    for (const event of pending) this.send(member, event);
  }

  private send(member: Member, event: RecordedEvent): void {
    if (member.closed) return;
    if (member.seen && comparePositions(event.position, member.seen) <= 0) return;
    member.seen = event.position;
    if (!mayView(event, member.socket.viewer)) return;
    member.socket.send(frameOf(event, member.socket.viewer));
    if (member.socket.bufferedAmount() > this.limits.maxBufferedBytes)
      this.drop(member, 'too slow: send buffer over limit');
  }

  private deliver(event: RecordedEvent): void {
    for (const member of this.members) {
      if (member.live) this.send(member, event);
      else if (member.pending.push(event) > this.limits.maxPending)
        this.drop(member, 'too slow: catch-up fell behind the live log');
    }
  }

  private async stop(): Promise<void> {
    await this.tail.stopIfIdle();
  }

  private interrupted(error: Error): void {
    this.log.error('ws_feed_subscription_failed', { error: error.message });
    // The sockets would hear nothing more: close them; clients resume from their last position.
    for (const member of [...this.members]) {
      this.leave(member);
      member.socket.close(1011, 'live delivery interrupted');
    }
  }
}
