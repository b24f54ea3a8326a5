// The delivery sweep of the orchestration service: every ORCH_UPDATER_DELIVERY_CHECK_SECS (3600;
// 0 off) it asks the sidecar which of the running release's requirements are present, and
// records `UpdateDeliveryChecked` when the answer changed, so an operator who fixed the compose
// file sees `delivery_incomplete` clear without another apply.

import type { UpdateEvent } from '../../domain/updates/events.ts';
import { DELIVERY_STREAM } from '../../domain/updates/streams.ts';
import type { Clock } from '../clock.ts';
import type { CommandRunner } from '../commands.ts';
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../logging.ts';
import type { SidecarClient } from './sidecar-client.ts';
import type { WriteGate } from './write-gate.ts';

type Data = Extract<UpdateEvent, { type: 'UpdateDeliveryChecked' }>['data'];

export class DeliverySweep {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly d: {
      sidecar: SidecarClient;
      commands: CommandRunner;
      db: Pool;
      clock: Clock;
      log: Logger;
      gate?: WriteGate | null;
      intervalSecs: number;
    },
  ) {}

  /** One sweep; returns whether it recorded a change. */
  async sweep(): Promise<boolean> {
    if (this.d.gate?.isClosed) return false;
    const answer = (await this.d.sidecar.delivery()) as {
      apply_id: string | null;
      version: string | null;
      requirements: Data['requirements'];
    };
    const { rows } = await this.d.db.query<{ requirements: Data['requirements']; apply_id: string | null }>(
      'SELECT requirements, apply_id FROM update_delivery WHERE id = 1',
    );
    const same =
      rows[0] &&
      rows[0].apply_id === answer.apply_id &&
      JSON.stringify(rows[0].requirements) === JSON.stringify(answer.requirements);
    if (same) return false;
    await this.d.commands.record(
      DELIVERY_STREAM,
      {
        type: 'UpdateDeliveryChecked',
        data: {
          apply_id: answer.apply_id,
          to_version: answer.version,
          checked_at: this.d.clock.now().toISOString(),
          requirements: answer.requirements,
        },
      },
      { actor: { kind: 'system', id: 'delivery-sweep' }, correlationId: null },
    );
    return true;
  }

  start(): void {
    if (this.d.intervalSecs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.sweep().catch((error) => this.d.log.warn('delivery_sweep_failed', { error: (error as Error).message }));
    }, this.d.intervalSecs * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
