// Other users: GET /api/users/search?q=, GET /api/users/{user_id} (404 when not visible),
// POST /api/users/block, POST /api/users/unblock/{user_id}, GET /api/users/blocked, and
// POST /api/reports. Who is visible is decided in projections/chat/users.ts (oneself, shared
// community membership, or instance owner status).

import { createRoute, z } from '@hono/zod-openapi';
import type { ChatUserRow } from '../../../projections/chat/accounts.ts';
import { blockedBy, searchUsers, visibleUser } from '../../../projections/chat/users.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatPrincipal } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { blockUser, fileReport, unblockUser, userNotFound } from './commands.ts';

const tags = ['users'];
export const SEARCH_LIMIT = 20;

export const PublicUser = z
  .object({
    id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    avatar_url: z.string().nullable(),
    bio: z.string().nullable(),
    pronouns: z.string().nullable(),
    is_bot: z.boolean(),
    created_at: z.iso.datetime(),
  })
  .openapi('PublicUser');

export const publicView = (u: ChatUserRow) => ({
  id: u.id,
  username: u.username,
  display_name: u.display_name,
  avatar_url: u.avatar_url,
  bio: u.bio,
  pronouns: u.pronouns,
  is_bot: u.is_bot,
  created_at: u.created_at.toISOString(),
});

const UserIdParam = uuidParams('user_id');
const viewer = (p: ChatPrincipal) => ({ user_id: p.user_id, is_owner: p.is_owner });

export function userRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/users/search',
      tags,
      summary: 'Search visible users by username or display name',
      middleware: [auth] as const,
      request: { query: z.object({ q: z.string().trim().min(1).max(64) }) },
      responses: {
        200: ok(
          z.object({ users: z.array(PublicUser) }).openapi('UserSearch'),
          `at most ${SEARCH_LIMIT}, username prefix matches first`,
        ),
        ...chatErrors({ ...AUTH_ERRORS, 400: 'q missing or longer than 64' }),
      },
    }),
    async (c) => {
      const users = await searchUsers(deps.db, viewer(c.get('chatUser')), c.req.valid('query').q, SEARCH_LIMIT);
      return c.json({ users: users.map(publicView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/users/blocked',
      tags,
      summary: 'The users the caller blocked',
      middleware: [auth] as const,
      responses: {
        200: ok(
          z.object({ users: z.array(PublicUser.extend({ blocked_at: z.iso.datetime() })) }).openapi('BlockedUsers'),
          'oldest block first',
        ),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      const rows = await blockedBy(deps.db, c.get('chatUser').user_id);
      return c.json({ users: rows.map((r) => ({ ...publicView(r), blocked_at: r.blocked_at.toISOString() })) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/users/{user_id}',
      tags,
      summary: "A visible user's profile",
      middleware: [auth] as const,
      request: { params: UserIdParam },
      responses: {
        200: ok(PublicUser, 'the profile'),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such user, or not visible to the caller' }),
      },
    }),
    async (c) => {
      const user = await visibleUser(deps.db, viewer(c.get('chatUser')), c.req.valid('param').user_id);
      if (!user) throw userNotFound();
      return c.json(publicView(user), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/users/block',
      tags,
      summary: 'Block a user (repeating is harmless)',
      middleware: [auth] as const,
      request: { body: jsonBody(z.strictObject({ user_id: z.uuid() }).openapi('BlockRequest')) },
      responses: {
        204: { description: 'blocked' },
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error, or blocking oneself',
          404: 'no such user',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      await blockUser(
        deps,
        { user_id: c.get('chatUser').user_id, blocked_user_id: c.req.valid('json').user_id },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/users/unblock/{user_id}',
      tags,
      summary: 'Unblock a user (repeating is harmless)',
      middleware: [auth] as const,
      request: { params: UserIdParam },
      responses: {
        204: { description: 'not blocked (any more)' },
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such user' }),
      },
    }),
    async (c) => {
      await unblockUser(
        deps,
        { user_id: c.get('chatUser').user_id, blocked_user_id: c.req.valid('param').user_id },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/reports',
      tags,
      summary: 'Report a user or a message to the instance admins',
      middleware: [auth] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              target_type: z.enum(['user', 'message']),
              target_id: z.uuid(),
              reason: z.string().trim().min(1).max(1000),
            })
            .openapi('ReportRequest'),
        ),
      },
      responses: {
        201: ok(z.object({ id: z.uuid(), status: z.literal('open') }).openapi('ReportFiled'), 'filed'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error',
          404: 'the reported user does not exist',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const id = await fileReport(deps, { user_id: c.get('chatUser').user_id, ...c.req.valid('json') }, actorOf(c));
      return c.json({ id, status: 'open' as const }, 201);
    },
  );

  return app;
}
