// What the sidecar writes into the log. It appends without waiting for projections (the
// services may be down mid-apply) and without the write gate (maintenance is its own doing).
// Journal entries go in under their own ids as one append to `platform.update_journal-<apply id>`: a
// repeated append of the same entries is a no-op, so an apply retried after a crash or a restore
// lands once, and `orchard replay` shows every apply.

import type { UpdateEvent } from '../../domain/updates/events.ts';
import { updateJournalStream, MAINTENANCE_STREAM, DELIVERY_STREAM } from '../../domain/updates/streams.ts';
import type { JournalEntry } from '../../domain/updates/apply.ts';
import { toAppend } from '../commands.ts';
import { WrongExpectedRevisionError, type EventStore } from '../eventstore/port.ts';

const CONTEXT = { actor: { kind: 'service' as const, id: 'updater-sidecar' }, correlationId: null };

export class UpdaterLog {
  constructor(private readonly store: EventStore) {}

  private async append(stream: string, event: UpdateEvent): Promise<void> {
    await this.store.append(stream, [toAppend(event, CONTEXT)], { expected: 'any' });
  }

  maintenanceStarted(applyId: string, at: string): Promise<void> {
    return this.append(MAINTENANCE_STREAM, {
      type: 'MaintenanceStarted',
      data: { apply_id: applyId, reason: 'update_apply', at },
    });
  }

  maintenanceEnded(applyId: string, at: string): Promise<void> {
    return this.append(MAINTENANCE_STREAM, { type: 'MaintenanceEnded', data: { apply_id: applyId, at } });
  }

  deliveryChecked(data: Extract<UpdateEvent, { type: 'UpdateDeliveryChecked' }>['data']): Promise<void> {
    return this.append(DELIVERY_STREAM, { type: 'UpdateDeliveryChecked', data });
  }

  /** Every journal entry not yet in the log, under the entry's id; earlier ones are kept as they are. */
  async journal(entries: JournalEntry[]): Promise<void> {
    if (!entries.length) return;
    const stream = updateJournalStream(entries[0]!.apply_id);
    const existing = await this.store.readStream(stream);
    const have = new Set(existing.map((e) => e.id));
    const missing = entries.filter((e) => !have.has(e.id));
    if (!missing.length) return;
    const events = missing.map((e) => {
      // The envelope is in the apply's first entry; the log keeps only its version.
      const { manifest: _manifest, ...detail } = e.data;
      const event: UpdateEvent = {
        type: 'UpdateApplyJournaled',
        data: { apply_id: e.apply_id, seq: e.seq, step: e.type, state: e.state, at: e.at, detail },
      };
      return { ...toAppend(event, CONTEXT), id: e.id };
    });
    try {
      await this.store.append(stream, events, { expected: existing.length ? existing.at(-1)!.revision : 'no_stream' });
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      // Another writer (a resumed sidecar) got there first: its append holds the same ids.
    }
  }
}
