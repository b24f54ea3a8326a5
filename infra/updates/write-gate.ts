// The write gate of a process's command runner. A `MaintenanceStarted` event in the log closes
// it (every process hears of it: the gate follows the log as a processor of scope `each`,
// `writeGateProcessor`, which the platform registers with its engine): from then on an append is
// refused with 503 `maintenance` and `Retry-After`, while reads go on. Appends already past the
// gate are counted; once none is left the process is read-only, which its health routes report
// as `maintenance.read_only`, and the sidecar waits for that before it takes the snapshot, so the
// snapshot holds every write that was accepted.
//
// A process started mid-maintenance must never accept a write: the processor's `reconcile` reads
// the last maintenance event of the log before it follows the log from the head it took first,
// and the platform waits for it (`engine.whenLive`) before it serves.

import { DomainError } from '../../domain/shared/decider.ts';
import { MAINTENANCE_EXEMPT_TYPES } from '../../domain/updates/events.ts';
import type { DomainEvent } from '../../domain/shared/decider.ts';
import type { EventStore, Position, RecordedEvent } from '../eventstore/port.ts';
import type { Logger } from '../logging.ts';
import { defineReactor } from '../processors/reactor.ts';

/** Seconds a refused writer is told to wait. */
export const MAINTENANCE_RETRY_AFTER_SECS = 30;

export class MaintenanceError extends DomainError {
  constructor() {
    super('unavailable', 'maintenance', 'the service is read-only while an update is applied; retry later', {
      retry_after: MAINTENANCE_RETRY_AFTER_SECS,
    });
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

  /** For tests and the processor: open or close the gate. */
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

  /** The gate as the log's maintenance events leave it (the last one decides). */
  follow(event: Pick<RecordedEvent, 'type' | 'data'>, log: Logger | null): void {
    const active = event.type === 'MaintenanceStarted';
    if (log && active !== this.closed)
      log.info(active ? 'maintenance_started' : 'maintenance_ended', { apply_id: event.data.apply_id });
    this.set(active, String(event.data.apply_id ?? ''));
  }
}

const MAINTENANCE_TYPES = ['MaintenanceStarted', 'MaintenanceEnded'] as const;
type MaintenanceEvent = DomainEvent<(typeof MAINTENANCE_TYPES)[number], Record<string, unknown>>;

export const WRITE_GATE = 'write_gate';

/**
 * The gate's processor: in every process (each has its gate), reconciled from the log's last
 * maintenance event (one before the process started counts), then following the log.
 */
export const writeGateProcessor = (gate: WriteGate, store: Pick<EventStore, 'readAll'>, log: Logger) =>
  defineReactor<MaintenanceEvent>({
    name: WRITE_GATE,
    handles: MAINTENANCE_TYPES,
    scope: 'each',
    async reconcile() {
      const filter = { eventTypes: [...MAINTENANCE_TYPES] };
      let after: Position | 'start' = 'start';
      for (;;) {
        const batch = await store.readAll({ after, filter, limit: 500 });
        if (!batch.length) break;
        gate.follow(batch.at(-1)!, null);
        after = batch.at(-1)!.position;
      }
    },
    async react(events) {
      for (const event of events) gate.follow(event, log);
    },
  });
