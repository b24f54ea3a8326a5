// Direct messages: POST /api/dms (`user_id`) and GET /api/dms. A DM needs a shared community,
// and a user the other has blocked cannot start one (403). The channel id is derived from the
// pair (a UUID from SHA-256 of the sorted ids), so the same pair always gets the same channel and
// two concurrent starts meet on one stream.

import { createRoute, z } from '@hono/zod-openapi';
import { createHash } from 'node:crypto';
import { channelDecider, dmPairKey } from '../../../domain/chat/channels/decider.ts';
import { channelStream } from '../../../domain/chat/channels/events.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { channelsOf, channelStanding } from '../../../projections/chat/channels.ts';
import { shareCommunity } from '../../../projections/chat/communities.ts';
import { isBlockedBy } from '../../../projections/chat/users.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { Channel, channelView } from './schemas.ts';

const tags = ['channels'];

/** The DM channel id of a pair of users. */
export function dmChannelId(a: string, b: string): string {
  const hex = createHash('sha256').update(`chat_dm:${dmPairKey(a, b)}`).digest('hex');
  // Shaped as a version-8 (custom) UUID.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const Dm = Channel.extend({ other_user_id: z.uuid() }).openapi('DirectMessageChannel');

export function dmRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(createRoute({
    method: 'post', path: '/api/dms', tags, summary: 'Open the DM with a user who shares a community (the same channel every time)', middleware: [auth] as const,
    request: { body: jsonBody(z.strictObject({ user_id: z.uuid() }).openapi('DmRequest')) },
    responses: {
      200: ok(Dm, 'the pair\'s existing DM'),
      201: ok(Dm, 'the DM, created'),
      ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error, or oneself', 403: 'no shared community, or the other user blocked the caller', 404: 'no such user', 413: 'body too large' }),
    },
  }), async (c) => {
    const me = c.get('chatUser').user_id;
    const other = c.req.valid('json').user_id;
    if (other === me) throw new ApiError(400, 'validation_failed', 'a DM is with someone else');
    const user = await chatUserById(deps.db, other);
    if (!user || user.deleted_at) throw new ApiError(404, 'user_not_found', 'no such user');
    if (!(await shareCommunity(deps.db, me, other))) throw new ApiError(403, 'no_shared_community', 'a DM needs a community you share');
    if (await isBlockedBy(deps.db, me, other)) throw new ApiError(403, 'blocked', 'this user does not accept your messages');
    const id = dmChannelId(me, other);
    const result = await deps.commands.run(channelStream(id), channelDecider, {
      type: 'Create', channel_id: id, scope: 'dm', kind: 'text', group_id: null, community_id: null, name: '', description: '', member_ids: [other],
      existing: 0, actor_id: me, community_role: null, at: deps.clock.now().toISOString(),
    }, actorOf(c));
    const standing = (await channelStanding(deps.db, id, me))!;
    return c.json({ ...channelView(standing.channel, standing.role), other_user_id: other }, result.events.length ? 201 : 200);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/dms', tags, summary: 'The caller\'s DMs', middleware: [auth] as const,
    responses: { 200: ok(z.object({ dms: z.array(Dm) }).openapi('DmList'), 'oldest first'), ...chatErrors(AUTH_ERRORS) },
  }), async (c) => {
    const me = c.get('chatUser').user_id;
    const rows = await channelsOf(deps.db, me, ['dm']);
    const dms = await Promise.all(rows.map(async (ch) => {
      const { rows: others } = await deps.db.query<{ user_id: string }>('SELECT user_id FROM chat_channel_members WHERE channel_id = $1 AND user_id <> $2 LIMIT 1', [ch.id, me]);
      return { ...channelView(ch, ch.role), other_user_id: others[0]?.user_id ?? me };
    }));
    return c.json({ dms }, 200);
  });

  return app;
}
