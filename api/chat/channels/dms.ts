// Direct messages: POST /api/dms (`user_id`) and GET /api/dms. A DM needs a shared community,
// and a user the other has blocked cannot start one (403). The channel id is derived from the
// pair (a UUID from SHA-256 of the sorted ids), so the same pair always gets the same channel and
// two concurrent starts meet on one stream (./commands.ts, openDm).

import { createRoute, z } from '@hono/zod-openapi';
import { channelsOf } from '../../../projections/chat/channels.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { openDm } from './commands.ts';
import { Channel, channelView } from './schemas.ts';

const tags = ['channels'];

const Dm = Channel.extend({ other_user_id: z.uuid() }).openapi('DirectMessageChannel');

export function dmRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/dms',
      tags,
      summary: 'Open the DM with a user who shares a community (the same channel every time)',
      middleware: [auth] as const,
      request: { body: jsonBody(z.strictObject({ user_id: z.uuid() }).openapi('DmRequest')) },
      responses: {
        200: ok(Dm, "the pair's existing DM"),
        201: ok(Dm, 'the DM, created'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error, or oneself',
          403: 'no shared community, or the other user blocked the caller',
          404: 'no such user',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const other = c.req.valid('json').user_id;
      const { standing, created } = await openDm(
        deps,
        { user_id: c.get('chatUser').user_id, other_user_id: other },
        actorOf(c),
      );
      return c.json({ ...channelView(standing.channel, standing.role), other_user_id: other }, created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/dms',
      tags,
      summary: "The caller's DMs",
      middleware: [auth] as const,
      responses: {
        200: ok(z.object({ dms: z.array(Dm) }).openapi('DmList'), 'oldest first'),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      const me = c.get('chatUser').user_id;
      const rows = await channelsOf(deps.db, me, ['dm']);
      const dms = await Promise.all(
        rows.map(async (ch) => {
          const { rows: others } = await deps.db.query<{ user_id: string }>(
            'SELECT user_id FROM chat_channel_members WHERE channel_id = $1 AND user_id <> $2 LIMIT 1',
            [ch.id, me],
          );
          return { ...channelView(ch, ch.role), other_user_id: others[0]?.user_id ?? me };
        }),
      );
      return c.json({ dms }, 200);
    },
  );

  return app;
}
