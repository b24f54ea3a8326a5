// Meetings as iCalendar: GET /api/meetings/{id}.ics and /api/channels/{id}/meetings.ics (signed
// in, members), and, since calendar apps send no JWT, feed tokens: POST /api/calendar/feed-tokens
// answers a secret URL `/api/calendar/feeds/<token>.ics` once (only its SHA-256 is kept, in the
// log and the read model); GET lists them without it; DELETE revokes. A feed is the owner's
// channel (with `channel_id`) or all their channels, with memberships checked on every fetch: a
// channel left is gone from the feed; a feed of a channel left, or of a suspended or deleted
// owner, is 404 like an unknown token.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { hashToken } from '../../../crypto/tokens.ts';
import { LABEL_MAX } from '../../../domain/chat/calendar-feeds/decider.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { liveFeedTokenByHash, liveFeedTokensOf, type FeedTokenRow } from '../../../projections/chat/calendar-feeds.ts';
import { channelsOf } from '../../../projections/chat/channels.ts';
import { meetingById, meetingExceptions, meetingsOfChannels, scheduleOf } from '../../../projections/chat/meetings.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { channelFor, memberChannel } from '../access.ts';
import { isUuid, uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import { CHANNEL_ERRORS } from '../channels/routes.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { ICS_TYPE, meetingsCalendar } from '../meetings/ics.ts';
import { MEETING_ERRORS } from '../meetings/routes.ts';
import { meetingNotFound } from '../meetings/commands.ts';
import { createFeedToken, revokeFeedToken } from './commands.ts';

const tags = ['meetings'];
const icsResponse = {
  200: { content: { 'text/calendar': { schema: z.string() } }, description: 'an iCalendar (RFC 5545) document' },
};
const feedNotFound = () => new ApiError(404, 'feed_not_found', 'no such feed', { code: 'feed_not_found' });

export function meetingIcsRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  const render = async (name: string, channelIds: string[], only?: string) => {
    const rows = (await meetingsOfChannels(deps.db, channelIds, true)).filter((r) => !only || r.id === only);
    const exceptions = await meetingExceptions(
      deps.db,
      rows.map((r) => r.id),
    );
    return meetingsCalendar(
      name,
      rows.map((row) => ({ row, schedule: scheduleOf(row, exceptions) })),
      deps.clock.now(),
    );
  };
  const ics = (c: Context, body: string, filename: string) =>
    c.body(body, 200, {
      'Content-Type': ICS_TYPE,
      'Content-Disposition': `inline; filename="${filename}"`,
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/meetings/{file{[0-9a-fA-F-]+\\.ics}}',
      tags,
      summary: 'GET /api/meetings/{id}.ics: one meeting as iCalendar (members of its channel)',
      middleware: [auth] as const,
      request: { params: z.object({ file: z.string().openapi({ description: '`<meeting id>.ics`' }) }) },
      responses: { ...icsResponse, ...chatErrors(MEETING_ERRORS) },
    }),
    async (c) => {
      const id = c.req.valid('param').file.slice(0, -4);
      const row = isUuid(id) ? await meetingById(deps.db, id) : null;
      if (!row) throw meetingNotFound();
      await memberChannel(deps.db, row.channel_id, me(c));
      return ics(c, await render(row.title, [row.channel_id], row.id), `${row.id}.ics`);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/meetings.ics',
      tags,
      summary: "A channel's meetings as iCalendar (members; cancelled ones with STATUS:CANCELLED)",
      middleware: [auth] as const,
      request: { params: uuidParams('id') },
      responses: { ...icsResponse, ...chatErrors(CHANNEL_ERRORS) },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      return ics(c, await render(access.channel.name ?? 'meetings', [access.channel.id]), 'meetings.ics');
    },
  );

  const FeedToken = z
    .object({
      id: z.uuid(),
      channel_id: z.uuid().nullable(),
      label: z.string().nullable(),
      created_at: z.iso.datetime(),
    })
    .openapi('CalendarFeedToken');
  const tokenView = (t: FeedTokenRow) => ({
    id: t.id,
    channel_id: t.channel_id,
    label: t.label,
    created_at: t.created_at.toISOString(),
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/calendar/feed-tokens',
      tags,
      summary: "Mint a secret calendar feed URL (shown once): one channel's meetings, or all of the caller's channels",
      middleware: [auth] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              channel_id: z.uuid().nullable().optional(),
              label: z.string().trim().min(1).max(LABEL_MAX).nullable().optional(),
            })
            .openapi('CreateCalendarFeedToken'),
        ),
      },
      responses: {
        201: ok(
          FeedToken.extend({
            token: z.string(),
            url: z.string().openapi({
              description:
                'the feed: `/api/calendar/feeds/<token>.ics` (absolute when CHATSVC_PUBLIC_URL is set); never shown again',
            }),
          }),
          'minted',
        ),
        ...chatErrors({ ...CHANNEL_ERRORS, 409: 'too many live feed tokens (`feed_token_limit_reached`)' }),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const { row, token } = await createFeedToken(
        deps,
        { user_id: me(c), channel_id: b.channel_id, label: b.label },
        actorOf(c),
      );
      const path = `/api/calendar/feeds/${token}.ics`;
      return c.json(
        {
          ...tokenView(row),
          token,
          url: deps.config.publicUrl ? `${deps.config.publicUrl.replace(/\/+$/, '')}${path}` : path,
        },
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/calendar/feed-tokens',
      tags,
      summary: "The caller's live feed tokens (never the token itself)",
      middleware: [auth] as const,
      responses: { 200: ok(z.object({ feed_tokens: z.array(FeedToken) }), 'oldest first'), ...chatErrors(AUTH_ERRORS) },
    }),
    async (c) => c.json({ feed_tokens: (await liveFeedTokensOf(deps.db, me(c))).map(tokenView) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/calendar/feed-tokens/{id}',
      tags,
      summary: 'Revoke a feed token: its URL is 404 at once',
      middleware: [auth] as const,
      request: { params: uuidParams('id') },
      responses: {
        204: { description: 'revoked' },
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such live token of the caller (`feed_token_not_found`)' }),
      },
    }),
    async (c) => {
      await revokeFeedToken(deps, { token_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/calendar/feeds/{file{[A-Za-z0-9_-]+\\.ics}}',
      tags,
      summary:
        'GET /api/calendar/feeds/{token}.ics: a feed (the token is the credential; no JWT); memberships are checked on every fetch',
      middleware: checkedByHandler({ rule: 'capability URL' }),
      request: { params: z.object({ file: z.string().openapi({ description: '`<token>.ics`' }) }) },
      responses: {
        ...icsResponse,
        ...chatErrors({
          404: 'unknown or revoked token, a channel the owner left, or an owner suspended or deleted (`feed_not_found`)',
        }),
      },
    }),
    async (c) => {
      const token = c.req.valid('param').file.slice(0, -4);
      const row = await liveFeedTokenByHash(deps.db, hashToken(token));
      if (!row) throw feedNotFound();
      const owner = await chatUserById(deps.db, row.user_id);
      if (!owner || owner.deleted_at || owner.suspended_at) throw feedNotFound();
      let channelIds: string[];
      if (row.channel_id) {
        const access = await channelFor(deps.db, row.channel_id, row.user_id).catch(() => null);
        if (!access?.member) throw feedNotFound();
        channelIds = [row.channel_id];
      } else {
        channelIds = (await channelsOf(deps.db, row.user_id, ['standalone', 'group', 'dm'])).map((ch) => ch.id);
      }
      return ics(c, await render(row.label ?? 'meetings', channelIds), 'meetings.ics');
    },
  );

  return app;
}
