// The caller's own account: GET /api/account/me, PATCH /api/account/profile,
// POST /api/account/change-password, DELETE /api/account/delete and
// GET /api/account/turn-credentials. Sessions are in ../sessions/routes.ts.

import { createRoute } from '@hono/zod-openapi';
import { createHmac } from 'node:crypto';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { changePassword, deleteAccount, ownAccount, ownAccountView, updateProfile } from './commands.ts';
import { ChangePasswordBody, OwnUser, PasswordBody, ProfileBody, TurnCredentials } from './schemas.ts';

const tags = ['account'];
/** Lifetime of TURN credentials (TURN REST convention: the expiry is part of the username). */
export const TURN_TTL_SECONDS = 24 * 60 * 60;

export function accountRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/account/me',
      tags,
      summary: 'The calling account',
      middleware: [auth] as const,
      responses: { 200: ok(OwnUser, 'the caller'), ...chatErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const user = await ownAccount(deps, c.get('chatUser').user_id);
      return c.json(await ownAccountView(deps, user), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/account/profile',
      tags,
      summary: 'Change display name, avatar URL, bio or pronouns',
      description:
        'display_name 1-64 characters; avatar_url an http(s) URL up to 2048; bio up to 500; pronouns up to 40. null clears a field.',
      middleware: [auth] as const,
      request: { body: jsonBody(ProfileBody) },
      responses: {
        200: ok(OwnUser, 'the account as changed'),
        ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const user = await updateProfile(
        deps,
        { user_id: c.get('chatUser').user_id, changes: c.req.valid('json') },
        actorOf(c),
      );
      return c.json(await ownAccountView(deps, user), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/account/change-password',
      tags,
      summary: 'Change the password (current one required); every other session ends',
      middleware: [auth] as const,
      request: { body: jsonBody(ChangePasswordBody) },
      responses: {
        204: { description: 'changed' },
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error',
          403: 'the current password is incorrect',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const principal = c.get('chatUser');
      await changePassword(
        deps,
        { user_id: principal.user_id, session_id: principal.session_id, ...c.req.valid('json') },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/account/delete',
      tags,
      summary: 'Delete the account (password required)',
      description:
        'Keys and sessions are removed; messages stay, as ciphertext attributed to a deleted user. The username stays reserved.',
      middleware: [auth] as const,
      request: { body: jsonBody(PasswordBody) },
      responses: {
        204: { description: 'deleted' },
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error',
          403: 'the password is incorrect',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      await deleteAccount(
        deps,
        { user_id: c.get('chatUser').user_id, password: c.req.valid('json').password },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/account/turn-credentials',
      tags,
      summary: 'Time-limited TURN relay credentials (TURN REST convention)',
      middleware: [auth] as const,
      responses: {
        200: ok(TurnCredentials, 'credentials valid for 24 hours'),
        ...chatErrors({ ...AUTH_ERRORS, 503: 'no TURN relay is configured' }),
      },
    }),
    (c) => {
      const { turnUrls, turnSecret } = deps.config;
      if (!turnSecret || turnUrls.length === 0)
        throw new ApiError(503, 'turn_unavailable', 'no TURN relay is configured on this instance');
      const expiry = Math.floor(deps.clock.now().getTime() / 1000) + TURN_TTL_SECONDS;
      const username = `${expiry}:${c.get('chatUser').user_id}`;
      const password = createHmac('sha1', turnSecret).update(username).digest('base64');
      c.header('Cache-Control', 'no-store');
      return c.json({ username, password, ttl: TURN_TTL_SECONDS, uris: turnUrls }, 200);
    },
  );

  return app;
}
