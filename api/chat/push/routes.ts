// Web push: GET /api/push/vapid-public-key, POST and GET /api/push/subscriptions, DELETE
// /api/push/subscriptions/{id}. A subscription is the browser's PushSubscription as JSON
// (`{endpoint, keys: {p256dh, auth}, expirationTime?}`); its id comes from the endpoint, so the
// same browser subscribing again answers 200 with the same id (new keys replace the old; another
// user's subscription of that browser passes to the caller).
//
// The endpoint must be https (ports 443; the test-only CHATSVC_OUTBOUND_ALLOW_LOOPBACK admits
// http to 127.0.0.0/8 and ::1 on any port) and pass the SSRF guard: a literal or resolved
// loopback, private, link-local or otherwise non-public address is refused (422
// `destination_not_allowed`; a name that does not resolve: 422 `fetch_failed`). Each send is
// checked again (api/chat/push/reactor.ts). Endpoints and keys are sealed in the log and the read
// model and never logged. Users only: bot tokens are refused (403).
//
// What is pushed, and when: ./sender.ts.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { openSecret } from '../../../crypto/seal.ts';
import { endpointSealContext } from '../../../domain/chat/push/decider.ts';
import { pushSubscriptionsOf, type PushSubscriptionRow } from '../../../projections/chat/push.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { PUSH_LIMITS, subscribe, unsubscribe } from './commands.ts';

const tags = ['web push'];

const base64url = z.string().regex(/^[A-Za-z0-9_-]+={0,2}$/, 'base64url');
const SubscriptionBody = z
  .object({
    endpoint: z.string().min(1).max(PUSH_LIMITS.endpointMax),
    keys: z.object({
      p256dh: base64url.openapi({ description: "the browser's P-256 public key, uncompressed (65 bytes), base64url" }),
      auth: base64url.openapi({ description: 'the 16-byte authentication secret, base64url' }),
    }),
    expirationTime: z
      .number()
      .nullable()
      .optional()
      .openapi({ description: 'accepted and ignored (the push service answers 404/410 once it lapses)' }),
  })
  .openapi('PushSubscriptionRequest');

const Subscription = z
  .object({
    id: z.uuid(),
    origin: z.string().openapi({ description: 'the push service' }),
    endpoint: z.string(),
    created_at: z.iso.datetime(),
  })
  .openapi('PushSubscription');

export function pushRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps, { bots: [] });
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const view = (r: PushSubscriptionRow) => ({
    id: r.id,
    origin: r.origin,
    endpoint: openSecret(deps.sealKey, r.endpoint_sealed, endpointSealContext(r.id)),
    created_at: r.created_at.toISOString(),
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/push/vapid-public-key',
      tags,
      summary: "The server's VAPID public key (the applicationServerKey of PushManager.subscribe)",
      middleware: [auth] as const,
      responses: {
        200: ok(
          z
            .object({ public_key: z.string().openapi({ description: 'uncompressed P-256 point, base64url' }) })
            .openapi('VapidPublicKey'),
          'the key',
        ),
        ...chatErrors({ ...AUTH_ERRORS, 403: 'a bot token' }),
      },
    }),
    (c) => c.json({ public_key: deps.vapid.keys.publicKey }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/push/subscriptions',
      tags,
      summary: 'Subscribe this browser to web push (201; the same browser again: 200)',
      middleware: [auth] as const,
      description:
        `The browser's PushSubscription as JSON. \`endpoint\`: https (port 443), at most ${PUSH_LIMITS.endpointMax} characters, a public destination. ` +
        `At most ${PUSH_LIMITS.perUser} subscriptions per user. Pushed: meeting reminders and mentions, while the user has no socket on /api/ws; never message content.`,
      request: { body: jsonBody(SubscriptionBody) },
      responses: {
        201: ok(Subscription, 'subscribed'),
        200: ok(Subscription, 'already subscribed (keys updated when they changed)'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'not a URL, or malformed keys',
          403: 'a bot token',
          409: '`subscription_limit_reached` (in `code`)',
          422: '`destination_not_allowed` (not https, or a non-public address) or `fetch_failed` (the name does not resolve), in `code`',
        }),
      },
    }),
    async (c) => {
      const { endpoint, keys } = c.req.valid('json');
      const { row, created } = await subscribe(deps, { user_id: me(c), endpoint, keys }, actorOf(c));
      return c.json(view(row), created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/push/subscriptions',
      tags,
      summary: "The caller's push subscriptions, oldest first",
      middleware: [auth] as const,
      responses: {
        200: ok(z.object({ subscriptions: z.array(Subscription) }).openapi('PushSubscriptions'), "the caller's own"),
        ...chatErrors({ ...AUTH_ERRORS, 403: 'a bot token' }),
      },
    }),
    async (c) => c.json({ subscriptions: (await pushSubscriptionsOf(deps.db, me(c))).map(view) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/push/subscriptions/{id}',
      tags,
      summary: "Unsubscribe (the caller's own)",
      middleware: [auth] as const,
      request: { params: uuidParams('id') },
      responses: {
        204: { description: 'removed' },
        ...chatErrors({ ...AUTH_ERRORS, 403: 'a bot token', 404: 'no such subscription of the caller' }),
      },
    }),
    async (c) => {
      await unsubscribe(deps, { subscription_id: c.req.valid('param').id, user_id: me(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
