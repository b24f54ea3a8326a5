// Community moderation: bans (GET /api/communities/{cid}/bans, POST/DELETE .../bans/{uid}),
// channel timeouts (POST /api/communities/{cid}/channels/{chid}/timeout, DELETE
// .../timeout/{uid}) and warnings (POST .../warn, GET .../warnings/{uid}). Every action resolves
// the actor's community role (moderator or above, over someone below).

import { createRoute, z } from '@hono/zod-openapi';
import { isModerator } from '../../../domain/chat/communities/decider.ts';
import { communityBans, warningsOf } from '../../../projections/chat/communities.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, jsonContent, ok } from '../../shared/openapi.ts';
import { communityFor, notFound } from '../access.ts';
import { isUuid, uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { chatErrors, chatRouter } from '../router.ts';
import { banMember, communityChannel, liftTimeout, timeoutMember, unbanMember, warnMember } from './commands.ts';
import { MEMBER_ERRORS } from './routes.ts';
import { CommunityParam, MemberParam } from './schemas.ts';

const tags = ['moderation'];
/** A timeout lasts at most 28 days. */
export const TIMEOUT_MAX_SECS = 28 * 24 * 3600;

const Ban = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    reason: z.string().nullable(),
    banned_by: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('CommunityBan');
const Warning = z
  .object({
    id: z.uuid(),
    channel_id: z.uuid(),
    user_id: z.uuid(),
    reason: z.string(),
    warned_by: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('Warning');
const ChannelParam = uuidParams('cid', 'chid');
const ChannelMemberParam = uuidParams('cid', 'chid', 'uid');
const reason = z.string().trim().min(1).max(500);

export function moderationRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const userParam = (uid: string) => {
    if (!isUuid(uid)) throw notFound('user');
    return uid;
  };

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/bans',
      tags,
      summary: 'Banned users (moderator or above)',
      middleware: [auth] as const,
      request: { params: CommunityParam },
      responses: {
        200: ok(z.object({ bans: z.array(Ban) }).openapi('CommunityBans'), 'oldest first'),
        ...chatErrors(MEMBER_ERRORS),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      const access = await communityFor(deps.db, cid, c.get('chatUser').user_id);
      if (!isModerator(access.role))
        throw new ApiError(403, 'insufficient_role', 'listing bans needs community role moderator or above');
      return c.json(
        { bans: (await communityBans(deps.db, cid)).map((b) => ({ ...b, created_at: b.created_at.toISOString() })) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/bans/{uid}',
      tags,
      summary: 'Ban a user (removed now, and no invite lets them back in)',
      middleware: [auth] as const,
      request: {
        params: MemberParam,
        body: { ...jsonContent(z.strictObject({ reason: reason.optional() }).openapi('BanRequest')), required: false },
      },
      responses: {
        204: { description: 'banned' },
        ...chatErrors({
          ...MEMBER_ERRORS,
          400: 'validation error, or banning oneself',
          404: 'no such community or user',
        }),
      },
    }),
    async (c) => {
      const { cid, uid } = c.req.valid('param');
      const body = c.req.header('content-type') ? c.req.valid('json') : {};
      await banMember(
        deps,
        { community_id: cid, user_id: c.get('chatUser').user_id, target_id: uid, reason: body?.reason ?? null },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/communities/{cid}/bans/{uid}',
      tags,
      summary: 'Lift a ban (moderator or above)',
      middleware: [auth] as const,
      request: { params: MemberParam },
      responses: {
        204: { description: 'not banned (any more)' },
        ...chatErrors({ ...MEMBER_ERRORS, 404: 'no such community or user' }),
      },
    }),
    async (c) => {
      const { cid, uid } = c.req.valid('param');
      await unbanMember(deps, { community_id: cid, user_id: c.get('chatUser').user_id, target_id: uid }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/channels/{chid}/timeout',
      tags,
      summary: 'Time a member out of a channel: they cannot post there until it ends',
      middleware: [auth] as const,
      request: {
        params: ChannelParam,
        body: jsonBody(
          z
            .strictObject({
              user_id: z.uuid(),
              duration_secs: z.number().int().min(1).max(TIMEOUT_MAX_SECS),
              reason: reason.nullable().optional(),
            })
            .openapi('TimeoutRequest'),
        ),
      },
      responses: {
        200: ok(
          z.object({ channel_id: z.uuid(), user_id: z.uuid(), until: z.iso.datetime() }).openapi('Timeout'),
          'timed out',
        ),
        ...chatErrors({
          ...MEMBER_ERRORS,
          400: 'validation error',
          404: 'no such community, channel in it, or member',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const { cid, chid } = c.req.valid('param');
      const body = c.req.valid('json');
      const { until } = await timeoutMember(
        deps,
        {
          community_id: cid,
          channel_id: chid,
          user_id: c.get('chatUser').user_id,
          target_id: body.user_id,
          duration_secs: body.duration_secs,
          reason: body.reason ?? null,
        },
        actorOf(c),
      );
      return c.json({ channel_id: chid, user_id: body.user_id, until }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/communities/{cid}/channels/{chid}/timeout/{uid}',
      tags,
      summary: 'End a timeout early',
      middleware: [auth] as const,
      request: { params: ChannelMemberParam },
      responses: {
        204: { description: 'not timed out (any more)' },
        ...chatErrors({ ...MEMBER_ERRORS, 404: 'no such community, channel in it, or user' }),
      },
    }),
    async (c) => {
      const { cid, chid, uid } = c.req.valid('param');
      await liftTimeout(
        deps,
        { community_id: cid, channel_id: chid, user_id: c.get('chatUser').user_id, target_id: uid },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/channels/{chid}/warn',
      tags,
      summary: 'Warn a member (recorded; the member sees their warnings)',
      middleware: [auth] as const,
      request: {
        params: ChannelParam,
        body: jsonBody(z.strictObject({ user_id: z.uuid(), reason }).openapi('WarnRequest')),
      },
      responses: {
        201: ok(Warning, 'the warning'),
        ...chatErrors({
          ...MEMBER_ERRORS,
          400: 'validation error',
          404: 'no such community, channel in it, or member',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const { cid, chid } = c.req.valid('param');
      const body = c.req.valid('json');
      const warning = await warnMember(
        deps,
        {
          community_id: cid,
          channel_id: chid,
          user_id: c.get('chatUser').user_id,
          target_id: body.user_id,
          reason: body.reason,
        },
        actorOf(c),
      );
      return c.json({ ...warning, created_at: warning.created_at.toISOString() }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/channels/{chid}/warnings/{uid}',
      tags,
      summary: "A member's warnings in the community (moderators, or the member themself)",
      middleware: [auth] as const,
      request: { params: ChannelMemberParam },
      responses: {
        200: ok(
          z.object({ warnings: z.array(Warning) }).openapi('Warnings'),
          'oldest first, every channel of the community',
        ),
        ...chatErrors({ ...MEMBER_ERRORS, 404: 'no such community, channel in it, or user' }),
      },
    }),
    async (c) => {
      const { cid, chid, uid } = c.req.valid('param');
      const me = c.get('chatUser').user_id;
      const access = await communityChannel(deps.db, cid, chid, me);
      const target = userParam(uid);
      if (target !== me && !isModerator(access.role))
        throw new ApiError(403, 'insufficient_role', 'reading warnings needs community role moderator or above');
      return c.json(
        {
          warnings: (await warningsOf(deps.db, cid, target)).map((w) => ({
            ...w,
            created_at: w.created_at.toISOString(),
          })),
        },
        200,
      );
    },
  );

  return app;
}
