// Communities: POST/GET /api/communities, GET/PATCH/DELETE /api/communities/{cid},
// transfer-ownership, leave, members, role and nickname, kick. Invites are in ./invites.ts,
// bans, timeouts and warnings in ./moderation.ts. Creation is for instance admins and the owner
// unless CHATSVC_COMMUNITY_CREATION=open; a community starts non-discoverable with its creator
// as `owner`. Role rules: domain/chat/communities/roles.ts.

import { createRoute, z } from '@hono/zod-openapi';
import { randomUUID } from 'node:crypto';
import { communityDecider, type CommunityCommand } from '../../../domain/chat/communities/decider.ts';
import { communityStream } from '../../../domain/chat/communities/events.ts';
import { COMMUNITY_ROLES } from '../../../domain/chat/communities/roles.ts';
import { communitiesOf, communityAccess, communityMembers } from '../../../projections/chat/communities.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { communityFor, isUuid, notFound } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { leaveCommunitySpaces } from './cascade.ts';
import { Community, CommunityParam, communityView, CreateCommunityBody, Member, MemberParam, memberView, UpdateCommunityBody, UserRef } from './schemas.ts';
import type { Context } from 'hono';

const tags = ['communities'];
export const MEMBER_ERRORS = { ...AUTH_ERRORS, 403: 'not a member, or the role does not allow it', 404: 'no such community' };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Run a community command as the caller. */
export function communityCommand(deps: ChatDeps, c: Context<ChatEnv>, communityId: string, command: DistributiveOmit<CommunityCommand, 'actor_id' | 'at'>) {
  const full = { ...command, actor_id: c.get('chatUser').user_id, at: deps.clock.now().toISOString() } as CommunityCommand;
  return deps.commands.run(communityStream(communityId), communityDecider, full, actorOf(c));
}

