// Communities: POST/GET /api/communities, GET/PATCH/DELETE /api/communities/{cid},
// transfer-ownership, leave, members, role and nickname, kick. Invites are in ./invites.ts,
// bans, timeouts and warnings in ./moderation.ts. Creation is for instance admins and the owner
// unless CHATSVC_COMMUNITY_CREATION=open; a community starts non-discoverable with its creator
// as `owner`. Role rules: domain/chat/communities/roles.ts.

import { createRoute, z } from '@hono/zod-openapi';
import { COMMUNITY_ROLES } from '../../../domain/chat/communities/roles.ts';
import { communitiesOf, communityMembers, type CommunityAccess } from '../../../projections/chat/communities.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { communityFor } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  createCommunity,
  deleteCommunity,
  kickMember,
  leaveCommunity,
  setMemberNickname,
  setMemberRole,
  transferCommunityOwnership,
  updateCommunity,
} from './commands.ts';
import {
  Community,
  CommunityParam,
  communityView,
  CreateCommunityBody,
  Member,
  MemberParam,
  memberView,
  UpdateCommunityBody,
  UserRef,
} from './schemas.ts';
import type { Context } from 'hono';

const tags = ['communities'];
export const MEMBER_ERRORS = {
  ...AUTH_ERRORS,
  403: 'not a member, or the role does not allow it',
  404: 'no such community',
};

const view = (access: CommunityAccess) => communityView(access.community, access.role);

export function communityRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities',
      tags,
      summary: 'Create a community (instance admins, or anyone when CHATSVC_COMMUNITY_CREATION=open)',
      description: 'The community starts non-discoverable, with the caller as its owner.',
      middleware: [auth] as const,
      request: { body: jsonBody(CreateCommunityBody) },
      responses: {
        201: ok(Community, 'created'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error',
          403: 'community creation is for instance admins',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const user = c.get('chatUser');
      if (deps.config.communityCreation !== 'open' && !user.is_admin && !user.is_owner)
        throw new ApiError(403, 'forbidden', 'community creation is for instance admins');
      const body = c.req.valid('json');
      return c.json(
        view(
          await createCommunity(deps, { user_id: me(c), name: body.name, description: body.description }, actorOf(c)),
        ),
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities',
      tags,
      summary: 'The communities the caller belongs to',
      middleware: [auth] as const,
      responses: {
        200: ok(z.object({ communities: z.array(Community) }).openapi('CommunityList'), 'oldest first'),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) =>
      c.json({ communities: (await communitiesOf(deps.db, me(c))).map((row) => communityView(row, row.role)) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}',
      tags,
      summary: 'A community (members only)',
      middleware: [auth] as const,
      request: { params: CommunityParam },
      responses: { 200: ok(Community, 'the community'), ...chatErrors(MEMBER_ERRORS) },
    }),
    async (c) => {
      const access = await communityFor(deps.db, c.req.valid('param').cid, me(c));
      return c.json(communityView(access.community, access.role), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/communities/{cid}',
      tags,
      summary: 'Change name, description, theme, welcome message, discoverable (owner or admin)',
      middleware: [auth] as const,
      request: { params: CommunityParam, body: jsonBody(UpdateCommunityBody) },
      responses: {
        200: ok(Community, 'the community'),
        ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      return c.json(
        view(
          await updateCommunity(deps, { community_id: cid, user_id: me(c), changes: c.req.valid('json') }, actorOf(c)),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/communities/{cid}',
      tags,
      summary: 'Delete the community (owner only)',
      middleware: [auth] as const,
      request: { params: CommunityParam },
      responses: { 204: { description: 'deleted' }, ...chatErrors(MEMBER_ERRORS) },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      await deleteCommunity(deps, { community_id: cid, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/transfer-ownership',
      tags,
      summary: 'Hand the community to another member (owner only; the old owner becomes admin)',
      middleware: [auth] as const,
      request: { params: CommunityParam, body: jsonBody(UserRef) },
      responses: {
        200: ok(Community, 'the community'),
        ...chatErrors({
          ...MEMBER_ERRORS,
          400: 'validation error',
          404: 'no such community, or the user is not a member',
        }),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      return c.json(
        view(
          await transferCommunityOwnership(
            deps,
            { community_id: cid, user_id: me(c), to: c.req.valid('json').user_id },
            actorOf(c),
          ),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/leave',
      tags,
      summary: 'Leave the community (the owner transfers ownership first)',
      middleware: [auth] as const,
      request: { params: CommunityParam },
      responses: {
        204: { description: 'left, with its groups and channels' },
        ...chatErrors({ ...MEMBER_ERRORS, 409: 'the owner must transfer ownership first' }),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      await leaveCommunity(deps, { community_id: cid, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/members',
      tags,
      summary: 'Members with their roles and nicknames',
      middleware: [auth] as const,
      request: { params: CommunityParam },
      responses: {
        200: ok(z.object({ members: z.array(Member) }).openapi('CommunityMembers'), 'oldest member first'),
        ...chatErrors(MEMBER_ERRORS),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      await communityFor(deps.db, cid, me(c));
      return c.json({ members: (await communityMembers(deps.db, cid)).map(memberView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/api/communities/{cid}/members/{uid}/role',
      tags,
      summary:
        "Set a member's role: the owner sets any role below owner, an admin moderator or member; nobody changes someone at or above their own role",
      middleware: [auth] as const,
      request: {
        params: MemberParam,
        body: jsonBody(z.strictObject({ role: z.enum(COMMUNITY_ROLES) }).openapi('RoleRequest')),
      },
      responses: {
        200: ok(Member, 'the member'),
        ...chatErrors({
          ...MEMBER_ERRORS,
          400: 'validation error; owner moves with transfer-ownership',
          404: 'no such community or member',
        }),
      },
    }),
    async (c) => {
      const { cid, uid } = c.req.valid('param');
      return c.json(
        memberView(
          await setMemberRole(
            deps,
            { community_id: cid, user_id: me(c), target_id: uid, role: c.req.valid('json').role },
            actorOf(c),
          ),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: '/api/communities/{cid}/members/{uid}/nickname',
      tags,
      summary: "Set a nickname (one's own, or as a moderator for someone below)",
      middleware: [auth] as const,
      request: {
        params: MemberParam,
        body: jsonBody(
          z.strictObject({ nickname: z.string().trim().min(1).max(64).nullable() }).openapi('NicknameRequest'),
        ),
      },
      responses: {
        200: ok(Member, 'the member'),
        ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error', 404: 'no such community or member' }),
      },
    }),
    async (c) => {
      const { cid, uid } = c.req.valid('param');
      return c.json(
        memberView(
          await setMemberNickname(
            deps,
            { community_id: cid, user_id: me(c), target_id: uid, nickname: c.req.valid('json').nickname },
            actorOf(c),
          ),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/communities/{cid}/members/{uid}',
      tags,
      summary: 'Kick a member (moderator or above, over someone below)',
      middleware: [auth] as const,
      request: { params: MemberParam },
      responses: {
        204: { description: 'kicked, from its groups and channels too' },
        ...chatErrors({ ...MEMBER_ERRORS, 404: 'no such community or member' }),
      },
    }),
    async (c) => {
      const { cid, uid } = c.req.valid('param');
      await kickMember(deps, { community_id: cid, user_id: me(c), target_id: uid }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
