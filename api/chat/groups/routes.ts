// Groups: GET/POST /api/groups, GET /api/groups/discover, GET/PATCH/DELETE /api/groups/{id},
// transfer-ownership, join (public groups), leave, members, GET /api/communities/{cid}/groups,
// group channels (GET/POST /api/groups/{id}/channels, PATCH/DELETE .../channels/{cid}) and
// group invites (GET/POST /api/groups/{id}/invites, GET /api/group-invites/{code}, POST
// .../accept). A group is created by a community admin or owner (at most 200 per community) and
// managed by its owner or a community admin; a private group is 404 to those outside it.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { openSecret } from '../../../crypto/seal.ts';
import { CHANNEL_KINDS } from '../../../domain/chat/channels/events.ts';
import { groupChannels } from '../../../projections/chat/channels.ts';
import {
  communityGroups,
  discoverGroups,
  groupInvites,
  groupMembers,
  groupsOf,
  type GroupInviteRow,
  type GroupRow,
} from '../../../projections/chat/groups.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { communityFor, groupFor } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import { Channel, channelView } from '../channels/schemas.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  acceptGroupInvite,
  createGroup,
  createGroupChannel,
  deleteGroup,
  deleteGroupChannel,
  groupInviteByCode,
  groupInviteSealContext,
  joinGroup,
  leaveGroup,
  mintGroupInvite,
  requireGroupManager,
  transferGroupOwnership,
  updateGroup,
  updateGroupChannel,
} from './commands.ts';

const tags = ['groups'];
const GROUP_ERRORS = {
  ...AUTH_ERRORS,
  403: "not allowed for the caller's role",
  404: 'no such group (or a private one the caller is not in)',
};
const IdParam = uuidParams('id');
const accent = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'accent_color: #rrggbb');

const Group = z
  .object({
    id: z.uuid(),
    community_id: z.uuid(),
    name: z.string(),
    description: z.string(),
    visibility: z.enum(['public', 'private']),
    accent_color: z.string().nullable(),
    owner_id: z.uuid(),
    member_count: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Group');
const groupView = (g: GroupRow) => ({
  id: g.id,
  community_id: g.community_id,
  name: g.name,
  description: g.description,
  visibility: g.visibility,
  accent_color: g.accent_color,
  owner_id: g.owner_id,
  member_count: g.member_count,
  created_at: g.created_at.toISOString(),
  updated_at: g.updated_at.toISOString(),
});
const GroupMember = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    role: z.enum(['owner', 'member']),
    joined_at: z.iso.datetime(),
  })
  .openapi('GroupMember');
