// Managed updates as both services offer them (orchestration: /api/v1/admin/updates/...,
// chat: /api/admin/updates/...), their application layer (the only caller of the command runner
// for updates): a check on demand and starting an apply through the sidecar. What the routes
// read (the status, the sidecar's state, an apply's progress) is ./views.ts's. Each service's
// routes render these in their own shapes.

import { randomUUID } from 'node:crypto';
import type { UpdateService } from '../../../domain/updates/events.ts';
import { updateApplyStream } from '../../../domain/updates/streams.ts';
import type { Clock } from '../../../infra/clock.ts';
import type { CommandContext, CommandRunner } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { RateLimiter } from '../../../infra/rate-limit/index.ts';
import type { UpdateChecker } from '../../../infra/updates/checker.ts';
import { SidecarUnavailable, type SidecarClient } from '../../../infra/updates/sidecar-client.ts';
import { channelHead } from '../../../projections/updates.ts';
import { ApiError, rateLimited } from '../http-errors.ts';
import { updateStatus } from './views.ts';

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
export async function startApply(
  deps: UpdateDeps,
  target: string,
  requestedBy: string,
  context: CommandContext,
): Promise<{ apply_id: string; state: string }> {
  const { service, sidecar } = deps.updates;
  const head = await channelHead(deps.db, service);
  const latest = head?.latest_version ?? null;
  if (!latest || !head?.envelope || target !== latest) {
    throw new ApiError(
      409,
      'target_not_channel_head',
      latest
        ? `the channel head is ${latest}`
        : 'no verified release is cached for this channel; check for updates first',
      { head: latest },
    );
  }
  if (target === deps.version) throw new ApiError(409, 'already_current', `version ${target} already runs`);
  let state;
  try {
    state = await sidecar.status();
  } catch (error) {
    if (error instanceof SidecarUnavailable)
      throw new ApiError(503, 'updater_unavailable', 'the updater sidecar cannot be reached');
    throw error;
  }
  if (state.frozen)
    throw new ApiError(409, 'apply_frozen', `apply ${String(state.frozen)} is frozen until an operator unfreezes it`, {
      apply_id: state.frozen,
    });
  if (state.apply_in_progress)
    throw new ApiError(409, 'apply_in_progress', `apply ${String(state.apply_in_progress)} is in progress`, {
      apply_id: state.apply_in_progress,
    });

  const applyId = randomUUID();
  const at = deps.clock.now().toISOString();
  await deps.commands.record(
    updateApplyStream(applyId),
    {
      type: 'UpdateApplyRequested',
      data: {
        action: 'update_applied',
        apply_id: applyId,
        service,
        target_version: target,
        from_version: deps.version,
        requested_by: requestedBy,
        at,
      },
    },
    context,
  );
  const reject = async (code: string) => {
    await deps.commands
      .record(
        updateApplyStream(applyId),
        { type: 'UpdateApplyRejected', data: { apply_id: applyId, code, at: deps.clock.now().toISOString() } },
        context,
      )
      .catch(() => {});
  };
  let reply;
  try {
    reply = await sidecar.startApply({
      apply_id: applyId,
      manifest: head.envelope,
      requested_by: requestedBy,
      source: service,
    });
  } catch (error) {
    await reject('updater_unavailable');
    if (error instanceof SidecarUnavailable)
      throw new ApiError(503, 'updater_unavailable', 'the updater sidecar cannot be reached');
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
