// Feedback (spec "Feedback submission"): POST /api/feedback writes the local row first; then,
// when FEEDBACK_TRACKER_BASE_URL, _REPO and _TOKEN are set, mirrors it as an issue through the
// GitHub issues API (`POST {base}/repos/{repo}/issues`, label `instance:<host>`), recording a
// successful target in `forwarded_to`. A tracker that fails or hangs never loses the row (the
// answer is still 201). Admins: GET /api/admin/feedback?status= with per-status counts, PATCH
// /api/admin/feedback/{id} (status; records triaged_at and triaged_by), GET
// /api/admin/feedback/{id}/screenshot (the stored bytes with their original MIME type).

import { createRoute, z } from '@hono/zod-openapi';
import { readBlobs } from '../../../infra/blobs.ts';
import { feedbackById, feedbackQueue, type FeedbackRow } from '../../../projections/chat/admin.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { MiB } from '../../shared/body-limit.ts';
import { bodyLimit } from '../../shared/route-policy.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatAdmin, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { submitFeedback, triageFeedback } from './commands.ts';

const MIME_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
const STATUSES = ['new', 'triaged', 'closed'] as const;

const Feedback = z
  .object({
    id: z.uuid(),
    user_id: z.uuid(),
    description: z.string(),
    has_screenshot: z.boolean(),
    screenshot_mime_type: z.string().nullable(),
    screenshot_bytes: z.number().int().nullable(),
    status: z.enum(STATUSES),
    triaged_at: z.iso.datetime().nullable(),
    triaged_by: z.uuid().nullable(),
    forwarded_to: z.array(z.string()),
    created_at: z.iso.datetime(),
  })
  .openapi('Feedback');

const view = (f: FeedbackRow) => ({
  id: f.id,
  user_id: f.user_id,
  description: f.description,
  has_screenshot: f.screenshot_blob !== null,
  screenshot_mime_type: f.screenshot_mime,
  screenshot_bytes: f.screenshot_bytes,
  status: f.status as (typeof STATUSES)[number],
  triaged_at: f.triaged_at?.toISOString() ?? null,
  triaged_by: f.triaged_by,
  forwarded_to: f.forwarded_to,
  created_at: f.created_at.toISOString(),
});

export function feedbackRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const adminAuth = requireChatUser(deps, { bots: [] });
  const admin = requireChatAdmin();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/feedback',
      tags: ['feedback'],
      summary: 'Send feedback (stored locally first, then mirrored to the issue tracker when one is configured)',
      // A screenshot of up to 5 MB comes as base64 (4/3 of it) in the JSON.
      middleware: [auth, bodyLimit(8 * MiB)] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              description: z.string().trim().min(1).max(10_000),
              screenshot: z
                .strictObject({
                  data: z.base64().openapi({ description: 'base64 of the image, at most 5 MB decoded' }),
                  mime_type: z.enum(MIME_TYPES),
                })
                .optional(),
            })
            .openapi('FeedbackRequest'),
        ),
      },
      responses: {
        201: ok(Feedback, 'stored (forwarded_to lists the tracker when the mirror succeeded)'),
        ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error, or a screenshot over 5 MB', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const user = c.get('chatUser');
      const row = await submitFeedback(
        deps,
        { user_id: user.user_id, username: user.username, description: body.description, screenshot: body.screenshot },
        actorOf(c),
      );
      return c.json(view(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/feedback',
      tags: ['admin'],
      summary: 'The feedback queue, newest first, with per-status counts',
      middleware: [adminAuth, admin] as const,
      request: {
        query: pageQuery({ defaultLimit: 50, maxLimit: 200 }).extend({ status: z.enum(STATUSES).optional() }),
      },
      responses: {
        200: ok(
          z
            .object({
              feedback: z.array(Feedback),
              counts: z.object({ new: z.number().int(), triaged: z.number().int(), closed: z.number().int() }),
              ...pageFields,
            })
            .openapi('FeedbackQueue'),
          'a page',
        ),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'unknown status, or both credentials sent',
          403: 'instance admin or owner required',
        }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total, counts } = await feedbackQueue(deps.db, q.status ?? null, q.limit, q.offset);
      return c.json(
        {
          ...page('feedback', rows.map(view), total, q),
          counts: { new: counts.new ?? 0, triaged: counts.triaged ?? 0, closed: counts.closed ?? 0 },
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/admin/feedback/{id}',
      tags: ['admin'],
      summary: "Set a feedback item's status (records triaged_at and triaged_by)",
      middleware: [adminAuth, admin] as const,
      request: {
        params: uuidParams('id'),
        body: jsonBody(z.strictObject({ status: z.enum(STATUSES) }).openapi('TriageFeedbackRequest')),
      },
      responses: {
        200: ok(Feedback, 'the item'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error',
          403: 'instance admin or owner required',
          404: 'no such feedback',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const row = await triageFeedback(
        deps,
        {
          feedback_id: c.req.valid('param').id,
          user_id: c.get('chatUser').user_id,
          status: c.req.valid('json').status,
        },
        actorOf(c),
      );
      return c.json(view(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/feedback/{id}/screenshot',
      tags: ['admin'],
      summary: "A feedback item's screenshot: the stored bytes with their original MIME type",
      middleware: [adminAuth, admin] as const,
      request: { params: uuidParams('id') },
      responses: {
        200: {
          description: 'the image',
          content: Object.fromEntries(MIME_TYPES.map((m) => [m, { schema: z.string().openapi({ format: 'binary' }) }])),
        },
        ...chatErrors({
          ...AUTH_ERRORS,
          403: 'instance admin or owner required',
          404: 'no such feedback, or it has no screenshot',
        }),
      },
    }),
    async (c) => {
      const row = await feedbackById(deps.db, c.req.valid('param').id);
      if (!row?.screenshot_blob)
        throw new ApiError(404, 'screenshot_not_found', 'no such feedback, or it has no screenshot');
      const data = (await readBlobs(deps.db, [row.screenshot_blob])).get(row.screenshot_blob)!;
      c.header('Content-Type', row.screenshot_mime ?? 'application/octet-stream');
      c.header('Cache-Control', 'private, no-store');
      c.header('X-Content-Type-Options', 'nosniff');
      return c.body(Buffer.from(data, 'base64'), 200) as never;
    },
  );

  return app;
}