export function communityRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const current = async (c: Context<ChatEnv>, cid: string) => {
    const access = await communityAccess(deps.db, cid, me(c));
    if (!access) throw notFound('community');
    return communityView(access.community, access.role);
  };

  app.openapi(createRoute({
    method: 'post', path: '/api/communities', tags, summary: 'Create a community (instance admins, or anyone when CHATSVC_COMMUNITY_CREATION=open)',
    description: 'The community starts non-discoverable, with the caller as its owner.', middleware: [auth] as const,
    request: { body: jsonBody(CreateCommunityBody) },
    responses: { 201: ok(Community, 'created'), ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error', 403: 'community creation is for instance admins', 413: 'body too large' }) },
  }), async (c) => {
    const user = c.get('chatUser');
    if (deps.config.communityCreation !== 'open' && !user.is_admin && !user.is_owner) throw new ApiError(403, 'forbidden', 'community creation is for instance admins');
    const body = c.req.valid('json');
    const id = randomUUID();
    await communityCommand(deps, c, id, { type: 'Create', community_id: id, name: body.name, description: body.description });
    return c.json(await current(c, id), 201);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/communities', tags, summary: 'The communities the caller belongs to', middleware: [auth] as const,
    responses: { 200: ok(z.object({ communities: z.array(Community) }).openapi('CommunityList'), 'oldest first'), ...chatErrors(AUTH_ERRORS) },
  }), async (c) => c.json({ communities: (await communitiesOf(deps.db, me(c))).map((row) => communityView(row, row.role)) }, 200));

  app.openapi(createRoute({
    method: 'get', path: '/api/communities/{cid}', tags, summary: 'A community (members only)', middleware: [auth] as const,
    request: { params: CommunityParam },
    responses: { 200: ok(Community, 'the community'), ...chatErrors(MEMBER_ERRORS) },
  }), async (c) => {
    const access = await communityFor(deps.db, c.req.valid('param').cid, me(c));
    return c.json(communityView(access.community, access.role), 200);
  });

  app.openapi(createRoute({
    method: 'patch', path: '/api/communities/{cid}', tags, summary: 'Change name, description, theme, welcome message, discoverable (owner or admin)', middleware: [auth] as const,
    request: { params: CommunityParam, body: jsonBody(UpdateCommunityBody) },
    responses: { 200: ok(Community, 'the community'), ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error', 413: 'body too large' }) },
  }), async (c) => {
    const { cid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    await communityCommand(deps, c, cid, { type: 'Update', changes: c.req.valid('json') });
    return c.json(await current(c, cid), 200);
  });

  app.openapi(createRoute({
    method: 'delete', path: '/api/communities/{cid}', tags, summary: 'Delete the community (owner only)', middleware: [auth] as const,
    request: { params: CommunityParam },
    responses: { 204: { description: 'deleted' }, ...chatErrors(MEMBER_ERRORS) },
  }), async (c) => {
    const { cid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    await communityCommand(deps, c, cid, { type: 'Delete' });
    return c.body(null, 204);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/communities/{cid}/transfer-ownership', tags, summary: 'Hand the community to another member (owner only; the old owner becomes admin)', middleware: [auth] as const,
    request: { params: CommunityParam, body: jsonBody(UserRef) },
    responses: { 200: ok(Community, 'the community'), ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error', 404: 'no such community, or the user is not a member' }) },
  }), async (c) => {
    const { cid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    await communityCommand(deps, c, cid, { type: 'TransferOwnership', to: c.req.valid('json').user_id });
    return c.json(await current(c, cid), 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/communities/{cid}/leave', tags, summary: 'Leave the community (the owner transfers ownership first)', middleware: [auth] as const,
    request: { params: CommunityParam },
    responses: { 204: { description: 'left, with its groups and channels' }, ...chatErrors({ ...MEMBER_ERRORS, 409: 'the owner must transfer ownership first' }) },
  }), async (c) => {
    const { cid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    await communityCommand(deps, c, cid, { type: 'Leave' });
    await leaveCommunitySpaces(deps, cid, me(c), me(c), actorOf(c));
    return c.body(null, 204);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/communities/{cid}/members', tags, summary: 'Members with their roles and nicknames', middleware: [auth] as const,
    request: { params: CommunityParam },
    responses: { 200: ok(z.object({ members: z.array(Member) }).openapi('CommunityMembers'), 'oldest member first'), ...chatErrors(MEMBER_ERRORS) },
  }), async (c) => {
    const { cid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    return c.json({ members: (await communityMembers(deps.db, cid)).map(memberView) }, 200);
  });

  const memberAfter = async (cid: string, uid: string) => {
    const member = (await communityMembers(deps.db, cid)).find((m) => m.user_id === uid);
    if (!member) throw new ApiError(404, 'member_not_found', 'that user is not a member of this community');
    return memberView(member);
  };

  app.openapi(createRoute({
    method: 'put', path: '/api/communities/{cid}/members/{uid}/role', tags,
    summary: 'Set a member\'s role: the owner sets any role below owner, an admin moderator or member; nobody changes someone at or above their own role',
    middleware: [auth] as const,
    request: { params: MemberParam, body: jsonBody(z.strictObject({ role: z.enum(COMMUNITY_ROLES) }).openapi('RoleRequest')) },
    responses: { 200: ok(Member, 'the member'), ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error; owner moves with transfer-ownership', 404: 'no such community or member' }) },
  }), async (c) => {
    const { cid, uid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    if (!isUuid(uid)) throw new ApiError(404, 'member_not_found', 'that user is not a member of this community');
    await communityCommand(deps, c, cid, { type: 'SetRole', user_id: uid, role: c.req.valid('json').role });
    return c.json(await memberAfter(cid, uid), 200);
  });

  app.openapi(createRoute({
    method: 'put', path: '/api/communities/{cid}/members/{uid}/nickname', tags, summary: 'Set a nickname (one\'s own, or as a moderator for someone below)', middleware: [auth] as const,
    request: { params: MemberParam, body: jsonBody(z.strictObject({ nickname: z.string().trim().min(1).max(64).nullable() }).openapi('NicknameRequest')) },
    responses: { 200: ok(Member, 'the member'), ...chatErrors({ ...MEMBER_ERRORS, 400: 'validation error', 404: 'no such community or member' }) },
  }), async (c) => {
    const { cid, uid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    if (!isUuid(uid)) throw new ApiError(404, 'member_not_found', 'that user is not a member of this community');
    await communityCommand(deps, c, cid, { type: 'SetNickname', user_id: uid, nickname: c.req.valid('json').nickname });
    return c.json(await memberAfter(cid, uid), 200);
  });

  app.openapi(createRoute({
    method: 'delete', path: '/api/communities/{cid}/members/{uid}', tags, summary: 'Kick a member (moderator or above, over someone below)', middleware: [auth] as const,
    request: { params: MemberParam },
    responses: { 204: { description: 'kicked, from its groups and channels too' }, ...chatErrors({ ...MEMBER_ERRORS, 404: 'no such community or member' }) },
  }), async (c) => {
    const { cid, uid } = c.req.valid('param');
    await communityFor(deps.db, cid, me(c));
    if (!isUuid(uid)) throw new ApiError(404, 'member_not_found', 'that user is not a member of this community');
    await communityCommand(deps, c, cid, { type: 'Kick', user_id: uid });
    await leaveCommunitySpaces(deps, cid, uid, me(c), actorOf(c));
    return c.body(null, 204);
  });

  return app;
}
