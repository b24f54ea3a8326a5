// Channels: GET/POST /api/channels (standalone: the creator owns it, `member_ids` are its first
// members), GET/PATCH /api/channels/{id} (name, topic, slow mode, read-only, archived: channel
// moderators and above), join (group channels the caller can see), leave,
// transfer-ownership, members, PATCH .../members/{user_id}/role, and POST .../kick, /ban,
// /unban. Ranks: domain/chat/channels/roles.ts; reads: ../access.ts.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { channelMembers, channelsOf } from '../../../projections/chat/channels.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { channelFor, memberChannel, type ChannelAccess } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  createChannel,
  joinChannel,
  leaveChannel,
  moderateChannelMember,
  setChannelRole,
  transferChannelOwnership,
  updateChannel,
} from './commands.ts';
import { Channel, channelView } from './schemas.ts';

const tags = ['channels'];
export const CHANNEL_ERRORS = {
  ...AUTH_ERRORS,
  403: 'not a member, or the role does not allow it',
  404: 'no such channel',
};
const IdParam = uuidParams('id');
const MemberParam = uuidParams('id', 'user_id');
const ChannelMember = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    role: z.enum(['owner', 'moderator', 'member']),
    joined_at: z.iso.datetime(),
  })
  .openapi('ChannelMember');
/** Members named when a standalone channel is created. */
export const STANDALONE_MEMBERS_MAX = 100;

/** A channel as its caller sees it (the role only for a member). */
const view = (access: ChannelAccess) => channelView(access.channel, access.member ? access.role : null);

export function channelRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels',
      tags,
      summary: "The caller's standalone and group channels (DMs: GET /api/dms)",
      middleware: [auth] as const,
      responses: {
        200: ok(z.object({ channels: z.array(Channel) }).openapi('ChannelList'), 'oldest first'),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) =>
      c.json(
        { channels: (await channelsOf(deps.db, me(c), ['standalone', 'group'])).map((ch) => channelView(ch, ch.role)) },
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels',
      tags,
      summary: 'Create a standalone channel with its first members',
      middleware: [auth] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(100),
              description: z.string().max(1000).default(''),
              member_ids: z.array(z.uuid()).max(STANDALONE_MEMBERS_MAX).default([]),
            })
            .openapi('CreateChannel'),
        ),
      },
      responses: {
        201: ok(Channel, 'created; the caller owns it'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error',
          404: 'a member_id is no live user',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      return c.json(view(await createChannel(deps, { user_id: me(c), ...c.req.valid('json') }, actorOf(c))), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}',
      tags,
      summary: 'A channel (its members, and those who may join it)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: { 200: ok(Channel, 'the channel'), ...chatErrors(CHANNEL_ERRORS) },
    }),
    async (c) => {
      const access = await channelFor(deps.db, c.req.valid('param').id, me(c));
      if (!access.member && !access.joinable)
        throw new ApiError(403, 'not_a_member', 'you are not a member of this channel');
      return c.json(view(access), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/channels/{id}',
      tags,
      summary: 'Change name, topic, slow mode, read-only, archived (channel moderators and above)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(100).optional(),
              topic: z.string().max(1000).nullable().optional(),
              slow_mode_secs: z
                .number()
                .int()
                .min(0)
                .max(21_600)
                .optional()
                .openapi({ description: 'seconds between two posts of a member; 0 turns it off' }),
              read_only: z.boolean().optional().openapi({ description: 'only channel managers post' }),
              archived: z.boolean().optional().openapi({ description: 'nobody posts' }),
            })
            .openapi('UpdateChannel'),
        ),
      },
      responses: {
        200: ok(Channel, 'the channel'),
        ...chatErrors({ ...CHANNEL_ERRORS, 400: 'validation error', 413: 'body too large' }),
      },
    }),
    async (c) => {
      return c.json(
        view(
          await updateChannel(
            deps,
            { channel_id: c.req.valid('param').id, user_id: me(c), changes: c.req.valid('json') },
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
      path: '/api/channels/{id}/join',
      tags,
      summary: 'Join a group channel the caller can see (not banned)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(Channel, 'the channel'),
        ...chatErrors({ ...CHANNEL_ERRORS, 403: 'banned, or a channel the caller cannot join' }),
      },
    }),
    async (c) => {
      return c.json(
        view(await joinChannel(deps, { channel_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c))),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/leave',
      tags,
      summary: 'Leave a channel (the owner transfers first; DMs cannot be left)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        204: { description: 'left' },
        ...chatErrors({ ...CHANNEL_ERRORS, 400: 'a DM', 409: 'the owner must transfer ownership first' }),
      },
    }),
    async (c) => {
      await leaveChannel(deps, { channel_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/transfer-ownership',
      tags,
      summary: 'Hand the channel to another member (the owner, or a community admin)',
      middleware: [auth] as const,
      request: { params: IdParam, body: jsonBody(z.strictObject({ user_id: z.uuid() }).openapi('ChannelTransfer')) },
      responses: {
        200: ok(Channel, 'the channel'),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error',
          404: 'no such channel, or the user is not a member',
        }),
      },
    }),
    async (c) => {
      const access = await transferChannelOwnership(
        deps,
        { channel_id: c.req.valid('param').id, user_id: me(c), to_user_id: c.req.valid('json').user_id },
        actorOf(c),
      );
      return c.json(view(access), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/members',
      tags,
      summary: "The channel's members (members only)",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(z.object({ members: z.array(ChannelMember) }).openapi('ChannelMembers'), 'oldest first'),
        ...chatErrors(CHANNEL_ERRORS),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      return c.json(
        {
          members: (await channelMembers(deps.db, access.channel.id)).map((m) => ({
            ...m,
            joined_at: m.joined_at.toISOString(),
          })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/channels/{id}/members/{user_id}/role',
      tags,
      summary: "Set a member's channel role, moderator or member (channel owner or community admin)",
      middleware: [auth] as const,
      request: {
        params: MemberParam,
        body: jsonBody(
          z.strictObject({ role: z.enum(['owner', 'moderator', 'member']) }).openapi('ChannelRoleRequest'),
        ),
      },
      responses: {
        200: ok(ChannelMember, 'the member'),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error; ownership moves with transfer-ownership',
          404: 'no such channel or member',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const { id, user_id } = c.req.valid('param');
      const member = await setChannelRole(
        deps,
        { channel_id: id, user_id: me(c), target_id: user_id, role: c.req.valid('json').role },
        actorOf(c),
      );
      return c.json({ ...member, joined_at: member.joined_at.toISOString() }, 200);
    },
  );

  for (const action of ['kick', 'ban', 'unban'] as const) {
    const summary = {
      kick: 'Remove a member (channel moderators and above, over someone below)',
      ban: 'Ban a user from the channel (removed now, cannot join again)',
      unban: 'Lift a channel ban',
    }[action];
    app.openapi(
      createRoute({
        method: 'post',
        path: `/api/channels/{id}/members/{user_id}/${action}`,
        tags,
        summary,
        middleware: [auth] as const,
        request: { params: MemberParam },
        responses: {
          204: { description: 'done' },
          ...chatErrors({ ...CHANNEL_ERRORS, 400: 'a DM, or banning oneself', 404: 'no such channel or member' }),
        },
      }),
      async (c) => {
        const { id, user_id } = c.req.valid('param');
        await moderateChannelMember(deps, { channel_id: id, user_id: me(c), target_id: user_id, action }, actorOf(c));
        return c.body(null, 204);
      },
    );
  }

  return app;
}