const GroupInvite = z
  .object({
    id: z.uuid(),
    code: z.string(),
    max_uses: z.number().int().nullable(),
    uses: z.number().int(),
    expires_at: z.iso.datetime().nullable(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('GroupInvite');
const CodeParam = z.object({
  code: z
    .string()
    .max(128)
    .openapi({ param: { name: 'code', in: 'path' } }),
});

export function groupRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const inviteView = (row: GroupInviteRow) => ({
    id: row.id,
    code: openSecret(deps.sealKey, row.code_sealed, groupInviteSealContext(row.id)),
    max_uses: row.max_uses,
    uses: row.uses,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/groups',
      tags,
      summary: 'The groups the caller belongs to',
      middleware: [auth] as const,
      request: { query: z.object({ community_id: z.uuid().optional() }) },
      responses: {
        200: ok(z.object({ groups: z.array(Group) }).openapi('GroupList'), 'oldest first'),
        ...chatErrors({ ...AUTH_ERRORS, 400: 'community_id is not a UUID' }),
      },
    }),
    async (c) =>
      c.json(
        { groups: (await groupsOf(deps.db, me(c), c.req.valid('query').community_id ?? null)).map(groupView) },
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/groups',
      tags,
      summary: 'Create a group in a community (community admin or owner; at most 200 per community)',
      middleware: [auth] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              community_id: z.uuid(),
              name: z.string().trim().min(1).max(100),
              description: z.string().max(1000).default(''),
              visibility: z.enum(['public', 'private']).default('public'),
              accent_color: accent.nullable().optional(),
            })
            .openapi('CreateGroup'),
        ),
      },
      responses: {
        201: ok(Group, 'created, with the caller as owner'),
        ...chatErrors({
          ...GROUP_ERRORS,
          400: 'validation error',
          404: 'no such community',
          409: 'the community has 200 groups',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      return c.json(groupView(await createGroup(deps, { user_id: me(c), ...body }, actorOf(c))), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/groups/discover',
      tags,
      summary: "Public groups of the caller's communities",
      middleware: [auth] as const,
      responses: {
        200: ok(
          z.object({ groups: z.array(Group.extend({ joined: z.boolean() })) }).openapi('GroupDiscovery'),
          'oldest first',
        ),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) =>
      c.json(
        { groups: (await discoverGroups(deps.db, me(c))).map((g) => ({ ...groupView(g), joined: g.joined })) },
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/groups',
      tags,
      summary: "The community's groups the caller can see (public ones and their own; all for admins)",
      middleware: [auth] as const,
      request: { params: uuidParams('cid') },
      responses: {
        200: ok(z.object({ groups: z.array(Group) }).openapi('CommunityGroups'), 'oldest first'),
        ...chatErrors({ ...AUTH_ERRORS, 403: 'not a member of the community', 404: 'no such community' }),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      const access = await communityFor(deps.db, cid, me(c));
      return c.json(
        {
          groups: (await communityGroups(deps.db, cid, me(c), access.role === 'admin' || access.role === 'owner')).map(
            groupView,
          ),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/groups/{id}',
      tags,
      summary: 'A group',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: { 200: ok(Group, 'the group'), ...chatErrors(GROUP_ERRORS) },
    }),
    async (c) => c.json(groupView((await groupFor(deps.db, c.req.valid('param').id, me(c))).group), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/groups/{id}',
      tags,
      summary: 'Change name, description, visibility, accent colour (group owner or community admin)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(100).optional(),
              description: z.string().max(1000).optional(),
              visibility: z.enum(['public', 'private']).optional(),
              accent_color: accent.nullable().optional(),
            })
            .openapi('UpdateGroup'),
        ),
      },
      responses: {
        200: ok(Group, 'the group'),
        ...chatErrors({ ...GROUP_ERRORS, 400: 'validation error', 413: 'body too large' }),
      },
    }),
    async (c) => {
      return c.json(
        groupView(
          await updateGroup(
            deps,
            { group_id: c.req.valid('param').id, user_id: me(c), changes: c.req.valid('json') },
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
      path: '/api/groups/{id}',
      tags,
      summary: 'Delete a group and its channels (group owner or community admin)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: { 204: { description: 'deleted' }, ...chatErrors(GROUP_ERRORS) },
    }),
    async (c) => {
      await deleteGroup(deps, { group_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/groups/{id}/transfer-ownership',
      tags,
      summary: 'Hand the group to another member (group owner or community admin)',
      middleware: [auth] as const,
      request: { params: IdParam, body: jsonBody(z.strictObject({ user_id: z.uuid() }).openapi('GroupTransfer')) },
      responses: {
        200: ok(Group, 'the group'),
        ...chatErrors({ ...GROUP_ERRORS, 400: 'validation error', 404: 'no such group, or the user is not in it' }),
      },
    }),
    async (c) => {
      return c.json(
        groupView(
          await transferGroupOwnership(
            deps,
            { group_id: c.req.valid('param').id, user_id: me(c), to: c.req.valid('json').user_id },
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
      path: '/api/groups/{id}/join',
      tags,
      summary: "Join a public group of one of the caller's communities",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(Group, 'the group'),
        ...chatErrors({ ...GROUP_ERRORS, 403: 'not a member of the community, or a private group' }),
      },
    }),
    async (c) => {
      return c.json(
        groupView(await joinGroup(deps, { group_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c))),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/groups/{id}/leave',
      tags,
      summary: 'Leave a group and its channels (the owner transfers first)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        204: { description: 'left' },
        ...chatErrors({ ...GROUP_ERRORS, 409: 'the owner must transfer ownership first' }),
      },
    }),
    async (c) => {
      await leaveGroup(deps, { group_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/groups/{id}/members',
      tags,
      summary: "The group's members",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(z.object({ members: z.array(GroupMember) }).openapi('GroupMembers'), 'oldest first'),
        ...chatErrors(GROUP_ERRORS),
      },
    }),
    async (c) => {
      const access = await groupFor(deps.db, c.req.valid('param').id, me(c));
      return c.json(
        {
          members: (await groupMembers(deps.db, access.group.id)).map((m) => ({
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
      method: 'get',
      path: '/api/groups/{id}/channels',
      tags,
      summary: "The group's channels",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(z.object({ channels: z.array(Channel) }).openapi('GroupChannels'), 'oldest first'),
        ...chatErrors(GROUP_ERRORS),
      },
    }),
    async (c) => {
      const access = await groupFor(deps.db, c.req.valid('param').id, me(c));
      return c.json(
        { channels: (await groupChannels(deps.db, access.group.id)).map((ch) => channelView(ch, null)) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/groups/{id}/channels',
      tags,
      summary: 'Create a channel in the group (group owner or community admin; at most 100 per group)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(100),
              kind: z.enum(CHANNEL_KINDS).default('text'),
              description: z.string().max(1000).default(''),
            })
            .openapi('CreateGroupChannel'),
        ),
      },
      responses: {
        201: ok(Channel, 'created; the caller is its owner and first member'),
        ...chatErrors({
          ...GROUP_ERRORS,
          400: 'validation error',
          409: 'the group has 100 channels',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const channel = await createGroupChannel(
        deps,
        { group_id: c.req.valid('param').id, user_id: me(c), ...c.req.valid('json') },
        actorOf(c),
      );
      return c.json(channelView(channel.channel, channel.role), 201);
    },
  );

  const GroupChannelParam = uuidParams('id', 'cid');

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/groups/{id}/channels/{cid}',
      tags,
      summary: "Change a group channel's name, description or topic (group owner or community admin)",
      middleware: [auth] as const,
      request: {
        params: GroupChannelParam,
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(100).optional(),
              description: z.string().max(1000).optional(),
              topic: z.string().max(1000).nullable().optional(),
            })
            .openapi('UpdateGroupChannel'),
        ),
      },
      responses: {
        200: ok(Channel, 'the channel'),
        ...chatErrors({
          ...GROUP_ERRORS,
          400: 'validation error',
          404: 'no such group or channel in it',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const { id, cid } = c.req.valid('param');
      const after = await updateGroupChannel(
        deps,
        { group_id: id, channel_id: cid, user_id: me(c), changes: c.req.valid('json') },
        actorOf(c),
      );
      return c.json(channelView(after.channel, after.role), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/groups/{id}/channels/{cid}',
      tags,
      summary: 'Delete a group channel (group owner or community admin)',
      middleware: [auth] as const,
      request: { params: GroupChannelParam },
      responses: {
        204: { description: 'deleted' },
        ...chatErrors({ ...GROUP_ERRORS, 404: 'no such group or channel in it' }),
      },
    }),
    async (c) => {
      const { id, cid } = c.req.valid('param');
      await deleteGroupChannel(deps, { group_id: id, channel_id: cid, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/groups/{id}/invites',
      tags,
      summary: "The group's invites with their codes (group owner or community admin)",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(z.object({ invites: z.array(GroupInvite) }).openapi('GroupInviteList'), 'oldest first'),
        ...chatErrors(GROUP_ERRORS),
      },
    }),
    async (c) => {
      const access = await groupFor(deps.db, c.req.valid('param').id, me(c));
      requireGroupManager(access, me(c));
      return c.json({ invites: (await groupInvites(deps.db, access.group.id)).map(inviteView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/groups/{id}/invites',
      tags,
      summary: 'Mint a group invite (group owner or community admin)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              max_uses: z.number().int().min(1).max(100_000).nullable().optional(),
              expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
            })
            .openapi('GroupInviteRequest'),
        ),
      },
      responses: {
        201: ok(GroupInvite, 'the invite, with its code'),
        ...chatErrors({ ...GROUP_ERRORS, 400: 'validation error, or expires_at in the past', 413: 'body too large' }),
      },
    }),
    async (c) => {
      return c.json(
        inviteView(
          await mintGroupInvite(
            deps,
            { group_id: c.req.valid('param').id, user_id: me(c), ...c.req.valid('json') },
            actorOf(c),
          ),
        ),
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/group-invites/{code}',
      tags,
      summary: 'What a group invite leads to',
      middleware: [auth] as const,
      request: { params: CodeParam },
      responses: {
        200: ok(
          z
            .object({
              group_id: z.uuid(),
              community_id: z.uuid(),
              name: z.string(),
              visibility: z.enum(['public', 'private']),
              member_count: z.number().int(),
              expires_at: z.iso.datetime().nullable(),
            })
            .openapi('GroupInviteInfo'),
          'the invite',
        ),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such invite, or it expired or was used up' }),
      },
    }),
    async (c) => {
      const { invite, group } = await groupInviteByCode(deps, c.req.valid('param').code);
      return c.json(
        {
          group_id: group.id,
          community_id: group.community_id,
          name: group.name,
          visibility: group.visibility,
          member_count: group.member_count,
          expires_at: invite.expires_at?.toISOString() ?? null,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/group-invites/{code}/accept',
      tags,
      summary: 'Join a group through an invite (members of its community only)',
      middleware: [auth] as const,
      request: { params: CodeParam },
      responses: {
        200: ok(Group, 'the group joined'),
        ...chatErrors({
          ...AUTH_ERRORS,
          403: "not a member of the group's community",
          404: 'no such invite, or it expired or was used up',
        }),
      },
    }),
    async (c) => {
      return c.json(
        groupView(await acceptGroupInvite(deps, { user_id: me(c), code: c.req.valid('param').code }, actorOf(c))),
        200,
      );
    },
  );

  return app;
}
