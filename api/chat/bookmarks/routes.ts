// Bookmarks: POST and DELETE /api/bookmarks/{message_id}, GET /api/bookmarks (paged, newest
// first, each with its message; those the caller can no longer read are left out and counted
// in `unavailable`).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bookmarksOf } from '../../../projections/chat/bookmarks.ts';
import { pageFields, pageQuery } from '../../shared/pagination.ts';
import { ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { Message, messageView } from '../messages/routes.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { addBookmark, removeBookmark } from './commands.ts';

const tags = ['bookmarks'];
export const BOOKMARK_PAGE = { defaultLimit: 50, maxLimit: 100 };

const Bookmark = z
  .object({ message_id: z.uuid(), channel_id: z.uuid(), bookmarked_at: z.iso.datetime(), message: Message })
  .openapi('Bookmark');
const Param = uuidParams('message_id');

export function bookmarkRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/bookmarks/{message_id}',
      tags,
      summary: 'Bookmark a message the caller can read (201; already bookmarked: 200)',
      middleware: [auth] as const,
      request: { params: Param },
      responses: {
        201: ok(z.object({ message_id: z.uuid(), channel_id: z.uuid() }).openapi('BookmarkAdded'), 'bookmarked'),
        200: ok(z.object({ message_id: z.uuid(), channel_id: z.uuid() }), 'already bookmarked'),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such message, or one the caller cannot read' }),
      },
    }),
    async (c) => {
      const { message, created } = await addBookmark(
        deps,
        { user_id: me(c), message_id: c.req.valid('param').message_id },
        actorOf(c),
      );
      return c.json({ message_id: message.id, channel_id: message.channel_id }, created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/bookmarks/{message_id}',
      tags,
      summary: 'Remove a bookmark (204 whether or not there was one)',
      middleware: [auth] as const,
      request: { params: Param },
      responses: {
        204: { description: 'not bookmarked (any more)' },
        ...chatErrors({ ...AUTH_ERRORS, 404: 'not a message id' }),
      },
    }),
    async (c) => {
      await removeBookmark(deps, { user_id: me(c), message_id: c.req.valid('param').message_id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/bookmarks',
      tags,
      summary: "The caller's bookmarks, newest first, with their messages",
      middleware: [auth] as const,
      description:
        '`total` counts the readable ones; bookmarks of messages the caller can no longer read (deleted, or a channel left) are left out and counted in `unavailable`.',
      request: { query: pageQuery(BOOKMARK_PAGE) },
      responses: {
        200: ok(
          z.object({ bookmarks: z.array(Bookmark), ...pageFields, unavailable: z.number().int() }).openapi('Bookmarks'),
          'newest first',
        ),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      const { limit, offset } = c.req.valid('query');
      const found = await bookmarksOf(deps.db, me(c), limit, offset);
      return c.json(
        {
          bookmarks: found.items.map((m) => ({
            message_id: m.id,
            channel_id: m.channel_id,
            bookmarked_at: m.bookmarked_at.toISOString(),
            message: messageView(m),
          })),
          total: found.total,
          limit,
          offset,
          unavailable: found.unavailable,
        },
        200,
      );
    },
  );

  return app;
}
