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
import { createHash, ECDH } from 'node:crypto';
import type { Context } from 'hono';
import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { endpointSealContext, keysSealContext, pushSubscriptionDecider, pushSubscriptionId } from '../../../domain/chat/push/decider.ts';
import { pushSubscriptionStream } from '../../../domain/chat/push/events.ts';
import { checkDestination, OutboundError } from '../../../infra/outbound/guard.ts';
import { pushSubscriptionsOf, type PushSubscriptionRow } from '../../../projections/chat/push.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { isUuid } from '../../shared/params.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import { pathParam } from '../communities/schemas.ts';
import type { ChatDeps } from '../deps.ts';
import { coded } from '../files/upload.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';

const tags = ['web push'];
export const PUSH_LIMITS = { endpointMax: 2048, perUser: 20 };

const base64url = z.string().regex(/^[A-Za-z0-9_-]+={0,2}$/, 'base64url');
const SubscriptionBody = z.object({
  endpoint: z.string().min(1).max(PUSH_LIMITS.endpointMax),
  keys: z.object({
    p256dh: base64url.openapi({ description: 'the browser\'s P-256 public key, uncompressed (65 bytes), base64url' }),
    auth: base64url.openapi({ description: 'the 16-byte authentication secret, base64url' }),
  }),
  expirationTime: z.number().nullable().optional().openapi({ description: 'accepted and ignored (the push service answers 404/410 once it lapses)' }),
}).openapi('PushSubscriptionRequest');

const Subscription = z.object({
  id: z.uuid(), origin: z.string().openapi({ description: 'the push service' }), endpoint: z.string(), created_at: z.iso.datetime(),
}).openapi('PushSubscription');

const Param = z.object({ id: pathParam('id') });

const fromBase64url = (value: string) => Buffer.from(value.replace(/=+$/, ''), 'base64url');

/** The subscription's keys, checked: a point on P-256 and a 16-byte secret. */
function checkKeys(keys: { p256dh: string; auth: string }): { p256dh: string; auth: string } {
  const point = fromBase64url(keys.p256dh);
  const auth = fromBase64url(keys.auth);
  try {
    if (point.length !== 65 || point[0] !== 4) throw new Error('not uncompressed');
    ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'uncompressed');
  } catch {
    throw coded(400, 'validation_failed', 'keys.p256dh must be an uncompressed P-256 public key (65 bytes, base64url)');
  }
  if (auth.length !== 16) throw coded(400, 'validation_failed', 'keys.auth must be 16 bytes (base64url)');
  return { p256dh: point.toString('base64url'), auth: auth.toString('base64url') };
}

