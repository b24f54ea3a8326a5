// The caller's sessions: GET /api/account/sessions, DELETE /api/account/sessions/{id},
// POST /api/account/sessions/revoke-all (every session but the current one).

import { createRoute, z } from '@hono/zod-openapi';
import { liveSessionsOf } from '../../../projections/chat/sessions.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { revokeSession, revokeSessionsOf } from './sessions.ts';

const tags = ['account'];

const SessionView = z
  .object({
    id: z.uuid(),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().openapi({ description: 'when the session last logged in or refreshed its tokens' }),
    user_agent: z.string().nullable(),
    current: z.boolean(),
  })
  .openapi('ChatSession');

const SessionIdParam = uuidParams('id');

export function sessionRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/account/sessions',
      tags,
      summary: "The caller's live sessions",
      middleware: [auth] as const,
      responses: {
        200: ok(z.object({ sessions: z.array(SessionView) }).openapi('ChatSessions'), 'newest first'),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      const principal = c.get('chatUser');
      const sessions = await liveSessionsOf(deps.db, principal.user_id);
      return c.json(
        {
          sessions: sessions.map((s) => ({
            id: s.id,
            created_at: s.created_at.toISOString(),
            last_used_at: s.last_used_at.toISOString(),
            user_agent: s.user_agent,
            current: s.id === principal.session_id,
          })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/account/sessions/{id}',
      tags,
      summary: "Revoke one of the caller's sessions (the current one logs out)",
      middleware: [auth] as const,
      request: { params: SessionIdParam },
      responses: {
        204: { description: 'revoked' },
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such live session of the caller' }),
      },
    }),
    async (c) => {
      const principal = c.get('chatUser');
      const id = c.req.valid('param').id;
      if (!(await liveSessionsOf(deps.db, principal.user_id)).some((s) => s.id === id))
        throw new ApiError(404, 'session_not_found', 'no such session');
      await revokeSession(deps, id, 'revoked', actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/account/sessions/revoke-all',
      tags,
      summary: 'Revoke every session except the current one',
      middleware: [auth] as const,
      responses: {
        200: ok(z.object({ revoked: z.number().int() }).openapi('RevokedSessions'), 'how many were revoked'),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      const principal = c.get('chatUser');
      const revoked = await revokeSessionsOf(deps, principal.user_id, 'revoke_all', actorOf(c), principal.session_id);
      return c.json({ revoked }, 200);
    },
  );

  return app;
}
