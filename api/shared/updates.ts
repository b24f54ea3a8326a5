// Managed updates as both services offer them (orchestration: /api/v1/admin/updates/...,
// chat: /api/admin/updates/...): the status, a check on demand, starting an apply through the
// sidecar, and an apply's progress. Each service's routes render these in their own shapes.

import { randomUUID } from 'node:crypto';
import { isTerminal, phaseOf } from '../../domain/updates/apply.ts';
import { isNewer } from '../../domain/updates/manifest.ts';
import { updateApplyStream, type UpdateService } from '../../domain/updates/events.ts';
import type { Clock } from '../../infra/clock.ts';
import type { CommandContext, CommandRunner } from '../../infra/commands.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';
import type { UpdateChecker } from '../../infra/updates/checker.ts';
import { SidecarUnavailable, type ApplyProgress, type SidecarClient } from '../../infra/updates/sidecar-client.ts';
import { applyById, channelHead, lastDelivery, type ApplyRow } from '../../projections/updates.ts';
import { ApiError, rateLimited } from './http-errors.ts';

export interface ServiceUpdates {
  service: UpdateService;
  checker: UpdateChecker;
  sidecar: SidecarClient;
}

export interface UpdateDeps {
  db: Pool;
  clock: Clock;
  commands: CommandRunner;
  limiter: RateLimiter;
  version: string;
  updates: ServiceUpdates;
}

/** `POST .../updates/check`: one a minute per service, across instances sharing the limiter. */
export const CHECK_RULE = { limit: 1, windowMs: 60_000 };

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
      ? (head?.result === 'failed' ? head.last_error : null)
      : { code: 'update_checks_off', message: 'no manifest host is configured, so no update check runs' },
    checks_enabled: checker.enabled,
    background_check: checker.background,
    check_interval_secs: checker.background ? checker.intervalSecs : null,
    next_check_at: checker.background ? checker.nextCheckAt?.toISOString() ?? null : null,
  };
}

/** The sidecar's own state, or `reachable: false` with the reason. */
export async function sidecarState(deps: UpdateDeps) {
  try {
    const s = await deps.updates.sidecar.status();
    return { url: deps.updates.sidecar.baseUrl, reachable: true, version: (s.version as string) ?? null, apply_in_progress: (s.apply_in_progress as string) ?? null, frozen: (s.frozen as string) ?? null, error: null };
  } catch (error) {
    return { url: deps.updates.sidecar.baseUrl, reachable: false, version: null, apply_in_progress: null, frozen: null, error: (error as Error).message };
  }
}

export async function deliveryState(db: Pool) {
  const d = await lastDelivery(db);
  if (!d) return { status: 'unknown' as const, checked_at: null, apply_id: null, requirements: [] };
  return {
    status: d.requirements.every((r) => r.status === 'present') ? 'complete' as const : 'incomplete' as const,
    checked_at: d.checked_at.toISOString(), apply_id: d.apply_id, requirements: d.requirements,
  };
}

export async function checkNow(deps: UpdateDeps, correlationId: string | null) {
  const { checker, service } = deps.updates;
  if (!checker.enabled) throw new ApiError(409, 'update_checks_off', 'no manifest host is configured for this service');
  const decision = await deps.limiter.consume(`updates:check:${service}`, CHECK_RULE);
  if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'one update check a minute');
  await checker.check(correlationId);
  return updateStatus(deps);
}

/**
 * Ask the sidecar to apply `target`, which must be the cached channel head and not the running
 * version. The audit entry `update_applied` is written before the sidecar is asked (maintenance
 * closes the write gate right after), and `UpdateApplyRejected` follows when it refuses.
 */
