// Managed updates' read models: the channel head per service (`update_checks`), the applies
// (`update_applies`), whether maintenance is on (`update_maintenance`) and the delivery sweep's
// last answer (`update_delivery`).

import type { ApplyError } from '../domain/updates/apply.ts';
import { higherOf } from '../domain/updates/manifest.ts';
import type { UpdateEvent, UpdateService } from '../domain/updates/events.ts';
import type { Pool } from '../infra/db/pool.ts';
import { defineProjection } from '../infra/processors/projection.ts';

export const updateChecksProjection = defineProjection<UpdateEvent>({
  name: 'update_checks',
  handles: ['UpdateCheckCompleted'],
  tables: ['update_checks'],
  async apply(event, tx) {
    if (event.type !== 'UpdateCheckCompleted') return;
    const d = event.data;
    const { rows } = await tx.query<{ highest_version: string | null }>(
      'SELECT highest_version FROM update_checks WHERE service = $1',
      [d.service],
    );
    const before = rows[0]?.highest_version ?? null;
    const highest = d.result === 'verified' && d.latest_version ? higherOf(before, d.latest_version) : before;
    // A failed check keeps the last verified head; an empty channel (404) has none.
    await tx.query(
      `
      INSERT INTO update_checks (service, channel, host, checked_at, result, last_error, latest_version, envelope, highest_version)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
      ON CONFLICT (service) DO UPDATE SET channel = $2, host = $3, checked_at = $4, result = $5, last_error = $6,
        latest_version = CASE WHEN $5 = 'failed' AND update_checks.channel = $2 THEN update_checks.latest_version ELSE $7 END,
        envelope = CASE WHEN $5 = 'failed' AND update_checks.channel = $2 THEN update_checks.envelope ELSE $8 END,
        highest_version = $9`,
      [d.service, d.channel, d.host, d.checked_at, d.result, d.error, d.latest_version, d.envelope, highest],
    );
  },
});

export const updateAppliesProjection = defineProjection<UpdateEvent>({
  name: 'update_applies',
  handles: ['UpdateApplyRequested', 'UpdateApplyRejected', 'UpdateApplyJournaled'],
  tables: ['update_applies'],
  async apply(event, tx) {
    switch (event.type) {
      case 'UpdateApplyRequested': {
        const d = event.data;
        await tx.query(
          `INSERT INTO update_applies (apply_id, service, requested_by, from_version, to_version, state, started_at)
          VALUES ($1, $2, $3, $4, $5, 'requested', $6) ON CONFLICT (apply_id) DO NOTHING`,
          [d.apply_id, d.service, d.requested_by, d.from_version, d.target_version, d.at],
        );
        return;
      }
      case 'UpdateApplyRejected':
        // Refused by the sidecar (another apply runs, or it is frozen): no apply took place.
        await tx.query(`DELETE FROM update_applies WHERE apply_id = $1 AND state = 'requested'`, [event.data.apply_id]);
        return;
      case 'UpdateApplyJournaled': {
        const d = event.data;
        const step = {
          seq: d.seq,
          step: d.step,
          state: d.state,
          at: d.at,
          ...(Object.keys(d.detail).length ? { detail: d.detail } : {}),
        };
        if (d.step === 'apply_started') {
          await tx.query(
            `INSERT INTO update_applies (apply_id, service, requested_by, from_version, to_version, state, started_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (apply_id) DO NOTHING`,
            [
              d.apply_id,
              d.detail.source ?? 'unknown',
              d.detail.requested_by ?? 'unknown',
              d.detail.from_version ?? '',
              d.detail.to_version ?? '',
              d.state,
              d.at,
            ],
          );
        }
        await tx.query(
          `UPDATE update_applies SET state = $2, steps = steps || $3::jsonb,
            error = COALESCE($4::jsonb, error),
            outcome = CASE WHEN $5 THEN $6 ELSE outcome END,
            ended_at = CASE WHEN $5 THEN $7::timestamptz ELSE ended_at END
          WHERE apply_id = $1`,
          [
            d.apply_id,
            d.state,
            JSON.stringify([step]),
            d.detail.error ? JSON.stringify(d.detail.error) : null,
            d.step === 'apply_completed',
            d.detail.outcome ?? null,
            d.at,
          ],
        );
        return;
      }
    }
  },
});

