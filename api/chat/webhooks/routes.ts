// Incoming webhooks (spec "Webhooks"): POST/GET /api/channels/{id}/webhooks, PATCH/DELETE
// /api/webhooks/{id} for the channel's community owners and admins (or instance admins), and
// POST /api/webhooks/execute/{token} with no authentication: the URL token is the credential.
//
// An execution posts a plaintext message (`via_webhook`; history shows the plaintext in the
// ciphertext field, as the live broadcast does) as the webhook, showing `username` (default the
// webhook's name) and `avatar_url`. `@username` mentions of channel members notify them (at most
// 50). One message a second per webhook (429 with Retry-After). A bad payload is 422, an unknown
// or inactive token (or a deleted channel) 404; files are refused. The channel's posting rules
// apply as to a member without a role (domain/chat/messages/policy.ts): archived or read-only
// 403, slow mode 429. The token is never logged: the request log line
// shows the path with it redacted (api/chat/app.ts).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { MENTIONS_MAX } from '../../../domain/chat/messages/decider.ts';
import { WEBHOOK_CONTENT_MAX, WEBHOOK_NAME_MAX, WEBHOOK_USERNAME_MAX } from '../../../domain/chat/webhooks/decider.ts';
import { webhooksOf, type WebhookRow } from '../../../projections/chat/webhooks.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  activeWebhook,
  createWebhook,
  deleteWebhook,
  executeWebhook,
  managedChannel,
  updateWebhook,
  type Manager,
} from './commands.ts';

const tags = ['webhooks'];
const MANAGE_ERRORS = {
  ...AUTH_ERRORS,
  403: "not an owner or admin of the channel's community (nor an instance admin)",
  404: 'no such channel or webhook',
};

