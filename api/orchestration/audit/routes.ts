// The audit log (spec: "Audit entry", `GET /api/v1/agent-chat/audit`), admin only (the route's
// own check, like the profile routes): security events newest first, each with its place in the
// log (`position`, `<commit>/<prepare>`) so it can be checked against the log itself.
// `severity` filters; `before` (a `position`) pages: the entries strictly older than it, so the
// next page asks `before=<the last entry's position>` and never repeats or skips an entry while
// new ones arrive. Mirrored at /api/agent-chat/audit for the web console's admin sessions.

import { createRoute, z } from '@hono/zod-openapi';
import { recentAudit, SEVERITIES } from '../../../projections/orchestration/audit.ts';
import { ok } from '../../shared/openapi.ts';
import { pageQuery } from '../../shared/pagination.ts';
import { requireAdmin } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { parsePosition } from '../../../infra/eventstore/position.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';

const AuditEntry = z
  .object({
    id: z.uuid().openapi({ description: 'the id of the event the entry came from' }),
    event_type: z.string().openapi({ example: 'prompt_injection_detected' }),
    severity: z.enum(SEVERITIES),
    profile_slug: z.string().nullable(),
    actor: z.object({ kind: z.string(), id: z.string().nullable() }),
    detail: z.record(z.string(), z.unknown()),
    created_at: z.iso.datetime(),
    position: z
      .string()
      .openapi({ description: "the event's global position in the log, `<commit>/<prepare>`", example: '7421/3' }),
  })
  .openapi('AuditEntry');

export function auditRoutes(deps: OrchDeps) {
  const app = orchRouter();
  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/audit',
      tags: ['audit'],
      summary: 'Security events, newest first',
      description:
        'Prompt injections, rate-limit hits (at most one per client and limit a minute), leak-detector triggers, cost-cap blocks, failed logins, key rotations and refused rotation attempts, ' +
        'chat-service tool calls and tool loops, and the releases an admin started on this service (`update_applied`).',
      middleware: requireAdmin(true),
      request: {
        query: pageQuery({ defaultLimit: 30, maxLimit: 100 })
          .pick({ limit: true })
          .extend({
            severity: z.enum(SEVERITIES).optional().openapi({ description: 'only entries of this severity' }),
            before: z
              .string()
              .regex(/^\d{1,19}\/\d{1,19}$/, 'a log position, <commit>/<prepare>')
              .optional()
              .openapi({
                description: 'only entries older than this `position` (the last entry of the previous page)',
                example: '7421/3',
              }),
          }),
      },
      responses: {
        200: ok(z.array(AuditEntry), 'a bare array, newest first'),
        ...orchErrors({
          ...AUTH_ERRORS,
          400: 'an unknown severity or a malformed position',
          403: 'admin role required',
        }),
      },
    }),
    async (c) => {
      const { limit, severity, before } = c.req.valid('query');
      const rows = await recentAudit(deps.db, limit, {
        severity,
        before: before === undefined ? undefined : parsePosition(before),
      });
      return c.json(
        rows.map(({ stream_id: _stream, ...row }) => ({ ...row, created_at: new Date(row.created_at).toISOString() })),
        200,
      );
    },
  );
  return app;
}
