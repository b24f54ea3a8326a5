// What the managed-updates routes of both services read: the status, the sidecar's own state,
// the last delivery check and an apply's progress (./commands.ts runs the checks and applies).

import { isTerminal, phaseOf } from '../../../domain/updates/apply.ts';
import { isNewer } from '../../../domain/updates/manifest.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { SidecarUnavailable, type ApplyProgress } from '../../../infra/updates/sidecar-client.ts';
import { applyById, channelHead, lastDelivery, type ApplyRow } from '../../../projections/updates.ts';
import type { UpdateDeps } from './commands.ts';

export async function updateStatus(deps: UpdateDeps) {
  const { checker, service } = deps.updates;
  const head = await channelHead(deps.db, service);
  const latest = head?.latest_version ?? null;
  return {
    current_version: deps.version,
    channel: head?.channel ?? null,
    latest_version: latest,
    update_available: latest !== null && isNewer(latest, deps.version),
    checked_at: head?.checked_at.toISOString() ?? null,
    last_error: checker.enabled
      ? head?.result === 'failed'
        ? head.last_error
        : null
      : { code: 'update_checks_off', message: 'no manifest host is configured, so no update check runs' },
    checks_enabled: checker.enabled,
    background_check: checker.background,
    check_interval_secs: checker.background ? checker.intervalSecs : null,
    next_check_at: checker.background ? (checker.nextCheckAt?.toISOString() ?? null) : null,
  };
}

/** The sidecar's own state, or `reachable: false` with the reason. */
export async function sidecarState(deps: UpdateDeps) {
  try {
    const s = await deps.updates.sidecar.status();
    return {
      url: deps.updates.sidecar.baseUrl,
      reachable: true,
      version: (s.version as string) ?? null,
      apply_in_progress: (s.apply_in_progress as string) ?? null,
      frozen: (s.frozen as string) ?? null,
      error: null,
    };
  } catch (error) {
    return {
      url: deps.updates.sidecar.baseUrl,
      reachable: false,
      version: null,
      apply_in_progress: null,
      frozen: null,
      error: (error as Error).message,
    };
  }
}

export async function deliveryState(db: Pool) {
  const d = await lastDelivery(db);
  if (!d) return { status: 'unknown' as const, checked_at: null, apply_id: null, requirements: [] };
  return {
    status: d.requirements.every((r) => r.status === 'present') ? ('complete' as const) : ('incomplete' as const),
    checked_at: d.checked_at.toISOString(),
    apply_id: d.apply_id,
    requirements: d.requirements,
  };
}

export interface ApplyDetail extends ApplyProgress {
  requested_by: string | null;
  events: {
    seq: number;
    step: string;
    state: string;
    phase: string | null;
    at: string;
    detail?: Record<string, unknown>;
  }[];
}

function fromRow(row: ApplyRow): ApplyDetail {
  return {
    apply_id: row.apply_id,
    state: row.state,
    phase: phaseOf(row.state),
    outcome: row.outcome,
    error: row.error,
    from_version: row.from_version,
    to_version: row.to_version,
    requested_by: row.requested_by,
    started_at: row.started_at.toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
    events: row.steps.map((s) => ({ ...s, phase: phaseOf(s.state) })),
  };
}

/**
 * An apply's progress: from the log once it ended (the journal is there), else live from the
 * sidecar; null when neither knows it.
 */
export async function applyDetail(deps: UpdateDeps, applyId: string): Promise<ApplyDetail | null> {
  const row = await applyById(deps.db, applyId);
  if (row && isTerminal(row.state)) return fromRow(row);
  if (!row && !/^[0-9a-f-]{36}$/i.test(applyId)) return null;
  try {
    const live = await deps.updates.sidecar.apply(applyId);
    if (live) {
      const events =
        ((await deps.updates.sidecar.events(applyId))?.events as {
          seq: number;
          type: string;
          state: string;
          at: string;
          data: Record<string, unknown>;
        }[]) ?? [];
      return {
        apply_id: live.apply_id,
        state: live.state,
        phase: phaseOf(live.state),
        outcome: live.outcome,
        error: live.error,
        from_version: live.from_version,
        to_version: live.to_version,
        requested_by: (live.requested_by as string) ?? row?.requested_by ?? null,
        started_at: live.started_at,
        ended_at: live.ended_at,
        events: events.map((e) => ({
          seq: e.seq,
          step: e.type,
          state: e.state,
          phase: phaseOf(e.state),
          at: e.at,
          ...(Object.keys(e.data ?? {}).length ? { detail: e.data } : {}),
        })),
      };
    }
  } catch (error) {
    if (!(error instanceof SidecarUnavailable)) throw error;
  }
  return row ? fromRow(row) : null;
}
