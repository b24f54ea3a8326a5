// The admin surface (spec "Admin", instance `is_admin` or `is_owner`; bot tokens are refused):
// users (list and search, suspend and unsuspend, delete, grant and revoke admin, reset the
// password), purges (a message, a user's messages, a channel: hard-deleted from the read models
// with a `Purged` event that keeps no content), message quarantine, the audit log, reports and
// their review, announcements (and the users' side: list, dismiss). Registration invites are in
// ../invites/routes.ts; files and blocked hashes come with the files slice.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { auditLog } from '../../../projections/chat/admin-audit.ts';
import {
  adminUsers,
  announcements,
  announcementsFor,
  reports,
  type AdminUserRow,
  type AnnouncementRow,
  type ReportRow,
} from '../../../projections/chat/admin.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';
import { password } from '../accounts/schemas.ts';
import { actorOf, requireChatAdmin, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  deleteUser,
  dismissAnnouncement,
  liveUser,
  publishAnnouncement,
  purgeChannel,
  purgeMessage,
  purgeUserMessages,
  quarantineMessage,
  resetPassword,
  reviewReport,
  setAdmin,
  suspendUser,
  unsuspendUser,
} from './commands.ts';

const tags = ['admin'];
const ADMIN_ERRORS = {
  ...AUTH_ERRORS,
  400: 'X-Bot-Token and Authorization both sent',
  403: 'instance admin or owner required (bot tokens are refused)',
};
const IdParam = uuidParams('id');

