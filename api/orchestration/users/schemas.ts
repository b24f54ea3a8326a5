// Request and response schemas of the identity slice (`users`).

import { z } from '@hono/zod-openapi';
import { uuidParams } from '../../shared/params.ts';
import { ROLES } from '../../../domain/orchestration/users/decider.ts';
import { pageFields } from '../../shared/pagination.ts';

const username = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, dot, dash, underscore');
const password = z.string().min(12, 'password must be at least 12 characters').max(1024);

export const RegisterBody = z.object({ username, email: z.email(), password }).openapi('RegisterRequest');
export const LoginBody = z
  .object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) })
  .openapi('LoginRequest');

/** The flat user of /auth/register and /auth/login (no `ok` key, no nested `user`). */
export const FlatUser = z
  .object({ id: z.uuid(), username: z.string(), email: z.string(), role: z.enum(ROLES) })
  .openapi('FlatUser');

/** GET /auth/session */
export const SessionState = z
  .object({
    authenticated: z.boolean().openapi({ description: 'a browser session (cookie) is signed in' }),
    user: FlatUser.optional().openapi({ description: 'present when authenticated' }),
    login: z.enum(['password', 'forward_auth']).openapi({ description: 'how this server signs people in' }),
    logout_url: z
      .string()
      .optional()
      .openapi({ description: 'forward-auth: the SSO sign-out page (ORCH_FORWARD_AUTH_LOGOUT_URL), when set' }),
  })
  .openapi('SessionState');

export const Account = z
  .object({
    id: z.uuid(),
    username: z.string(),
    email: z.string(),
    role: z.enum(ROLES),
    auth_source: z.string(),
    is_active: z.boolean(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Account');

export const Me = Account.extend({
  api_key: z.string().openapi({ description: "the caller's API key, in plaintext" }),
}).openapi('Me');
export const AdminAccount = Account.extend({ principal_type: z.enum(['account', 'service', 'agent']) }).openapi(
  'AdminAccount',
);
export const CreatedAccount = Account.extend({
  api_key: z.string().openapi({ description: 'shown only this once' }),
}).openapi('CreatedAccount');
export const AccountPage = z.object({ users: z.array(AdminAccount), ...pageFields }).openapi('AccountPage');

export const CreateAccountBody = z
  .strictObject({
    username,
    email: z.email(),
    role: z.enum(ROLES),
    password: password.optional(),
  })
  .openapi('CreateAccountRequest');

export const PatchAccountBody = z
  .strictObject({ role: z.enum(ROLES).optional(), is_active: z.boolean().optional() })
  .refine((b) => b.role !== undefined || b.is_active !== undefined, 'send role and/or is_active')
  .openapi('PatchAccountRequest');

export const UserIdParam = uuidParams('user_id');

export const Rotation = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    api_key: z.string(),
    rotated_at: z.iso.datetime(),
    message: z.string(),
  })
  .openapi('ApiKeyRotation');