const Webhook = z
  .object({
    id: z.uuid(),
    channel_id: z.uuid(),
    name: z.string(),
    avatar_url: z.string().nullable(),
    active: z.boolean(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Webhook');

const AvatarUrl = z.url({ protocol: /^https?$/ }).max(2048);

const ExecuteBody = z.strictObject({
  content: z.string().min(1).max(WEBHOOK_CONTENT_MAX),
  username: z.string().trim().min(1).max(WEBHOOK_USERNAME_MAX).optional(),
  avatar_url: AvatarUrl.nullable().optional(),
});

export function webhookRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const view = (w: WebhookRow) => ({
    id: w.id,
    channel_id: w.channel_id,
    name: w.name,
    avatar_url: w.avatar_url,
    active: w.active,
    created_by: w.created_by,
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
  });
  const manager = (c: Context<ChatEnv>): Manager => {
    const user = c.get('chatUser');
    return { user_id: user.user_id, instance_admin: user.is_admin || user.is_owner };
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/webhooks',
      tags,
      summary: 'Create a webhook on a channel (its token is shown only in this response)',
      middleware: [auth] as const,
      request: {
        params: uuidParams('id'),
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(WEBHOOK_NAME_MAX),
              avatar_url: AvatarUrl.nullable().optional(),
            })
            .openapi('CreateWebhookRequest'),
        ),
      },
      responses: {
        201: ok(
          Webhook.extend({
            token: z.string().openapi({ description: '64 characters; shown only this once' }),
            url: z.string(),
          }).openapi('CreatedWebhook'),
          'the webhook and its token',
        ),
        ...chatErrors({ ...MANAGE_ERRORS, 400: 'validation error (name 1-64)', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const { webhook, token } = await createWebhook(
        deps,
        { ...manager(c), channel_id: c.req.valid('param').id, name: body.name, avatar_url: body.avatar_url },
        actorOf(c),
      );
      c.header('Cache-Control', 'no-store');
      return c.json({ ...view(webhook), token, url: `/api/webhooks/execute/${token}` }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/webhooks',
      tags,
      summary: "A channel's webhooks (never their tokens)",
      middleware: [auth] as const,
      request: { params: uuidParams('id') },
      responses: {
        200: ok(z.object({ webhooks: z.array(Webhook) }).openapi('WebhookList'), 'oldest first'),
        ...chatErrors(MANAGE_ERRORS),
      },
    }),
    async (c) => {
      const access = await managedChannel(deps.db, c.req.valid('param').id, manager(c));
      return c.json({ webhooks: (await webhooksOf(deps.db, access.channel.id)).map(view) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/webhooks/{id}',
      tags,
      summary: 'Rename, change the avatar, deactivate (execution then answers 404) or reactivate',
      middleware: [auth] as const,
      request: {
        params: uuidParams('id'),
        body: jsonBody(
          z
            .strictObject({
              name: z.string().trim().min(1).max(WEBHOOK_NAME_MAX).optional(),
              avatar_url: AvatarUrl.nullable().optional(),
              active: z.boolean().optional(),
            })
            .openapi('UpdateWebhookRequest'),
        ),
      },
      responses: {
        200: ok(Webhook, 'the webhook'),
        ...chatErrors({ ...MANAGE_ERRORS, 400: 'validation error', 413: 'body too large' }),
      },
    }),
    async (c) => {
      return c.json(
        view(
          await updateWebhook(
            deps,
            { ...manager(c), webhook_id: c.req.valid('param').id, changes: c.req.valid('json') },
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
      path: '/api/webhooks/{id}',
      tags,
      summary: 'Delete a webhook: its URL stops working at once',
      middleware: [auth] as const,
      request: { params: uuidParams('id') },
      responses: { 204: { description: 'deleted' }, ...chatErrors(MANAGE_ERRORS) },
    }),
    async (c) => {
      await deleteWebhook(deps, { ...manager(c), webhook_id: c.req.valid('param').id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/webhooks/execute/{token}',
      tags,
      summary: 'Post a plaintext message through a webhook (no authentication: the token is the credential)',
      middleware: checkedByHandler({ rule: 'capability URL' }),
      description:
        `JSON body: \`content\` (required, 1-${WEBHOOK_CONTENT_MAX} characters, Markdown), \`username\` (optional, at most ${WEBHOOK_USERNAME_MAX}; default the webhook's name), ` +
        `\`avatar_url\` (optional). No files. \`@username\` mentions notify channel members (exact, case-sensitive; @everyone, @here, @channel ignored; at most ${MENTIONS_MAX}). ` +
        'One message per second per webhook.',
      request: { params: z.object({ token: z.string().openapi({ param: { name: 'token', in: 'path' } }) }) },
      responses: {
        201: ok(
          z
            .object({
              message_id: z.uuid(),
              channel_id: z.uuid(),
              created_at: z.iso.datetime(),
              status: z.literal('ok'),
            })
            .openapi('WebhookExecuted'),
          'posted',
        ),
        ...chatErrors({
          403: 'the channel is archived (`archived`) or read-only (`read_only`): a webhook is not a moderator',
          404: 'invalid token, the webhook is inactive, or its channel is gone',
          413: 'body too large',
          422: 'invalid payload (or a file)',
          429: "more than one message a second, or the channel's slow mode (Retry-After)",
        }),
      },
    }),
    async (c) => {
      const hook = await activeWebhook(deps.db, c.req.valid('param').token);
      const type = c.req.header('content-type') ?? '';
      if (!/^application\/json\b/i.test(type))
        throw new ApiError(
          422,
          'invalid_payload',
          /multipart|octet-stream/i.test(type) ? 'webhook posts cannot carry files' : 'the body must be JSON',
        );
      let raw: unknown;
      try {
        raw = JSON.parse(await c.req.text());
      } catch {
        throw new ApiError(422, 'invalid_payload', 'the body is not valid JSON');
      }
      const parsed = ExecuteBody.safeParse(raw);
      if (!parsed.success)
        throw new ApiError(
          422,
          'invalid_payload',
          parsed.error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; '),
        );
      const posted = await executeWebhook(
        deps,
        { hook, ...parsed.data },
        { actor: { kind: 'service', id: `webhook:${hook.id}` }, correlationId: c.get('requestId') },
      );
      return c.json(
        { message_id: posted.message_id, channel_id: posted.channel_id, created_at: posted.at, status: 'ok' as const },
        201,
      );
    },
  );

  return app;
}
