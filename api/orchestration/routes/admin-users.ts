// Account administration (admin): create with a key shown once, list, change role or activation.
// The spec is silent on these routes; they are what an operator needs to run accounts at all.

import { Hono } from 'hono';
import { z } from 'zod';
import { ROLES } from '../../../domain/orchestration/users/decider.ts';
import type { Platform } from '../../../infra/platform.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { validate } from '../../shared/validate.ts';
import { listUsers, userById } from '../accounts/queries.ts';
import { createAccount, updateAccount } from '../accounts/service.ts';
import { actorOf, principalUser, type OrchEnv } from '../auth.ts';
import { accountView } from './me.ts';

const createBody = z.strictObject({
  username: z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, dot, dash, underscore'),
  email: z.email(),
  role: z.enum(ROLES),
  password: z.string().min(12, 'password must be at least 12 characters').max(1024).optional(),
});
const patchBody = z.strictObject({ role: z.enum(ROLES).optional(), is_active: z.boolean().optional() })
  .refine((b) => b.role !== undefined || b.is_active !== undefined, 'send role and/or is_active');
const pageQuery = z.object({
  limit: z.coerce.number().int().catch(50).transform((n) => Math.min(200, Math.max(1, n))).default(50),
  offset: z.coerce.number().int().catch(0).transform((n) => Math.max(0, n)).default(0),
});
const uuid = z.uuid();

export function adminUserRoutes(platform: Platform) {
  return new Hono<OrchEnv>()
    .post('/api/v1/admin/users', validate('json', createBody), async (c) => {
      const { user, apiKey } = await createAccount(platform, { ...c.req.valid('json'), auth_source: 'local' }, actorOf(c));
      c.header('Cache-Control', 'no-store');
      return c.json({ ...accountView(user), api_key: apiKey }, 201);
    })
    .get('/api/v1/admin/users', validate('query', pageQuery), async (c) => {
      const { limit, offset } = c.req.valid('query');
      const { users, total } = await listUsers(platform.pool, limit, offset);
      return c.json({ users: users.map((u) => ({ ...accountView(u), principal_type: u.principal_type })), total, limit, offset });
    })
    .patch('/api/v1/admin/users/:user_id', validate('json', patchBody), async (c) => {
      const id = c.req.param('user_id');
      const target = uuid.safeParse(id).success ? await userById(platform.pool, id) : null;
      if (!target) throw new ApiError(404, 'user_not_found', 'no such user');
      if (target.principal_type !== 'account') throw new ApiError(409, 'not_an_account', 'service principals and agent credentials are managed elsewhere');
      const change = c.req.valid('json');
      if (target.id === principalUser(c).id && (change.is_active === false || (change.role && change.role !== 'admin'))) {
        throw new ApiError(409, 'cannot_demote_self', 'an admin cannot deactivate or demote their own account');
      }
      await updateAccount(platform, target.id, change, actorOf(c));
      const updated = (await userById(platform.pool, target.id))!;
      return c.json({ ...accountView(updated), principal_type: updated.principal_type });
    });
}
