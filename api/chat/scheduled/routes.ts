// Scheduled messages: POST /api/messages/schedule, GET /api/messages/scheduled (the caller's
// pending, held and failed ones), PATCH and DELETE /api/messages/scheduled/{id}. Delivery is
// the scheduler's (./fire.ts).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { CIPHERTEXT_MAX } from '../../../domain/chat/messages/decider.ts';
import { scheduledOf, type ScheduledRow } from '../../../projections/chat/scheduled.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { cancelScheduled, editScheduled, scheduleMessage } from './commands.ts';

const tags = ['scheduled messages'];
export const FILE_IDS_MAX = 10;
const MENTION_LIST_MAX = 200;

export const ScheduledMessage = z
  .object({
    id: z.uuid(),
    channel_id: z.uuid(),
    ciphertext: z.string(),
    send_at: z.iso.datetime(),
    thread_root_id: z.uuid().nullable(),
    mentions: z.array(z.uuid()),
    file_ids: z.array(z.string()),
    status: z.enum(['pending', 'held', 'failed']).openapi({
      description:
        '`held`: a sender-key rotation since it was encrypted; re-encrypt it by PATCH with a new `ciphertext`',
    }),
    reason: z.string().nullable().openapi({
      description:
        'why it failed (`not_a_member`, `archived`, `read_only`, `timed_out`, `channel_not_found`) or is held (`held_key_rotated`)',
    }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('ScheduledMessage');

const view = (r: ScheduledRow) => ({
  id: r.id,
  channel_id: r.channel_id,
  ciphertext: r.ciphertext,
  send_at: r.send_at.toISOString(),
  thread_root_id: r.thread_root_id,
  mentions: r.mentions,
  file_ids: r.file_ids,
  status: r.status as 'pending' | 'held' | 'failed',
  reason: r.reason,
  created_at: r.created_at.toISOString(),
  updated_at: r.updated_at.toISOString(),
});

const content = {
  ciphertext: z.string().min(1).max(CIPHERTEXT_MAX),
  send_at: z.iso
    .datetime({ offset: true })
    .openapi({ description: 'in the future, at most one year (365 days) ahead' }),
  thread_root_id: z.uuid().nullable().optional(),
  mentions: z
    .array(z.uuid())
    .max(MENTION_LIST_MAX)
    .optional()
    .openapi({ description: 'members among them at delivery are notified, at most 50' }),
  file_ids: z
    .array(z.string().min(1).max(128))
    .max(FILE_IDS_MAX)
    .optional()
    .openapi({ description: 'files to attach, carried into the delivered message' }),
};

const IdParam = uuidParams('id');

export function scheduledRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  const ERRORS = {
    ...AUTH_ERRORS,
    400: 'validation error; send_at in the past (`send_at_in_past`) or more than a year ahead (`send_at_too_far`)',
    413: 'body too large',
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/messages/schedule',
      tags,
      summary: 'Schedule a message (a member who may post in the channel)',
      middleware: [auth] as const,
      description:
        'Delivered once at `send_at` (late, with `scheduled_for`, if the service was down then). A sender who can no longer post there by then: `failed`. ' +
        'A sender-key rotation in the channel after it was encrypted holds it (`held`, `held_key_rotated`) until the client re-encrypts it by PATCH.',
      request: { body: jsonBody(z.strictObject({ channel_id: z.uuid(), ...content }).openapi('ScheduleMessage')) },
      responses: {
        201: ok(ScheduledMessage, 'scheduled'),
        ...chatErrors({
          ...ERRORS,
          403: 'not a member, archived, read-only or timed out',
          404: 'no such channel or thread root',
        }),
      },
    }),
    async (c) => {
      return c.json(view(await scheduleMessage(deps, { user_id: me(c), ...c.req.valid('json') }, actorOf(c))), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/messages/scheduled',
      tags,
      summary: "The caller's pending, held and failed scheduled messages, soonest first",
      middleware: [auth] as const,
      responses: {
        200: ok(
          z.object({ scheduled_messages: z.array(ScheduledMessage) }).openapi('ScheduledMessages'),
          'soonest first',
        ),
        ...chatErrors(AUTH_ERRORS),
      },
    }),
    async (c) => c.json({ scheduled_messages: (await scheduledOf(deps.db, me(c))).map(view) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/messages/scheduled/{id}',
      tags,
      summary: "Change one of the caller's pending (or held) scheduled messages",
      middleware: [auth] as const,
      description:
        'A held message needs a new `ciphertext` (409 `held_key_rotated` otherwise), which makes it pending again.',
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              ...content,
              ciphertext: content.ciphertext.optional(),
              send_at: content.send_at.optional(),
            })
            .openapi('EditScheduledMessage'),
        ),
      },
      responses: {
        200: ok(ScheduledMessage, 'the scheduled message'),
        ...chatErrors({
          ...ERRORS,
          404: 'no such scheduled message of the caller, or no such thread root',
          409: 'already delivered (`already_delivered`), failed (`not_pending`), or held without a new ciphertext (`held_key_rotated`)',
        }),
      },
    }),
    async (c) => {
      return c.json(
        view(
          await editScheduled(
            deps,
            { id: c.req.valid('param').id, user_id: me(c), ...c.req.valid('json') },
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
      path: '/api/messages/scheduled/{id}',
      tags,
      summary: "Cancel one of the caller's scheduled messages (pending, held or failed)",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        204: { description: 'cancelled' },
        ...chatErrors({
          ...AUTH_ERRORS,
          404: 'no such scheduled message of the caller',
          409: 'already delivered (`already_delivered`)',
        }),
      },
    }),
    async (c) => {
      await cancelScheduled(deps, { id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
