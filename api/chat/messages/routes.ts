// Messages: POST/GET /api/channels/{id}/messages, PATCH/DELETE .../messages/{msg_id}, GET
// .../messages/{msg_id}/history, GET /api/channels/{id}/threads/{msg_id}, search (one channel,
// or every channel the caller reads), pins, read cursors and GET /api/channels/unread. Bodies
// are opaque to the server: ciphertext from E2EE clients, plaintext only from webhooks.

import { createRoute, z } from '@hono/zod-openapi';
import { clampedInt } from '../../shared/pagination.ts';
import type { Context } from 'hono';
import { CIPHERTEXT_MAX, FILES_PER_MESSAGE_MAX, MENTIONS_MAX } from '../../../domain/chat/messages/decider.ts';
import {
  messagesPage,
  messageVersions,
  pinnedMessages,
  readCursors,
  searchMessages,
  threadReplies,
  unreadCounts,
  type MessageRow,
} from '../../../projections/chat/messages.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { memberChannel, notFound } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import { CHANNEL_ERRORS } from '../channels/routes.ts';
import type { ChatDeps } from '../deps.ts';
import {
  channelMessage,
  deleteMessage,
  editMessage,
  moveReadCursor,
  pinMessage,
  postMessage,
  unpinMessage,
} from './commands.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';

const tags = ['messages'];
export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 100;
/** Entries a client may list in `mentions`; the server keeps the channel's members among them, at most 50. */
export const MENTION_LIST_MAX = 200;

export const Message = z
  .object({
    id: z.uuid(),
    channel_id: z.uuid(),
    sender_id: z.uuid(),
    ciphertext: z.string().openapi({ description: "opaque to the server; a webhook message's plaintext" }),
    thread_root_id: z.uuid().nullable(),
    created_at: z.iso.datetime(),
    edited_at: z.iso.datetime().nullable(),
    via_webhook: z.boolean(),
    webhook: z
      .object({ username: z.string(), avatar_url: z.string().nullable() })
      .nullable()
      .openapi({ description: "a webhook post's display name and avatar (sender_id is the webhook's id)" }),
    file_ids: z.array(z.uuid()).openapi({ description: 'uploaded files the message carries (GET /api/files/{id})' }),
    scheduled_for: z.iso.datetime().nullable().openapi({
      description:
        "a scheduled message's send_at (created_at is when it was delivered: later, if the service was down then); null for ordinary messages",
    }),
  })
  .openapi('Message');

export const messageView = (m: MessageRow) => ({
  id: m.id,
  channel_id: m.channel_id,
  sender_id: m.sender_id,
  ciphertext: m.ciphertext,
  thread_root_id: m.thread_root_id,
  created_at: m.created_at.toISOString(),
  edited_at: m.edited_at?.toISOString() ?? null,
  via_webhook: m.via_webhook,
  file_ids: m.file_ids ?? [],
  webhook: m.via_webhook ? { username: m.webhook_username ?? '', avatar_url: m.webhook_avatar_url } : null,
  scheduled_for: m.scheduled_for?.toISOString() ?? null,
});

const IdParam = uuidParams('id');
const MessageParam = uuidParams('id', 'msg_id');
const limitQuery = clampedInt({ default: PAGE_DEFAULT, max: PAGE_MAX });
const SearchQuery = z.object({
  q: z
    .string()
    .trim()
    .max(200)
    .optional()
    .openapi({ description: 'full text over plaintext (webhook) messages only; ciphertext never matches it' }),
  sender: z.uuid().optional(),
  before: z.iso.datetime({ offset: true }).optional(),
  after: z.iso.datetime({ offset: true }).optional(),
  has_file: z.enum(['true', 'false']).optional(),
  limit: limitQuery,
});
const SEARCH_DESCRIPTION =
  'The server cannot read ciphertext: `q` matches plaintext (webhook) messages only, so with `q` only they are returned; ' +
  'without it, `sender`, `before`, `after` and `has_file` filter every message, and clients search the decrypted text themselves. Only channels the caller is a member of.';

