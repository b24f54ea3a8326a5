// The caller's own account: GET /api/account/me, PATCH /api/account/profile,
// POST /api/account/change-password, DELETE /api/account/delete and
// GET /api/account/turn-credentials. Sessions are in ../sessions/routes.ts.

import { createRoute } from '@hono/zod-openapi';
import { createHmac } from 'node:crypto';
import { hashPassword, verifyPassword } from '../../../crypto/password.ts';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import { chatUserStream } from '../../../domain/chat/accounts/events.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { keysStream } from '../../../domain/chat/keys/events.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { revokeSessionsOf } from '../sessions/sessions.ts';
import { ownView } from './accounts.ts';
import { ChangePasswordBody, OwnUser, PasswordBody, ProfileBody, TurnCredentials } from './schemas.ts';

const tags = ['account'];
/** Lifetime of TURN credentials (TURN REST convention: the expiry is part of the username). */
export const TURN_TTL_SECONDS = 24 * 60 * 60;

export const wrongPassword = () => new ApiError(403, 'wrong_password', 'the password is incorrect');

export function accountRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const iso = () => deps.clock.now().toISOString();

  async function me(userId: string) {
    const user = await chatUserById(deps.db, userId);
    if (!user || user.deleted_at) throw new ApiError(401, 'unauthorized', 'invalid or expired access token');
    return user;
  }

  async function confirmPassword(userId: string, password: string) {
    const user = await me(userId);
    if (!user.password_hash || !(await verifyPassword(password, user.password_hash))) throw wrongPassword();
    return user;
  }

  app.openapi(createRoute({
    method: 'get', path: '/api/account/me', tags, summary: 'The calling account', middleware: [auth] as const,
    responses: { 200: ok(OwnUser, 'the caller'), ...chatErrors(AUTH_ERRORS) },
  }), async (c) => {
    const user = await me(c.get('chatUser').user_id);
    return c.json(ownView(user, { totp_enabled: (await totpOf(deps.db, user.id))?.enabled ?? false }), 200);
  });

  app.openapi(createRoute({
    method: 'patch', path: '/api/account/profile', tags, summary: 'Change display name, avatar URL, bio or pronouns',
    description: 'display_name 1-64 characters; avatar_url an http(s) URL up to 2048; bio up to 500; pronouns up to 40. null clears a field.',
    middleware: [auth] as const,
    request: { body: jsonBody(ProfileBody) },
    responses: { 200: ok(OwnUser, 'the account as changed'), ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error', 413: 'body too large' }) },
  }), async (c) => {
    const userId = c.get('chatUser').user_id;
    const body = c.req.valid('json');
    const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined).map(([k, v]) => [k, v === '' ? null : v]));
    await deps.commands.run(chatUserStream(userId), accountDecider, { type: 'UpdateProfile', changes, at: iso() }, actorOf(c));
    const user = await me(userId);
    return c.json(ownView(user, { totp_enabled: (await totpOf(deps.db, user.id))?.enabled ?? false }), 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/account/change-password', tags, summary: 'Change the password (current one required); every other session ends',
    middleware: [auth] as const,
    request: { body: jsonBody(ChangePasswordBody) },
    responses: { 204: { description: 'changed' }, ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error', 403: 'the current password is incorrect', 413: 'body too large' }) },
  }), async (c) => {
    const principal = c.get('chatUser');
    const body = c.req.valid('json');
    await confirmPassword(principal.user_id, body.current_password);
    await deps.commands.run(chatUserStream(principal.user_id), accountDecider, { type: 'ChangePassword', password_hash: await hashPassword(body.new_password), at: iso() }, actorOf(c));
    await revokeSessionsOf(deps, principal.user_id, 'password_changed', actorOf(c), principal.session_id);
    return c.body(null, 204);
  });

  app.openapi(createRoute({
    method: 'delete', path: '/api/account/delete', tags, summary: 'Delete the account (password required)',
    description: 'Keys and sessions are removed; messages stay, as ciphertext attributed to a deleted user. The username stays reserved.',
    middleware: [auth] as const,
    request: { body: jsonBody(PasswordBody) },
    responses: { 204: { description: 'deleted' }, ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error', 403: 'the password is incorrect', 413: 'body too large' }) },
  }), async (c) => {
    const userId = c.get('chatUser').user_id;
    await confirmPassword(userId, c.req.valid('json').password);
    const context = actorOf(c);
    await deps.commands.run(chatUserStream(userId), accountDecider, { type: 'Delete', at: iso() }, context);
    await deps.commands.run(keysStream(userId), keysDecider, { type: 'RemoveKeys', at: iso() }, context);
    await revokeSessionsOf(deps, userId, 'account_deleted', context);
    return c.body(null, 204);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/account/turn-credentials', tags, summary: 'Time-limited TURN relay credentials (TURN REST convention)',
    middleware: [auth] as const,
    responses: { 200: ok(TurnCredentials, 'credentials valid for 24 hours'), ...chatErrors({ ...AUTH_ERRORS, 503: 'no TURN relay is configured' }) },
  }), (c) => {
    const { turnUrls, turnSecret } = deps.config;
    if (!turnSecret || turnUrls.length === 0) throw new ApiError(503, 'turn_unavailable', 'no TURN relay is configured on this instance');
    const expiry = Math.floor(deps.clock.now().getTime() / 1000) + TURN_TTL_SECONDS;
    const username = `${expiry}:${c.get('chatUser').user_id}`;
    const password = createHmac('sha1', turnSecret).update(username).digest('base64');
    c.header('Cache-Control', 'no-store');
    return c.json({ username, password, ttl: TURN_TTL_SECONDS, uris: turnUrls }, 200);
  });

  return app;
}