export function pushRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps, { bots: [] });
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const view = (r: PushSubscriptionRow) => ({
    id: r.id, origin: r.origin, endpoint: openSecret(deps.sealKey, r.endpoint_sealed, endpointSealContext(r.id)), created_at: r.created_at.toISOString(),
  });

  /** https, or http to loopback under the test switch; then the SSRF guard's checks. */
  async function checkEndpoint(raw: string): Promise<URL> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw coded(400, 'validation_failed', 'endpoint must be a URL');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && deps.config.outbound.allowLoopback)) {
      throw coded(422, 'destination_not_allowed', 'endpoint must be an https URL');
    }
    try {
      await checkDestination(url, deps.config.outbound);
    } catch (error) {
      if (error instanceof OutboundError) throw coded(422, error.code === 'destination_not_allowed' ? error.code : 'fetch_failed', error.message);
      throw error;
    }
    return url;
  }

  app.openapi(createRoute({
    method: 'get', path: '/api/push/vapid-public-key', tags, summary: 'The server\'s VAPID public key (the applicationServerKey of PushManager.subscribe)', middleware: [auth] as const,
    responses: {
      200: ok(z.object({ public_key: z.string().openapi({ description: 'uncompressed P-256 point, base64url' }) }).openapi('VapidPublicKey'), 'the key'),
      ...chatErrors({ ...AUTH_ERRORS, 403: 'a bot token' }),
    },
  }), (c) => c.json({ public_key: deps.vapid.keys.publicKey }, 200));

  app.openapi(createRoute({
    method: 'post', path: '/api/push/subscriptions', tags, summary: 'Subscribe this browser to web push (201; the same browser again: 200)', middleware: [auth] as const,
    description: `The browser's PushSubscription as JSON. \`endpoint\`: https (port 443), at most ${PUSH_LIMITS.endpointMax} characters, a public destination. `
      + `At most ${PUSH_LIMITS.perUser} subscriptions per user. Pushed: meeting reminders and mentions, while the user has no socket on /api/ws; never message content.`,
    request: { body: jsonBody(SubscriptionBody) },
    responses: {
      201: ok(Subscription, 'subscribed'),
      200: ok(Subscription, 'already subscribed (keys updated when they changed)'),
      ...chatErrors({
        ...AUTH_ERRORS, 400: 'not a URL, or malformed keys', 403: 'a bot token', 409: '`subscription_limit_reached` (in `code`)',
        422: '`destination_not_allowed` (not https, or a non-public address) or `fetch_failed` (the name does not resolve), in `code`',
      }),
    },
  }), async (c) => {
    const body = c.req.valid('json');
    const keys = checkKeys(body.keys);
    const url = await checkEndpoint(body.endpoint);
    const endpoint = url.toString();
    const id = pushSubscriptionId(endpoint);
    const mine = await pushSubscriptionsOf(deps.db, me(c));
    if (!mine.some((s) => s.id === id) && mine.length >= PUSH_LIMITS.perUser) {
      throw coded(409, 'subscription_limit_reached', `at most ${PUSH_LIMITS.perUser} push subscriptions per user: remove one first`);
    }
    const keysJson = JSON.stringify(keys);
    const result = await deps.commands.run(pushSubscriptionStream(id), pushSubscriptionDecider, {
      type: 'Subscribe', subscription_id: id, user_id: me(c), origin: url.origin,
      endpoint_sealed: sealSecret(deps.sealKey, endpoint, endpointSealContext(id)), keys_sealed: sealSecret(deps.sealKey, keysJson, keysSealContext(id)),
      keys_hash: createHash('sha256').update(`push_keys:${keysJson}`).digest('hex'), at: deps.clock.now().toISOString(),
    }, actorOf(c));
    const row = (await pushSubscriptionsOf(deps.db, me(c))).find((s) => s.id === id);
    if (!row) throw new ApiError(409, 'conflict', 'the subscription changed meanwhile: try again');
    const created = result.events.some((e) => e.type === 'PushSubscriptionAdded' && mine.every((s) => s.id !== id));
    return c.json(view(row), created ? 201 : 200);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/push/subscriptions', tags, summary: 'The caller\'s push subscriptions, oldest first', middleware: [auth] as const,
    responses: {
      200: ok(z.object({ subscriptions: z.array(Subscription) }).openapi('PushSubscriptions'), 'the caller\'s own'),
      ...chatErrors({ ...AUTH_ERRORS, 403: 'a bot token' }),
    },
  }), async (c) => c.json({ subscriptions: (await pushSubscriptionsOf(deps.db, me(c))).map(view) }, 200));

  app.openapi(createRoute({
    method: 'delete', path: '/api/push/subscriptions/{id}', tags, summary: 'Unsubscribe (the caller\'s own)', middleware: [auth] as const,
    request: { params: Param },
    responses: { 204: { description: 'removed' }, ...chatErrors({ ...AUTH_ERRORS, 403: 'a bot token', 404: 'no such subscription of the caller' }) },
  }), async (c) => {
    const id = c.req.valid('param').id;
    if (!isUuid(id)) throw coded(404, 'push_subscription_not_found', 'no such push subscription');
    await deps.commands.run(pushSubscriptionStream(id), pushSubscriptionDecider, { type: 'Unsubscribe', subscription_id: id, user_id: me(c), at: deps.clock.now().toISOString() }, actorOf(c));
    return c.body(null, 204);
  });

  return app;
}
