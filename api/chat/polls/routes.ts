// Polls: POST/GET /api/channels/{id}/polls, GET /api/polls/{id}, POST /api/polls/{id}/vote and
// /close. Plaintext (`encrypted: false`): the server counts. Live: `PollCreated`, `PollUpdated`
// and `PollClosed` frames to the channel's subscribers on /api/ws (api/chat/ws/hub.ts).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { OPTION_TEXT_MAX, OPTIONS_MAX, OPTIONS_MIN, QUESTION_MAX } from '../../../domain/chat/polls/decider.ts';
import { channelPolls, pollVotes, type PollRow, type PollVoteRow } from '../../../projections/chat/polls.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { memberChannel } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import { CHANNEL_ERRORS } from '../channels/routes.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { closePoll, createPoll, pollOf, pollWithVotes, votePoll, type PollWithVotes } from './commands.ts';

const tags = ['polls'];

export const Poll = z
  .object({
    id: z.uuid(),
    channel_id: z.uuid(),
    creator_id: z.uuid(),
    question: z.string(),
    options: z.array(z.object({ option_id: z.string(), text: z.string() })),
    multiple_choice: z.boolean(),
    anonymous: z.boolean(),
    encrypted: z.literal(false).openapi({ description: 'polls are plaintext: the server counts the votes' }),
    closes_at: z.iso.datetime().nullable(),
    closed: z.boolean(),
    closed_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    results: z.array(
      z.object({
        option_id: z.string(),
        text: z.string(),
        votes: z.number().int(),
        voter_ids: z.array(z.uuid()).optional().openapi({ description: 'absent for an anonymous poll' }),
      }),
    ),
    voters: z.number().int().openapi({ description: 'members who voted' }),
    my_votes: z.array(z.string()),
  })
  .openapi('Poll');

export function pollView(p: PollRow, votes: PollVoteRow[], userId: string, now: Date): z.infer<typeof Poll> {
  const mine = votes.filter((v) => v.user_id === userId).map((v) => v.option_id);
  const closed = p.closed_at !== null || (p.closes_at !== null && p.closes_at.getTime() <= now.getTime());
  return {
    id: p.id,
    channel_id: p.channel_id,
    creator_id: p.creator_id,
    question: p.question,
    options: p.options,
    multiple_choice: p.multiple_choice,
    anonymous: p.anonymous,
    encrypted: false,
    closes_at: p.closes_at?.toISOString() ?? null,
    closed,
    closed_at: p.closed_at?.toISOString() ?? p.closes_at?.toISOString() ?? null,
    created_at: p.created_at.toISOString(),
    results: p.options.map((o) => {
      const voters = votes.filter((v) => v.option_id === o.option_id).map((v) => v.user_id);
      return {
        option_id: o.option_id,
        text: o.text,
        votes: voters.length,
        ...(p.anonymous ? {} : { voter_ids: voters }),
      };
    }),
    voters: new Set(votes.map((v) => v.user_id)).size,
    my_votes: p.options.map((o) => o.option_id).filter((id) => mine.includes(id)),
  };
}

const IdParam = uuidParams('id');
const POLL_ERRORS = {
  ...AUTH_ERRORS,
  403: "not a member of the poll's channel",
  404: 'no such poll (`poll_not_found`)',
};

export function pollRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  const answer = (c: Context<ChatEnv>, { poll, votes }: PollWithVotes) =>
    pollView(poll, votes, me(c), deps.clock.now());

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/polls',
      tags,
      summary: 'Create a poll (a member who may post in the channel)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              question: z.string().trim().min(1).max(QUESTION_MAX),
              options: z
                .array(z.string().trim().min(1).max(OPTION_TEXT_MAX))
                .min(OPTIONS_MIN)
                .max(OPTIONS_MAX)
                .openapi({ description: `${OPTIONS_MIN}-${OPTIONS_MAX} distinct options` }),
              multiple_choice: z.boolean().default(false),
              anonymous: z.boolean().default(false),
              closes_at: z.iso
                .datetime({ offset: true })
                .nullable()
                .optional()
                .openapi({ description: 'in the future; the poll closes itself then' }),
            })
            .openapi('CreatePoll'),
        ),
      },
      responses: {
        201: ok(Poll, 'created'),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error (options not distinct, closes_at not in the future)',
          403: 'not a member, archived, read-only or timed out',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const created = await createPoll(
        deps,
        { channel_id: c.req.valid('param').id, user_id: me(c), ...c.req.valid('json') },
        actorOf(c),
      );
      return c.json(answer(c, created), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/polls',
      tags,
      summary: "A channel's polls, open ones first, newest first (members)",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(z.object({ polls: z.array(Poll) }).openapi('Polls'), 'open first'),
        ...chatErrors(CHANNEL_ERRORS),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      const now = deps.clock.now();
      const rows = await channelPolls(deps.db, access.channel.id, now);
      const votes = await pollVotes(
        deps.db,
        rows.map((r) => r.id),
      );
      return c.json(
        {
          polls: rows.map((r) =>
            pollView(
              r,
              votes.filter((v) => v.poll_id === r.id),
              me(c),
              now,
            ),
          ),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/polls/{id}',
      tags,
      summary: 'One poll (members of its channel)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: { 200: ok(Poll, 'the poll'), ...chatErrors(POLL_ERRORS) },
    }),
    async (c) => {
      const row = await pollOf(deps.db, c.req.valid('param').id);
      await memberChannel(deps.db, row.channel_id, me(c));
      return c.json(answer(c, await pollWithVotes(deps.db, row.id)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/polls/{id}/vote',
      tags,
      summary: 'Vote (members of the channel): the whole choice, replacing the last; `[]` withdraws',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z.strictObject({ option_ids: z.array(z.string().max(64)).max(OPTIONS_MAX) }).openapi('PollVote'),
        ),
      },
      responses: {
        200: ok(Poll, 'the poll after the vote'),
        ...chatErrors({
          ...POLL_ERRORS,
          400: 'not an option of the poll (`invalid_option`), or more than one on a single-choice poll (`single_choice`)',
          409: 'the poll is closed (`poll_closed`)',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const voted = await votePoll(
        deps,
        { poll_id: c.req.valid('param').id, user_id: me(c), option_ids: c.req.valid('json').option_ids },
        actorOf(c),
      );
      return c.json(answer(c, voted), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/polls/{id}/close',
      tags,
      summary: 'Close a poll (its creator, a channel moderator and above, or an instance admin)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(Poll, 'the closed poll'),
        ...chatErrors({
          ...POLL_ERRORS,
          403: 'neither the creator, a moderator nor an instance admin',
          409: 'already closed (`poll_closed`)',
        }),
      },
    }),
    async (c) => {
      const user = c.get('chatUser');
      const closed = await closePoll(
        deps,
        { poll_id: c.req.valid('param').id, user_id: me(c), instance_admin: user.is_admin || user.is_owner },
        actorOf(c),
      );
      return c.json(answer(c, closed), 200);
    },
  );

  return app;
}
