// The identity slice's account routes: GET /api/v1/me, and account administration (admin):
// create with a key shown once, list, change role or activation. The spec is silent on the
// administration routes; they are what an operator needs to run accounts at all. Each has its
// web-UI mirror under /api/... (browser sessions).

import { createRoute } from '@hono/zod-openapi';
import { listUsers, type UserRow } from '../../../projections/orchestration/users.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { actorOf, principalUser, requireKey } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { adminArea } from '../auth/admin-area.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { changeAccount, createAccount } from './commands.ts';
import { revealApiKey } from './keys.ts';
import {
  AccountPage,
  AdminAccount,
  CreateAccountBody,
  CreatedAccount,
  Me,
  PatchAccountBody,
  UserIdParam,
} from './schemas.ts';

/** An account as the API shows it; the key only where the spec shows it. */
export function accountView(user: UserRow) {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    role: user.role,
    auth_source: user.auth_source,
    is_active: user.is_active,
    created_at: user.created_at.toISOString(),
    updated_at: user.updated_at.toISOString(),
  };
}

const adminView = (user: UserRow) => ({ ...accountView(user), principal_type: user.principal_type });

export const USERS_PAGE = { defaultLimit: 50, maxLimit: 200 };
const tags = ['accounts and keys'];
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'admin role required' };

export function userRoutes(deps: OrchDeps) {
  // Rows served from the principal cache are the same objects request after request: unseal
  // their key once. Entries go with the rows when the cache drops them.
  const revealed = new WeakMap<UserRow, string>();
  const apiKeyOf = (user: UserRow) => {
    let key = revealed.get(user);
    if (key === undefined) revealed.set(user, (key = revealApiKey(deps.sealKey, user.id, user.api_key_sealed)));
    return key;
  };

  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/me',
      tags,
      summary: 'The calling account, with its API key',
      middleware: [requireKey()] as const,
      responses: { 200: ok(Me, 'the caller'), ...orchErrors(AUTH_ERRORS) },
    }),
    (c) => {
      const user = principalUser(c);
      return c.json({ ...accountView(user), api_key: apiKeyOf(user) }, 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/admin/users',
      tags,
      summary: 'Create an account; its API key is shown only in this answer',
      middleware: [adminArea(deps)] as const,
      request: { body: jsonBody(CreateAccountBody) },
      responses: {
        201: ok(CreatedAccount, 'the new account and its key (Cache-Control: no-store)'),
        ...orchErrors({
          ...ADMIN_ERRORS,
          400: 'validation_failed (unknown fields too)',
          409: 'username_taken or email_taken',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const { user, apiKey } = await createAccount(deps, { ...c.req.valid('json'), auth_source: 'local' }, actorOf(c));
      c.header('Cache-Control', 'no-store');
      return c.json({ ...accountView(user), api_key: apiKey }, 201);
    },
    { first: adminArea(deps) },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/admin/users',
      tags,
      summary: 'List accounts (keys are never listed)',
      middleware: [adminArea(deps)] as const,
      request: { query: pageQuery(USERS_PAGE) },
      responses: { 200: ok(AccountPage, 'a page of accounts'), ...orchErrors(ADMIN_ERRORS) },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const { rows, total } = await listUsers(deps.db, query.limit, query.offset);
      return c.json(page('users', rows.map(adminView), total, query), 200);
    },
    { first: adminArea(deps) },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'patch',
      path: '/api/v1/admin/users/{user_id}',
      tags,
      summary: "Change an account's role or activation",
      middleware: [adminArea(deps)] as const,
      request: { params: UserIdParam, body: jsonBody(PatchAccountBody) },
      responses: {
        200: ok(AdminAccount, 'the account as changed'),
        ...orchErrors({
          ...ADMIN_ERRORS,
          400: 'validation_failed',
          404: 'user_not_found',
          409: 'cannot_demote_self or not_an_account',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const user = await changeAccount(
        deps,
        principalUser(c).id,
        c.req.valid('param').user_id,
        c.req.valid('json'),
        actorOf(c),
      );
      return c.json(adminView(user), 200);
    },
    { first: adminArea(deps) },
  );

  return app;
}