export async function startApply(deps: UpdateDeps, target: string, requestedBy: string, context: CommandContext): Promise<{ apply_id: string; state: string }> {
  const { service, sidecar } = deps.updates;
  const head = await channelHead(deps.db, service);
  const latest = head?.latest_version ?? null;
  if (!latest || !head?.envelope || target !== latest) {
    throw new ApiError(409, 'target_not_channel_head', latest ? `the channel head is ${latest}` : 'no verified release is cached for this channel; check for updates first', { head: latest });
  }
  if (target === deps.version) throw new ApiError(409, 'already_current', `version ${target} already runs`);
  let state;
  try {
    state = await sidecar.status();
  } catch (error) {
    if (error instanceof SidecarUnavailable) throw new ApiError(503, 'updater_unavailable', 'the updater sidecar cannot be reached');
    throw error;
  }
  if (state.frozen) throw new ApiError(409, 'apply_frozen', `apply ${String(state.frozen)} is frozen until an operator unfreezes it`, { apply_id: state.frozen });
  if (state.apply_in_progress) throw new ApiError(409, 'apply_in_progress', `apply ${String(state.apply_in_progress)} is in progress`, { apply_id: state.apply_in_progress });

  const applyId = randomUUID();
  const at = deps.clock.now().toISOString();
  await deps.commands.record(updateApplyStream(applyId), {
    type: 'UpdateApplyRequested',
    data: { action: 'update_applied', apply_id: applyId, service, target_version: target, from_version: deps.version, requested_by: requestedBy, at },
  }, context);
  const reject = async (code: string) => {
    await deps.commands.record(updateApplyStream(applyId), { type: 'UpdateApplyRejected', data: { apply_id: applyId, code, at: deps.clock.now().toISOString() } }, context).catch(() => {});
  };
  let reply;
  try {
    reply = await sidecar.startApply({ apply_id: applyId, manifest: head.envelope, requested_by: requestedBy, source: service });
  } catch (error) {
    await reject('updater_unavailable');
    if (error instanceof SidecarUnavailable) throw new ApiError(503, 'updater_unavailable', 'the updater sidecar cannot be reached');
    throw error;
  }
  if (reply.status === 409) {
    const code = String(reply.body?.error ?? 'apply_in_progress');
    await reject(code);
    throw new ApiError(409, code, String(reply.body?.message ?? code), { apply_id: reply.body?.apply_id ?? null });
  }
  if (reply.status !== 202) {
    await reject('updater_refused');
    throw new ApiError(503, 'updater_unavailable', `the updater sidecar answered ${reply.status}`);
  }
  return { apply_id: applyId, state: String(reply.body?.state ?? reply.body?.current_state ?? 'verifying_manifest') };
}

export interface ApplyDetail extends ApplyProgress {
  requested_by: string | null;
  events: { seq: number; step: string; state: string; phase: string | null; at: string; detail?: Record<string, unknown> }[];
}

function fromRow(row: ApplyRow): ApplyDetail {
  return {
    apply_id: row.apply_id, state: row.state, phase: phaseOf(row.state), outcome: row.outcome, error: row.error,
    from_version: row.from_version, to_version: row.to_version, requested_by: row.requested_by,
    started_at: row.started_at.toISOString(), ended_at: row.ended_at?.toISOString() ?? null,
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
      const events = (await deps.updates.sidecar.events(applyId))?.events as { seq: number; type: string; state: string; at: string; data: Record<string, unknown> }[] ?? [];
      return {
        apply_id: live.apply_id, state: live.state, phase: phaseOf(live.state), outcome: live.outcome, error: live.error,
        from_version: live.from_version, to_version: live.to_version, requested_by: (live.requested_by as string) ?? row?.requested_by ?? null,
        started_at: live.started_at, ended_at: live.ended_at,
        events: events.map((e) => ({ seq: e.seq, step: e.type, state: e.state, phase: phaseOf(e.state), at: e.at, ...(Object.keys(e.data ?? {}).length ? { detail: e.data } : {}) })),
      };
    }
  } catch (error) {
    if (!(error instanceof SidecarUnavailable)) throw error;
  }
  return row ? fromRow(row) : null;
}
