// Turns a batch reader into a Subscription: catch up batch by batch from a position, then
// wait for a wake-up and read again. Each batch starts strictly after the last event
// delivered, so nothing is skipped or repeated.

import type { RecordedEvent, Subscription } from './port.ts';
import type { Position } from './position.ts';

export interface BatchSource {
  start(): Promise<Position>;
  /** The next events after `after`, and where the following read resumes (at or past the last event). */
  next(after: Position): Promise<{ events: RecordedEvent[]; resume: Position }>;
  /** Events exist past `after` that readers cannot see yet (a transaction still running). */
  heldBack(after: Position): Promise<boolean>;
  /**
   * Resolve on the next append, or after `timeoutMs` at the latest; at once when an append was
   * seen after `since` (a `wakeups()` value taken before the last read). `heldBack`: the reader
   * waits on the visibility gate, so the end of any transaction of this process wakes it too.
   */
  wake(timeoutMs: number, since?: number, heldBack?: boolean): Promise<void>;
  /** How many wake-ups (appends, notifications) this source has seen: read before a batch, so one during the read is not lost. */
  wakeups?(): number;
  /** The subscription closed: release what the source holds. */
  close?(): void;
}

const IDLE_POLL_MS = 1000; // a safety net: notifications only speed things up
const HELD_BACK_POLL_MS = 5;

export function subscriptionFromBatches(source: BatchSource): Subscription {
  let closed = false;
  let signalClose: () => void = () => {};
  const closing = new Promise<void>((resolve) => (signalClose = resolve));

  async function* run(): AsyncGenerator<RecordedEvent> {
    let after = await Promise.race([source.start(), closing.then(() => null)]);
    while (!closed && after) {
      const seen = source.wakeups?.();
      const batch = await Promise.race([source.next(after), closing.then(() => null)]);
      if (!batch) return;
      for (const event of batch.events) {
        if (closed) return;
        yield event;
        after = event.position;
      }
      after = batch.resume;
      if (batch.events.length > 0 || closed) continue;
      const held = await source.heldBack(after);
      await Promise.race([source.wake(held ? HELD_BACK_POLL_MS : IDLE_POLL_MS, seen, held), closing]);
    }
  }

  const iterator = run();
  return {
    [Symbol.asyncIterator]: () => iterator,
    async close() {
      closed = true;
      source.close?.();
      signalClose();
      await iterator.return(undefined);
    },
  };
}
