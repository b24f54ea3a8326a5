// Managed updates, chat admin surface (spec 2 "Admin" and "Updater apply"; admin JWT): the
// status (running version, latest on the channel, checked_at, last_error), a check on demand,
// starting an apply (the target must be the cached channel head; audit entry `update_applied`)
// and an apply's progress: succeeded, failed, rolled_back, recovered, frozen, or the running
// state with its phase tag.

import { createRoute, z } from '@hono/zod-openapi';
import { phaseOf } from '../../../domain/updates/apply.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { checkNow, startApply } from '../../shared/updates/commands.ts';
import { applyDetail, updateStatus } from '../../shared/updates/views.ts';
import { actorOf, requireChatAdmin, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';

const tags = ['admin', 'updates'];
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'instance admin or owner required' };

/** The phase tags the admin UI shows. */
export const PHASE_TAGS: Record<string, string> = {
  pre_flight: 'Pre-flight',
  active_swap: 'Active swap',
  verifying: 'Verifying',
  rollback: 'Rollback',
};

const ChatUpdateStatus = z
  .object({
    running_version: z.string(),
    channel: z.string().nullable(),
    latest_version: z.string().nullable(),
    update_available: z.boolean(),
    checked_at: z.string().nullable(),
    last_error: z.object({ code: z.string(), message: z.string() }).nullable(),
    background_check: z.boolean(),
    check_interval_secs: z.int().nullable(),
  })
  .openapi('ChatUpdateStatus');

const ChatApply = z
  .object({
    apply_id: z.string(),
    state: z.string().openapi({ description: 'succeeded, failed, rolled_back, recovered, frozen, or a running state' }),
    phase: z.string().nullable(),
    phase_tag: z
      .string()
      .nullable()
      .openapi({ description: 'Pre-flight, Active swap, Verifying or Rollback while running' }),
    outcome: z.string().nullable(),
    error: z.unknown(),
    from_version: z.string().nullable(),
    to_version: z.string().nullable(),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
  })
  .openapi('ChatUpdateApply');

export function chatUpdateRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const admin = requireChatAdmin();
  const updateDeps = {
    db: deps.db,
    clock: deps.clock,
    commands: deps.commands,
    limiter: deps.limiter,
    version: deps.version,
    updates: deps.updates,
  };
  const status = async () => {
    const s = await updateStatus(updateDeps);
    return {
      running_version: s.current_version,
      channel: s.channel,
      latest_version: s.latest_version,
      update_available: s.update_available,
      checked_at: s.checked_at,
      last_error: s.last_error,
      background_check: s.background_check,
      check_interval_secs: s.check_interval_secs,
    };
  };

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/updates/status',
      tags,
      summary: 'Running version and the latest on the channel',
      middleware: [auth, admin] as const,
      responses: { 200: ok(ChatUpdateStatus, 'the update status'), ...chatErrors(ADMIN_ERRORS) },
    }),
    async (c) => c.json(await status(), 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/updates/check',
      tags,
      summary: 'Check the channel now (one check a minute)',
      middleware: [auth, admin] as const,
      responses: {
        200: ok(ChatUpdateStatus, 'the status after the check'),
        ...chatErrors({
          ...ADMIN_ERRORS,
          409: 'no manifest host (update_checks_off)',
          429: 'a check ran within the last minute',
          503: 'maintenance',
        }),
      },
    }),
    async (c) => {
      await checkNow(updateDeps, c.get('requestId'));
      return c.json(await status(), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/updates/apply',
      tags,
      summary: 'Apply the channel head through the updater sidecar',
      middleware: [auth, admin] as const,
      request: {
        body: jsonBody(
          z.strictObject({ target_version: z.string().min(1).max(128) }).openapi('ChatUpdateApplyRequest'),
        ),
      },
      responses: {
        202: ok(
          z.object({ apply_id: z.string(), state: z.string() }).openapi('ChatUpdateApplyStarted'),
          'the sidecar accepted the apply',
        ),
        ...chatErrors({
          ...ADMIN_ERRORS,
          400: 'validation error',
          409: 'target_not_channel_head (with head), already_current, apply_in_progress, apply_frozen',
          503: 'updater_unavailable or maintenance',
        }),
      },
    }),
    async (c) => {
      try {
        const started = await startApply(
          updateDeps,
          c.req.valid('json').target_version,
          c.get('chatUser').user_id,
          actorOf(c),
        );
        return c.json(started, 202);
      } catch (error) {
        // Chat error bodies carry a description; the machine-readable code travels beside it.
        if (error instanceof ApiError && error.status !== 429)
          throw new ApiError(
            error.status,
            error.code,
            error.message,
            { code: error.code, ...error.extra },
            error.headers,
          );
        throw error;
      }
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/updates/apply/{apply_id}',
      tags,
      summary: "An apply's progress",
      middleware: [auth, admin] as const,
      request: { params: z.object({ apply_id: z.string().openapi({ param: { name: 'apply_id', in: 'path' } }) }) },
      responses: { 200: ok(ChatApply, 'the apply'), ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such apply' }) },
    }),
    async (c) => {
      const d = await applyDetail(updateDeps, c.req.valid('param').apply_id.toLowerCase());
      if (!d) throw new ApiError(404, 'apply_not_found', 'no such apply');
      const phase = phaseOf(d.state);
      return c.json(
        {
          apply_id: d.apply_id,
          state: d.state,
          phase,
          phase_tag: phase ? (PHASE_TAGS[phase] ?? null) : null,
          outcome: d.outcome,
          error: d.error,
          from_version: d.from_version,
          to_version: d.to_version,
          started_at: d.started_at,
          ended_at: d.ended_at,
        },
        200,
      );
    },
  );

  return app;
}