export const updateMaintenanceProjection = defineProjection<UpdateEvent>({
  name: 'update_maintenance',
  handles: ['MaintenanceStarted', 'MaintenanceEnded'],
  tables: ['update_maintenance'],
  async apply(event, tx) {
    if (event.type === 'MaintenanceStarted') {
      await tx.query(
        `INSERT INTO update_maintenance (id, active, apply_id, started_at, ended_at) VALUES (1, true, $1, $2, NULL)
        ON CONFLICT (id) DO UPDATE SET active = true, apply_id = $1, started_at = $2, ended_at = NULL`,
        [event.data.apply_id, event.data.at],
      );
    } else if (event.type === 'MaintenanceEnded') {
      await tx.query('UPDATE update_maintenance SET active = false, ended_at = $1 WHERE id = 1', [event.data.at]);
    }
  },
});

export const updateDeliveryProjection = defineProjection<UpdateEvent>({
  name: 'update_delivery',
  handles: ['UpdateDeliveryChecked'],
  tables: ['update_delivery'],
  async apply(event, tx) {
    if (event.type !== 'UpdateDeliveryChecked') return;
    const d = event.data;
    await tx.query(
      `INSERT INTO update_delivery (id, apply_id, to_version, checked_at, requirements) VALUES (1, $1, $2, $3, $4)
      ON CONFLICT (id) DO UPDATE SET apply_id = $1, to_version = $2, checked_at = $3, requirements = $4`,
      [d.apply_id, d.to_version, d.checked_at, JSON.stringify(d.requirements)],
    );
  },
});

export const updateProjections = [
  updateChecksProjection,
  updateAppliesProjection,
  updateMaintenanceProjection,
  updateDeliveryProjection,
];

export interface ChannelHeadRow {
  service: UpdateService;
  channel: string;
  host: string;
  checked_at: Date;
  result: 'verified' | 'empty' | 'failed';
  last_error: { code: string; message: string } | null;
  latest_version: string | null;
  envelope: Record<string, unknown> | null;
  highest_version: string | null;
}

export async function channelHead(db: Pool, service: UpdateService): Promise<ChannelHeadRow | null> {
  const { rows } = await db.query<ChannelHeadRow>('SELECT * FROM update_checks WHERE service = $1', [service]);
  return rows[0] ?? null;
}

export interface ApplyRow {
  apply_id: string;
  service: string;
  requested_by: string;
  from_version: string;
  to_version: string;
  state: string;
  outcome: string | null;
  error: ApplyError | null;
  steps: { seq: number; step: string; state: string; at: string; detail?: Record<string, unknown> }[];
  started_at: Date;
  ended_at: Date | null;
}

export async function applyById(db: Pool, applyId: string): Promise<ApplyRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(applyId)) return null;
  const { rows } = await db.query<ApplyRow>('SELECT * FROM update_applies WHERE apply_id = $1', [applyId]);
  return rows[0] ?? null;
}

export async function listApplies(
  db: Pool,
  limit: number,
  offset: number,
): Promise<{ rows: ApplyRow[]; total: number }> {
  const [page, count] = await Promise.all([
    db.query<ApplyRow>('SELECT * FROM update_applies ORDER BY started_at DESC, apply_id LIMIT $1 OFFSET $2', [
      limit,
      offset,
    ]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM update_applies'),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}

export async function maintenanceState(
  db: Pool,
): Promise<{ active: boolean; apply_id: string | null; started_at: Date | null }> {
  const { rows } = await db.query('SELECT active, apply_id, started_at FROM update_maintenance WHERE id = 1');
  return rows[0] ?? { active: false, apply_id: null, started_at: null };
}

export interface DeliveryRow {
  apply_id: string | null;
  to_version: string | null;
  checked_at: Date;
  requirements: {
    id: string;
    kind: string;
    target: string;
    status: 'present' | 'missing' | 'unverifiable';
    action: string;
  }[];
}

export async function lastDelivery(db: Pool): Promise<DeliveryRow | null> {
  const { rows } = await db.query<DeliveryRow>(
    'SELECT apply_id, to_version, checked_at, requirements FROM update_delivery WHERE id = 1',
  );
  return rows[0] ?? null;
}
