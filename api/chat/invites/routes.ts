// Registration invites (admin): GET, POST /api/admin/invites and DELETE /api/admin/invites/{id}.
// A code registers one account while CHATSVC_REGISTRATION=invite; it is shown once, at minting.

import { createRoute, z } from '@hono/zod-openapi';
import { listInvites, type InviteRow } from '../../../projections/chat/invites.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatAdmin, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { createInvite, revokeInvite } from './commands.ts';

const tags = ['admin'];
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'instance admin or owner required' };

const Invite = z
  .object({
    id: z.uuid(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
    expires_at: z.iso.datetime().nullable(),
    status: z.enum(['active', 'redeemed', 'expired', 'revoked']),
    redeemed_by: z.uuid().nullable(),
  })
  .openapi('RegistrationInvite');

export function inviteRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const admin = requireChatAdmin();
  const view = (row: InviteRow) => ({
    id: row.id,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    status: row.revoked_at
      ? ('revoked' as const)
      : row.redeemed_at
        ? ('redeemed' as const)
        : row.expires_at && row.expires_at.getTime() <= deps.clock.now().getTime()
          ? ('expired' as const)
          : ('active' as const),
    redeemed_by: row.redeemed_by,
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/invites',
      tags,
      summary: 'Mint a single-use registration invite code',
      middleware: [auth, admin] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              expires_in_hours: z
                .number()
                .int()
                .min(1)
                .max(24 * 365)
                .optional()
                .openapi({ description: 'omitted: never expires' }),
            })
            .openapi('CreateInviteRequest'),
        ),
      },
      responses: {
        201: ok(
          Invite.extend({ code: z.string().openapi({ description: 'shown only this once' }) }).openapi('CreatedInvite'),
          'the invite and its code',
        ),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'validation error', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const { invite, code } = await createInvite(
        deps,
        { user_id: c.get('chatUser').user_id, expires_in_hours: c.req.valid('json').expires_in_hours },
        actorOf(c),
      );
      c.header('Cache-Control', 'no-store');
      return c.json({ ...view(invite), code }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/invites',
      tags,
      summary: 'Registration invites, newest first (codes are never listed)',
      middleware: [auth, admin] as const,
      request: { query: pageQuery({ defaultLimit: 50, maxLimit: 200 }) },
      responses: {
        200: ok(z.object({ invites: z.array(Invite), ...pageFields }).openapi('InvitePage'), 'a page'),
        ...chatErrors(ADMIN_ERRORS),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const { rows, total } = await listInvites(deps.db, query.limit, query.offset);
      return c.json(page('invites', rows.map(view), total, query), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/admin/invites/{id}',
      tags,
      summary: 'Revoke an invite',
      middleware: [auth, admin] as const,
      request: { params: uuidParams('id') },
      responses: {
        204: { description: 'revoked (or already used)' },
        ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such invite' }),
      },
    }),
    async (c) => {
      await revokeInvite(deps, { invite_id: c.req.valid('param').id, user_id: c.get('chatUser').user_id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
