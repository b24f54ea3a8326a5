// Community invites: GET/POST /api/communities/{cid}/invites, DELETE .../invites/{iid},
// GET /api/community-invites/{code} and POST .../accept. A code is `ci_` + 22 random
// characters; the log holds its SHA-256 and a sealed copy (moderators list their community's
// codes again). `grants_role` pre-assigns a role on acceptance: only the owner mints
// admin-grant invites, the owner or an admin moderator-grant ones. A banned user cannot join
// through any invite.

import { createRoute, z } from '@hono/zod-openapi';
import { openSecret } from '../../../crypto/seal.ts';
import { isModerator } from '../../../domain/chat/communities/decider.ts';
import { GRANTABLE_ROLES } from '../../../domain/chat/communities/roles.ts';
import { communityInvites, type CommunityInviteRow } from '../../../projections/chat/communities.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { communityFor } from '../access.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { acceptInvite, inviteByCode, inviteSealContext, mintInvite, revokeInvite } from './commands.ts';
import { MEMBER_ERRORS } from './routes.ts';
import { Community, CommunityParam, communityView, InviteBody } from './schemas.ts';

const tags = ['communities'];
const CodeParam = z.object({
  code: z
    .string()
    .max(128)
    .openapi({ param: { name: 'code', in: 'path' } }),
});

const Invite = z
  .object({
    id: z.uuid(),
    code: z.string(),
    grants_role: z.enum(GRANTABLE_ROLES).nullable(),
    max_uses: z.number().int().nullable(),
    uses: z.number().int(),
    expires_at: z.iso.datetime().nullable(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('CommunityInvite');

const InviteInfo = z
  .object({
    community_id: z.uuid(),
    name: z.string().nullable().openapi({ description: 'null for a non-discoverable community' }),
    description: z.string().nullable().openapi({ description: 'null for a non-discoverable community' }),
    discoverable: z.boolean(),
    member_count: z.number().int(),
    grants_role: z.enum(GRANTABLE_ROLES).nullable(),
    expires_at: z.iso.datetime().nullable(),
  })
  .openapi('CommunityInviteInfo');

export function communityInviteRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const view = (row: CommunityInviteRow) => ({
    id: row.id,
    code: openSecret(deps.sealKey, row.code_sealed, inviteSealContext(row.id)),
    grants_role: row.grants_role,
    max_uses: row.max_uses,
    uses: row.uses,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/invites',
      tags,
      summary: 'Active invites with their codes (moderator or above)',
      middleware: [auth] as const,
      request: { params: CommunityParam },
      responses: {
        200: ok(z.object({ invites: z.array(Invite) }).openapi('CommunityInviteList'), 'oldest first'),
        ...chatErrors(MEMBER_ERRORS),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      const access = await communityFor(deps.db, cid, c.get('chatUser').user_id);
      if (!isModerator(access.role))
        throw new ApiError(403, 'insufficient_role', 'listing invites needs community role moderator or above');
      return c.json({ invites: (await communityInvites(deps.db, cid)).map(view) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/invites',
      tags,
      summary: 'Mint an invite (moderator or above; grants_role admin: owner only, moderator: owner or admin)',
      middleware: [auth] as const,
      request: { params: CommunityParam, body: jsonBody(InviteBody) },
      responses: {
        201: ok(Invite, 'the invite, with its code'),
        ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error, or expires_at in the past', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      const row = await mintInvite(
        deps,
        { community_id: cid, user_id: c.get('chatUser').user_id, ...c.req.valid('json') },
        actorOf(c),
      );
      return c.json(view(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/communities/{cid}/invites/{iid}',
      tags,
      summary: 'Revoke an invite (moderator or above; a role-granting one needs a role that could mint it)',
      middleware: [auth] as const,
      request: { params: uuidParams('cid', 'iid') },
      responses: {
        204: { description: 'revoked' },
        ...chatErrors({ ...MEMBER_ERRORS, 404: 'no such community or invite' }),
      },
    }),
    async (c) => {
      const { cid, iid } = c.req.valid('param');
      await revokeInvite(deps, { community_id: cid, user_id: c.get('chatUser').user_id, invite_id: iid }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/community-invites/{code}',
      tags,
      summary: 'What an invite leads to (name and description redacted for a non-discoverable community)',
      middleware: [auth] as const,
      request: { params: CodeParam },
      responses: {
        200: ok(InviteInfo, 'the invite'),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such invite, or it expired, was revoked or used up' }),
      },
    }),
    async (c) => {
      const invite = await inviteByCode(deps, c.req.valid('param').code);
      const community = invite.community;
      return c.json(
        {
          community_id: community.id,
          name: community.discoverable ? community.name : null,
          description: community.discoverable ? community.description : null,
          discoverable: community.discoverable,
          member_count: community.member_count,
          grants_role: invite.grants_role,
          expires_at: invite.expires_at?.toISOString() ?? null,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/community-invites/{code}/accept',
      tags,
      summary: 'Join through an invite (a member already stays as they are)',
      middleware: [auth] as const,
      request: { params: CodeParam },
      responses: {
        200: ok(Community, 'the community joined'),
        ...chatErrors({
          ...AUTH_ERRORS,
          403: 'banned from the community',
          404: 'no such invite, or it expired, was revoked or used up',
        }),
      },
    }),
    async (c) => {
      const access = await acceptInvite(
        deps,
        { user_id: c.get('chatUser').user_id, code: c.req.valid('param').code },
        actorOf(c),
      );
      return c.json(communityView(access.community, access.role), 200);
    },
  );

  return app;
}
