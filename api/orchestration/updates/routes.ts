// Managed updates (spec 1 "Updates", admin; each route also at its /api/admin/... web-UI
// mirror): the status, a check on demand (one a minute), starting an apply (an admin's
// interactive session with CSRF: a keyed caller gets 403
// `update_apply_requires_interactive_session`), the applies newest first, and one apply with its
// phase and events.

import { createRoute, z } from '@hono/zod-openapi';
import { isTerminal } from '../../../domain/updates/apply.ts';
import { listApplies } from '../../../projections/updates.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { checkNow, startApply } from '../../shared/updates/commands.ts';
import { applyDetail, deliveryState, sidecarState, updateStatus } from '../../shared/updates/views.ts';
import { actorOf, principalUser } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { adminArea } from '../auth/admin-area.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { ApplyBody, ApplyDetailSchema, ApplyParam, ApplySchema, ApplyStarted, StatusSchema } from './schemas.ts';

const tags = ['updates'];
const ADMIN = { ...AUTH_ERRORS, 403: 'admin role required' };

export function updateRoutes(deps: OrchDeps) {
  const app = orchRouter();
  // The admin area's require_admin (admin-area.ts): the first refusal of the mirrors too.
  const admin = adminArea(deps);
  const updateDeps = {
    db: deps.db,
    clock: deps.clock,
    commands: deps.commands,
    limiter: deps.limiter,
    version: deps.version,
    updates: deps.updates,
  };

  const summaryOf = async (applyId: string) => {
    const d = await applyDetail(updateDeps, applyId);
    if (!d) return null;
    const { events: _events, ...summary } = d;
    return summary;
  };

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/admin/updates/status',
      tags,
      summary: 'Running and latest versions, checks, the sidecar, the newest apply and delivery',
      middleware: admin,
      responses: { 200: ok(StatusSchema, 'the update status'), ...orchErrors(ADMIN) },
    }),
    async (c) => {
      const [status, sidecar, delivery, newest] = await Promise.all([
        updateStatus(updateDeps),
        sidecarState(updateDeps),
        deliveryState(deps.db),
        listApplies(deps.db, 1, 0),
      ]);
      const view = deps.maintenance();
      return c.json(
        {
          ...status,
          sidecar,
          delivery,
          apply: newest.rows[0] ? await summaryOf(newest.rows[0].apply_id) : null,
          maintenance: { active: view.active, read_only: view.readOnly },
        },
        200,
      );
    },
    { first: admin },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/admin/updates/check',
      tags,
      summary: 'Check the channel now (one check a minute)',
      middleware: admin,
      responses: {
        200: ok(
          StatusSchema.pick({
            current_version: true,
            latest_version: true,
            update_available: true,
            checked_at: true,
            last_error: true,
          }).openapi('UpdateCheckResult'),
          'the check was made and recorded',
        ),
        ...orchErrors({
          ...ADMIN,
          409: 'update_checks_off (no manifest host)',
          429: 'a check ran within the last minute',
          503: 'maintenance',
        }),
      },
    }),
    async (c) => {
      const s = await checkNow(updateDeps, c.get('requestId'));
      return c.json(
        {
          current_version: s.current_version,
          latest_version: s.latest_version,
          update_available: s.update_available,
          checked_at: s.checked_at,
          last_error: s.last_error,
        },
        200,
      );
    },
    { first: admin },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/admin/updates/apply',
      tags,
      summary: "Apply the channel head (an admin's interactive session)",
      description:
        'The target must be the cached channel head and not the running version. The sidecar verifies the signed manifest again and runs the apply; poll GET /api/v1/admin/updates/apply/{apply_id}. Writes the audit entry update_applied.',
      middleware: admin,
      request: { body: jsonBody(ApplyBody) },
      responses: {
        202: ok(ApplyStarted, 'the sidecar accepted the apply'),
        ...orchErrors({
          ...ADMIN,
          400: 'validation_failed',
          403: 'update_apply_requires_interactive_session (a key), csrf_failed, or admin role required',
          409: 'target_not_channel_head (with head), already_current, apply_in_progress, apply_frozen',
          503: 'updater_unavailable, or maintenance',
        }),
      },
    }),
    async (c) => {
      const principal = c.get('principal');
      if (principal.kind !== 'account' || principal.via !== 'session') {
        throw new ApiError(
          403,
          'update_apply_requires_interactive_session',
          "starting an update needs an admin's interactive session, not a key",
        );
      }
      const started = await startApply(
        updateDeps,
        c.req.valid('json').target_version,
        principalUser(c).username,
        actorOf(c),
      );
      return c.json(started, 202);
    },
    { first: admin },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/admin/updates/applies',
      tags,
      summary: 'Apply attempts, newest first',
      middleware: admin,
      request: { query: pageQuery({ defaultLimit: 20, maxLimit: 100 }) },
      responses: {
        200: ok(z.object({ applies: z.array(ApplySchema), ...pageFields }).openapi('UpdateApplyPage'), 'a page'),
        ...orchErrors(ADMIN),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await listApplies(deps.db, q.limit, q.offset);
      // A running apply's row is refreshed from the sidecar; ended ones come from the log.
      const items = await Promise.all(
        rows.map(
          async (row) =>
            (isTerminal(row.state) ? null : await summaryOf(row.apply_id)) ?? {
              apply_id: row.apply_id,
              state: row.state,
              phase: null,
              outcome: row.outcome,
              error: row.error,
              from_version: row.from_version,
              to_version: row.to_version,
              requested_by: row.requested_by,
              started_at: row.started_at.toISOString(),
              ended_at: row.ended_at?.toISOString() ?? null,
            },
        ),
      );
      return c.json(page('applies', items, total, q), 200);
    },
    { first: admin },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/admin/updates/apply/{apply_id}',
      tags,
      summary: 'One apply: state, phase, outcome, error, times and its events',
      middleware: admin,
      request: { params: ApplyParam },
      responses: { 200: ok(ApplyDetailSchema, 'the apply'), ...orchErrors({ ...ADMIN, 404: 'apply_not_found' }) },
    }),
    async (c) => {
      const detail = await applyDetail(updateDeps, c.req.valid('param').apply_id.toLowerCase());
      if (!detail) throw new ApiError(404, 'apply_not_found', 'no such apply');
      return c.json(detail, 200);
    },
    { first: admin },
  );

  return app;
}
