// The write gate of a process's command runner. A `MaintenanceStarted` event in the log closes
// it (every process hears of it from its own log subscription): from then on an append is
// refused with 503 `maintenance` and `Retry-After`, while reads go on. Appends already past the
// gate are counted; once none is left the process is read-only, which its health routes report
// as `maintenance.read_only`, and the sidecar waits for that before it takes the snapshot, so the
// snapshot holds every write that was accepted.

import { DomainError } from '../../domain/shared/decider.ts';
import { MAINTENANCE_EXEMPT_TYPES } from '../../domain/updates/events.ts';
import type { EventStore, Position, Subscription } from '../eventstore/port.ts';
import type { Logger } from '../logging.ts';

/** Seconds a refused writer is told to wait. */
export const MAINTENANCE_RETRY_AFTER_SECS = 30;

export class MaintenanceError extends DomainError {
  constructor() {
    super('unavailable', 'maintenance', 'the service is read-only while an update is applied; retry later', { retry_after: MAINTENANCE_RETRY_AFTER_SECS });
  }
}

export interface MaintenanceView {
  active: boolean;
  /** True once the gate is closed and no write is in flight. */
  readOnly: boolean;
  applyId: string | null;
}

export class WriteGate {
  private applyId: string | null = null;
  private closed = false;
  private inFlight = 0;
  private subscription: Subscription | null = null;
  private readonly closedListeners = new Set<() => void>();

  view(): MaintenanceView {
    return { active: this.closed, readOnly: this.closed && this.inFlight === 0, applyId: this.applyId };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Pass the gate with these event types: returns the function to call once the append is
   * done. Throws MaintenanceError while closed, unless every type is the updater's own.
   */
  enter(types: readonly string[]): () => void {
    if (this.closed && !types.every((t) => MAINTENANCE_EXEMPT_TYPES.includes(t))) throw new MaintenanceError();
    this.inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight--;
    };
  }

  /** For tests and the log subscription: open or close the gate. */
  set(active: boolean, applyId: string | null): void {
    this.closed = active;
    this.applyId = active ? applyId : null;
    if (active) for (const listener of this.closedListeners) listener();
  }

  /** Background writers (update checks, sweeps) pause while closed: they ask before writing. */
  onClose(listener: () => void): () => void {
    this.closedListeners.add(listener);
    return () => this.closedListeners.delete(listener);
  }

  /**
   * Follow the log's maintenance events. The state at the time of the call is read before this
   * returns (a process started mid-maintenance never accepts a write), then a subscription follows.
   */
  async watch(store: Pick<EventStore, 'subscribe' | 'readAll'>, log: Logger): Promise<void> {
    const filter = { eventTypes: ['MaintenanceStarted', 'MaintenanceEnded'] };
    let after: Position | 'start' = 'start';
    for (;;) {
      const batch = await store.readAll({ after, filter, limit: 500 });
      if (!batch.length) break;
      const last = batch.at(-1)!;
      this.set(last.type === 'MaintenanceStarted', String(last.data.apply_id ?? ''));
      after = last.position;
    }
    const subscription = store.subscribe({ after, filter });
    this.subscription = subscription;
    void (async () => {
      try {
        for await (const event of subscription) {
          const active = event.type === 'MaintenanceStarted';
          if (active !== this.closed) log.info(active ? 'maintenance_started' : 'maintenance_ended', { apply_id: event.data.apply_id });
          this.set(active, String(event.data.apply_id ?? ''));
        }
      } catch (error) {
        log.error('maintenance_watch_failed', { error: (error as Error).message });
      }
    })();
  }

  async close(): Promise<void> {
    await this.subscription?.close();
    this.subscription = null;
  }
}