const AdminUser = z
  .object({
    id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    email: z.string().nullable(),
    is_admin: z.boolean(),
    is_owner: z.boolean(),
    is_bot: z.boolean(),
    suspended: z.boolean(),
    suspend_reason: z.string().nullable(),
    suspended_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('AdminUser');

const Announcement = z
  .object({
    id: z.uuid(),
    title: z.string(),
    body: z.string(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
    expires_at: z.iso.datetime().nullable(),
  })
  .openapi('Announcement');

const Report = z
  .object({
    id: z.uuid(),
    reporter_id: z.uuid(),
    target_type: z.string(),
    target_id: z.string(),
    reason: z.string(),
    status: z.enum(['open', 'resolved', 'dismissed']),
    reviewed_by: z.uuid().nullable(),
    reviewed_at: z.iso.datetime().nullable(),
    review_note: z.string().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('Report');

export function adminRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps, { bots: [] });
  const admin = requireChatAdmin();
  const userAuth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const userView = (u: AdminUserRow) => ({
    id: u.id,
    username: u.username,
    display_name: u.display_name,
    email: u.email,
    is_admin: u.is_admin,
    is_owner: u.is_owner,
    is_bot: u.is_bot,
    suspended: u.suspended_at !== null,
    suspend_reason: u.suspend_reason,
    suspended_at: u.suspended_at?.toISOString() ?? null,
    created_at: u.created_at.toISOString(),
  });
  const current = async (id: string) =>
    userView({ ...(await liveUser(deps, id)) } as AdminUserRow & {
      suspended_at: Date | null;
      suspend_reason: string | null;
    });
  const announcementView = (a: AnnouncementRow) => ({
    id: a.id,
    title: a.title,
    body: a.body,
    created_by: a.created_by,
    created_at: a.created_at.toISOString(),
    expires_at: a.expires_at?.toISOString() ?? null,
  });
  const reportView = (r: ReportRow) => ({
    id: r.id,
    reporter_id: r.reporter_id,
    target_type: r.target_type,
    target_id: r.target_id,
    reason: r.reason,
    status: r.status as 'open' | 'resolved' | 'dismissed',
    reviewed_by: r.reviewed_by,
    reviewed_at: r.reviewed_at?.toISOString() ?? null,
    review_note: r.review_note,
    created_at: r.created_at.toISOString(),
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/users',
      tags,
      summary: 'Accounts (people and bots), by username; `q` searches username, display name and email',
      middleware: [auth, admin] as const,
      request: {
        query: z.object({
          q: z.string().trim().max(200).optional(),
          page: z.coerce
            .number()
            .int()
            .catch(1)
            .transform((n) => Math.max(1, n))
            .default(1)
            .openapi({ type: 'integer', description: '1-based, default 1' }),
          limit: z.coerce
            .number()
            .int()
            .catch(50)
            .transform((n) => Math.min(200, Math.max(1, n)))
            .default(50)
            .openapi({ type: 'integer', description: 'default 50, clamped to 1-200' }),
        }),
      },
      responses: {
        200: ok(
          z
            .object({
              users: z.array(AdminUser),
              total: z.number().int(),
              page: z.number().int(),
              limit: z.number().int(),
            })
            .openapi('AdminUserPage'),
          'a page',
        ),
        ...chatErrors(ADMIN_ERRORS),
      },
    }),
    async (c) => {
      const { q, page: p, limit } = c.req.valid('query');
      const { rows, total } = await adminUsers(deps.db, q || null, limit, (p - 1) * limit);
      return c.json({ users: rows.map(userView), total, page: p, limit }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/users/{id}/suspend',
      tags,
      summary:
        'Suspend an account: its access tokens, sessions, sockets and bot tokens (and those of bots it created) are refused at once',
      middleware: [auth, admin] as const,
      request: {
        params: IdParam,
        body: jsonBody(z.strictObject({ reason: z.string().trim().min(1).max(500) }).openapi('SuspendRequest')),
      },
      responses: {
        200: ok(AdminUser, 'the account'),
        ...chatErrors({
          ...ADMIN_ERRORS,
          400: 'validation error, or suspending yourself',
          403: 'the instance owner cannot be suspended',
          404: 'no such user',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const id = await suspendUser(
        deps,
        { user_id: c.req.valid('param').id, by: me(c), reason: c.req.valid('json').reason },
        actorOf(c),
      );
      return c.json(await current(id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/users/{id}/unsuspend',
      tags,
      summary: 'Lift a suspension',
      middleware: [auth, admin] as const,
      request: { params: IdParam },
      responses: { 200: ok(AdminUser, 'the account'), ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such user' }) },
    }),
    async (c) => {
      const id = await unsuspendUser(deps, { user_id: c.req.valid('param').id, by: me(c) }, actorOf(c));
      return c.json(await current(id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/admin/users/{id}',
      tags,
      summary: 'Delete an account (its keys and sessions go; messages stay attributed to a deleted user)',
      middleware: [auth, admin] as const,
      request: { params: IdParam },
      responses: {
        204: { description: 'deleted' },
        ...chatErrors({
          ...ADMIN_ERRORS,
          400: 'deleting yourself (use /api/account/delete)',
          403: 'the instance owner cannot be deleted',
          404: 'no such user',
        }),
      },
    }),
    async (c) => {
      await deleteUser(deps, { user_id: c.req.valid('param').id, by: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/api/admin/users/{id}/admin',
      tags,
      summary: 'Grant or revoke instance admin (takes effect on the next request)',
      middleware: [auth, admin] as const,
      request: {
        params: IdParam,
        body: jsonBody(z.strictObject({ is_admin: z.boolean() }).openapi('SetAdminRequest')),
      },
      responses: {
        200: ok(AdminUser, 'the account'),
        ...chatErrors({
          ...ADMIN_ERRORS,
          400: 'validation error, or a bot',
          403: 'the owner stays an admin',
          404: 'no such user',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const id = await setAdmin(
        deps,
        { user_id: c.req.valid('param').id, by: me(c), is_admin: c.req.valid('json').is_admin },
        actorOf(c),
      );
      return c.json(await current(id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/api/admin/users/{id}/password',
      tags,
      summary: "Reset an account's password; its sessions end",
      middleware: [auth, admin] as const,
      request: {
        params: IdParam,
        body: jsonBody(z.strictObject({ new_password: password }).openapi('ResetPasswordRequest')),
      },
      responses: {
        204: { description: 'reset' },
        ...chatErrors({
          ...ADMIN_ERRORS,
          400: 'validation error (at least 12 characters), or a bot',
          404: 'no such user',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      await resetPassword(
        deps,
        { user_id: c.req.valid('param').id, by: me(c), new_password: c.req.valid('json').new_password },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  const Purged = z
    .object({
      purge_id: z.uuid(),
      target_type: z.enum(['message', 'user_messages', 'channel']),
      target_id: z.uuid(),
      messages_purged: z.number().int(),
    })
    .openapi('Purged');

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/purge/message/{id}',
      tags,
      summary: 'Hard-delete a message from the read models',
      middleware: [auth, admin] as const,
      request: { params: IdParam },
      responses: { 200: ok(Purged, 'purged'), ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such message' }) },
    }),
    async (c) => {
      return c.json(await purgeMessage(deps, { message_id: c.req.valid('param').id, by: me(c) }, actorOf(c)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/purge/user/{id}/messages',
      tags,
      summary: 'Hard-delete every message a user posted so far',
      middleware: [auth, admin] as const,
      request: { params: IdParam },
      responses: { 200: ok(Purged, 'purged'), ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such user' }) },
    }),
    async (c) => {
      return c.json(await purgeUserMessages(deps, { user_id: c.req.valid('param').id, by: me(c) }, actorOf(c)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/purge/channel/{id}',
      tags,
      summary: 'Hard-delete a channel with its members, pins, sender keys and messages',
      middleware: [auth, admin] as const,
      request: { params: IdParam },
      responses: { 200: ok(Purged, 'purged'), ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such channel' }) },
    }),
    async (c) => {
      return c.json(await purgeChannel(deps, { channel_id: c.req.valid('param').id, by: me(c) }, actorOf(c)), 200);
    },
  );

  for (const action of ['quarantine', 'unquarantine'] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/api/admin/messages/{id}/${action}`,
        tags,
        middleware: [auth, admin] as const,
        summary:
          action === 'quarantine'
            ? 'Quarantine a message: hidden from every reader (history, threads, search, pins) until released'
            : 'Release a quarantined message',
        request: {
          params: IdParam,
          ...(action === 'quarantine'
            ? {
                body: {
                  ...jsonBody(
                    z.strictObject({ reason: z.string().trim().max(500).optional() }).openapi('QuarantineRequest'),
                  ),
                  required: false,
                },
              }
            : {}),
        },
        responses: {
          200: ok(
            z
              .object({ message_id: z.uuid(), channel_id: z.uuid(), quarantined: z.boolean() })
              .openapi(`Message${action === 'quarantine' ? 'Q' : 'Unq'}uarantined`),
            "the message's state",
          ),
          ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such message' }),
        },
      }),
      async (c) => {
        const reason =
          action === 'quarantine' && /json/i.test(c.req.header('content-type') ?? '')
            ? (((await c.req.json().catch(() => ({}))) as { reason?: string }).reason ?? null)
            : null;
        return c.json(
          await quarantineMessage(
            deps,
            { message_id: c.req.valid('param').id, quarantine: action === 'quarantine', reason, by: me(c) },
            actorOf(c),
          ),
          200,
        );
      },
    );
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/audit-log',
      tags,
      summary: 'Every admin and moderation action, newest first, from the log',
      middleware: [auth, admin] as const,
      request: {
        query: pageQuery({ defaultLimit: 50, maxLimit: 200 }).extend({
          action: z
            .string()
            .max(64)
            .optional()
            .openapi({ description: 'e.g. user_suspended, purged, bot_token_minted' }),
          user_id: z.string().max(64).optional().openapi({ description: 'the actor or the target' }),
        }),
      },
      responses: {
        200: ok(
          z
            .object({
              entries: z.array(
                z.object({
                  action: z.string(),
                  actor_id: z.string().nullable(),
                  target_type: z.string().nullable(),
                  target_id: z.string().nullable(),
                  details: z.record(z.string(), z.unknown()),
                  created_at: z.iso.datetime(),
                }),
              ),
              ...pageFields,
            })
            .openapi('AuditLog'),
          'newest first',
        ),
        ...chatErrors(ADMIN_ERRORS),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await auditLog(deps.db, {
        action: q.action || null,
        user_id: q.user_id || null,
        limit: q.limit,
        offset: q.offset,
      });
      return c.json(
        page(
          'entries',
          rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() })),
          total,
          q,
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/reports',
      tags,
      summary: 'Reports, newest first',
      middleware: [auth, admin] as const,
      request: {
        query: pageQuery({ defaultLimit: 50, maxLimit: 200 }).extend({
          status: z.enum(['open', 'resolved', 'dismissed']).optional(),
        }),
      },
      responses: {
        200: ok(z.object({ reports: z.array(Report), ...pageFields }).openapi('ReportPage'), 'newest first'),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'unknown status' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await reports(deps.db, q.status ?? null, q.limit, q.offset);
      return c.json(page('reports', rows.map(reportView), total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/reports/{id}/review',
      tags,
      summary: 'Resolve or dismiss a report',
      middleware: [auth, admin] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({ status: z.enum(['resolved', 'dismissed']), note: z.string().trim().max(1000).optional() })
            .openapi('ReviewReportRequest'),
        ),
      },
      responses: {
        200: ok(Report, 'the report'),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'validation error', 404: 'no such report', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const report = await reviewReport(
        deps,
        { report_id: c.req.valid('param').id, ...c.req.valid('json'), by: me(c) },
        actorOf(c),
      );
      return c.json(reportView(report), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/announcements',
      tags,
      summary: 'Every announcement, newest first',
      middleware: [auth, admin] as const,
      responses: {
        200: ok(z.object({ announcements: z.array(Announcement) }).openapi('AdminAnnouncements'), 'newest first'),
        ...chatErrors(ADMIN_ERRORS),
      },
    }),
    async (c) => c.json({ announcements: (await announcements(deps.db)).map(announcementView) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/announcements',
      tags,
      summary: 'Publish an announcement to every user',
      middleware: [auth, admin] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              title: z.string().trim().min(1).max(200),
              body: z.string().trim().min(1).max(10_000),
              expires_at: z.iso.datetime({ offset: true }).optional(),
            })
            .openapi('CreateAnnouncementRequest'),
        ),
      },
      responses: {
        201: ok(Announcement, 'published'),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'validation error, or expires_at in the past', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const announcement = await publishAnnouncement(deps, { ...c.req.valid('json'), by: me(c) }, actorOf(c));
      return c.json(announcementView(announcement), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/announcements',
      tags: ['announcements'],
      summary: 'Live announcements the caller has not dismissed, newest first',
      middleware: [userAuth] as const,
      responses: {
        200: ok(z.object({ announcements: z.array(Announcement) }).openapi('Announcements'), 'newest first'),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) =>
      c.json({ announcements: (await announcementsFor(deps.db, me(c), deps.clock.now())).map(announcementView) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/announcements/{id}/dismiss',
      tags: ['announcements'],
      summary: 'Dismiss an announcement for the caller (repeating is harmless)',
      middleware: [userAuth] as const,
      request: { params: IdParam },
      responses: { 204: { description: 'dismissed' }, ...chatErrors({ ...AUTH_ERRORS, 404: 'no such announcement' }) },
    }),
    async (c) => {
      await dismissAnnouncement(deps, { announcement_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