export function messageRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const message = (channelId: string, messageId: string) => channelMessage(deps.db, channelId, messageId);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/unread',
      tags,
      summary:
        'Per channel of the caller: unread messages (from others, after the read cursor) and mentions of the caller among them',
      middleware: [auth] as const,
      responses: {
        200: ok(
          z
            .object({
              channels: z.array(
                z.object({
                  channel_id: z.uuid(),
                  unread_count: z.number().int(),
                  mention_count: z.number().int(),
                  last_read_message_id: z.uuid().nullable(),
                }),
              ),
            })
            .openapi('Unread'),
          'every channel of the caller',
        ),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => c.json({ channels: await unreadCounts(deps.db, me(c)) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/messages/search',
      tags,
      summary: 'Search the messages of every channel the caller is a member of',
      description: SEARCH_DESCRIPTION,
      middleware: [auth] as const,
      request: { query: SearchQuery },
      responses: {
        200: ok(z.object({ messages: z.array(Message) }).openapi('MessageSearch'), 'newest first'),
        ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      return c.json({ messages: (await searchMessages(deps.db, me(c), null, filters(q))).map(messageView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/messages/search',
      tags,
      summary: "Search one channel's messages",
      description: SEARCH_DESCRIPTION,
      middleware: [auth] as const,
      request: { params: IdParam, query: SearchQuery },
      responses: {
        200: ok(z.object({ messages: z.array(Message) }).openapi('ChannelMessageSearch'), 'newest first'),
        ...chatErrors({ ...CHANNEL_ERRORS, 400: 'validation error' }),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      return c.json(
        {
          messages: (await searchMessages(deps.db, me(c), access.channel.id, filters(c.req.valid('query')))).map(
            messageView,
          ),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/messages',
      tags,
      summary: 'Post a message (members; not archived, read-only for non-managers, timed out, or within slow mode)',
      description: `\`ciphertext\` at most ${CIPHERTEXT_MAX} characters. The client lists \`mentions\` (the server cannot read the text); members among them are notified, at most ${MENTIONS_MAX}.`,
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              ciphertext: z.string().min(1).max(CIPHERTEXT_MAX),
              thread_root_id: z.uuid().nullable().optional(),
              mentions: z.array(z.uuid()).max(MENTION_LIST_MAX).optional(),
              file_ids: z.array(z.uuid()).max(FILES_PER_MESSAGE_MAX).optional().openapi({
                description:
                  "uploaded files: files uploaded to this channel, or the poster's own without a channel; not quarantined",
              }),
            })
            .openapi('PostMessage'),
        ),
      },
      responses: {
        201: ok(Message, 'posted'),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error',
          403: 'not a member, archived, read-only or timed out',
          404: 'no such channel or thread root',
          413: 'body too large',
          429: 'slow mode or the per-user rate limit (Retry-After)',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const row = await postMessage(deps, { channel_id: c.req.valid('param').id, user_id: me(c), ...body }, actorOf(c));
      return c.json(messageView(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/messages',
      tags,
      summary: 'Messages, newest first; `before` (a message id) pages back without gaps or repeats',
      middleware: [auth] as const,
      request: { params: IdParam, query: z.object({ before: z.uuid().optional(), limit: limitQuery }) },
      responses: {
        200: ok(z.object({ messages: z.array(Message) }).openapi('MessagePage'), 'newest first'),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'before is not a UUID',
          404: 'no such channel, or before is not a message of it',
        }),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      const { before, limit } = c.req.valid('query');
      const rows = await messagesPage(deps.db, access.channel.id, before ?? null, limit);
      if (!rows) throw notFound('message');
      return c.json({ messages: rows.map(messageView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/channels/{id}/messages/{msg_id}',
      tags,
      summary: 'Edit a message (its sender only; earlier versions are kept)',
      middleware: [auth] as const,
      request: {
        params: MessageParam,
        body: jsonBody(z.strictObject({ ciphertext: z.string().min(1).max(CIPHERTEXT_MAX) }).openapi('EditMessage')),
      },
      responses: {
        200: ok(Message, 'the message'),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error',
          403: 'not a member, or not the sender',
          404: 'no such channel or message',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const { id, msg_id } = c.req.valid('param');
      const row = await editMessage(
        deps,
        { channel_id: id, message_id: msg_id, user_id: me(c), ciphertext: c.req.valid('json').ciphertext },
        actorOf(c),
      );
      return c.json(messageView(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/channels/{id}/messages/{msg_id}',
      tags,
      summary: 'Delete a message (its sender, or a channel moderator and above)',
      middleware: [auth] as const,
      request: { params: MessageParam },
      responses: {
        204: { description: 'deleted' },
        ...chatErrors({
          ...CHANNEL_ERRORS,
          403: 'neither the sender nor a moderator',
          404: 'no such channel or message',
        }),
      },
    }),
    async (c) => {
      const { id, msg_id } = c.req.valid('param');
      await deleteMessage(deps, { channel_id: id, message_id: msg_id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/messages/{msg_id}/history',
      tags,
      summary: 'Every version of a message, oldest first',
      middleware: [auth] as const,
      request: { params: MessageParam },
      responses: {
        200: ok(
          z
            .object({
              message_id: z.uuid(),
              versions: z.array(
                z.object({ version: z.number().int(), ciphertext: z.string(), created_at: z.iso.datetime() }),
              ),
            })
            .openapi('MessageHistory'),
          'oldest first',
        ),
        ...chatErrors({ ...CHANNEL_ERRORS, 404: 'no such channel or message' }),
      },
    }),
    async (c) => {
      const { id, msg_id } = c.req.valid('param');
      const access = await memberChannel(deps.db, id, me(c));
      await message(access.channel.id, msg_id);
      const versions = await messageVersions(deps.db, msg_id);
      return c.json(
        { message_id: msg_id, versions: versions.map((v) => ({ ...v, created_at: v.created_at.toISOString() })) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/threads/{msg_id}',
      tags,
      summary: 'A thread: its root and the replies, oldest first',
      middleware: [auth] as const,
      request: { params: MessageParam },
      responses: {
        200: ok(z.object({ root: Message, replies: z.array(Message) }).openapi('Thread'), 'the thread'),
        ...chatErrors({ ...CHANNEL_ERRORS, 404: 'no such channel or message' }),
      },
    }),
    async (c) => {
      const { id, msg_id } = c.req.valid('param');
      const access = await memberChannel(deps.db, id, me(c));
      const root = await message(access.channel.id, msg_id);
      const rootId = root.thread_root_id ?? root.id;
      const top = rootId === root.id ? root : await message(access.channel.id, rootId);
      return c.json(
        { root: messageView(top), replies: (await threadReplies(deps.db, access.channel.id, rootId)).map(messageView) },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/pins',
      tags,
      summary: 'Pinned messages, oldest pin first',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(
          z
            .object({ pins: z.array(Message.extend({ pinned_by: z.uuid(), pinned_at: z.iso.datetime() })) })
            .openapi('Pins'),
          'pins',
        ),
        ...chatErrors(CHANNEL_ERRORS),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      const pins = await pinnedMessages(deps.db, access.channel.id);
      return c.json(
        {
          pins: pins.map((p) => ({ ...messageView(p), pinned_by: p.pinned_by, pinned_at: p.pinned_at.toISOString() })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/pins/{msg_id}',
      tags,
      summary: 'Pin a message (channel moderators and above; at most 50 per channel)',
      middleware: [auth] as const,
      request: { params: MessageParam },
      responses: {
        204: { description: 'pinned' },
        ...chatErrors({ ...CHANNEL_ERRORS, 404: 'no such channel or message', 409: '50 messages are pinned already' }),
      },
    }),
    async (c) => {
      const { id, msg_id } = c.req.valid('param');
      await pinMessage(deps, { channel_id: id, message_id: msg_id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/channels/{id}/pins/{msg_id}',
      tags,
      summary: 'Unpin a message (channel moderators and above)',
      middleware: [auth] as const,
      request: { params: MessageParam },
      responses: {
        204: { description: 'not pinned (any more)' },
        ...chatErrors({ ...CHANNEL_ERRORS, 404: 'no such channel' }),
      },
    }),
    async (c) => {
      const { id, msg_id } = c.req.valid('param');
      await unpinMessage(deps, { channel_id: id, message_id: msg_id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/read-cursor',
      tags,
      summary: 'Mark the channel read up to a message',
      middleware: [auth] as const,
      request: { params: IdParam, body: jsonBody(z.strictObject({ message_id: z.uuid() }).openapi('ReadCursor')) },
      responses: {
        204: { description: 'recorded' },
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error',
          404: 'no such channel or message',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      await moveReadCursor(
        deps,
        { channel_id: c.req.valid('param').id, message_id: c.req.valid('json').message_id, user_id: me(c) },
        actorOf(c),
      );
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/read-cursors',
      tags,
      summary: 'Where each member has read to',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(
          z
            .object({
              cursors: z.array(z.object({ user_id: z.uuid(), message_id: z.uuid(), updated_at: z.iso.datetime() })),
            })
            .openapi('ReadCursors'),
          'by user',
        ),
        ...chatErrors(CHANNEL_ERRORS),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      return c.json(
        {
          cursors: (await readCursors(deps.db, access.channel.id)).map((r) => ({
            ...r,
            updated_at: r.updated_at.toISOString(),
          })),
        },
        200,
      );
    },
  );

  return app;
}

function filters(q: z.infer<typeof SearchQuery>) {
  return {
    q: q.q || null,
    sender: q.sender ?? null,
    before: q.before ? new Date(q.before) : null,
    after: q.after ? new Date(q.after) : null,
    has_file: q.has_file === undefined ? null : q.has_file === 'true',
    limit: q.limit,
  };
}
