// GET /api/ws: the chat WebSocket. Frames are JSON objects named by `type` (the externally
// tagged form `{"Authenticate": {"token": ...}}` is read too).
//
// - The client sends `{type: "Authenticate", token}` within 10 seconds (an access token, or a bot
//   token of the default scope: authentication only, membership rules are the same); the
//   server answers `{type: "Authenticated", user_id, client_version}` (the running version),
//   or an `Error` frame and close code 4401.
// - `{type: "Ping"}` is answered `{type: "Pong"}`.
// - `{type: "Subscribe", channel_id}` follows a channel the caller is a member of (answered
//   `Subscribed`, or an Error with `code` forbidden / not_found); `Unsubscribe` stops
//   (`Unsubscribed`); `{type: "Typing", channel_id}` is relayed to the channel's other
//   subscribers. What a subscription hears: ./hub.ts.
// - Per connection: a burst of 10 frames, 5 per second sustained (the shared limiter: at most
//   10 frames in any 2 seconds). An excess frame gets `{type: "Error", code: "rate_limited"}`;
//   10 refused frames in a row close the connection (1008).
// - Server events come from the log through the hub (./hub.ts).

import { upgradeWebSocket } from '@hono/node-server';
import { createRoute } from '@hono/zod-openapi';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../shared/http-errors.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { anyone } from '../../shared/route-policy.ts';
import { isUuid } from '../../shared/params.ts';
import { principalOfAnyToken } from '../auth.ts';
import { isMemberNow } from '../channels/commands.ts';
import { openDistribution } from '../sender-keys/commands.ts';
import type { ChatDeps } from '../deps.ts';
import { chatErrors, chatRouter } from '../router.ts';
import { SocketHub, type HubSocket } from './hub.ts';
import { PresenceTracker } from './presence.ts';

export const WS_FRAME_RULE = { limit: 10, windowMs: 2000 };
export const WS_AUTH_TIMEOUT_MS = 10_000;
export const WS_ABUSE_REFUSALS = 10;

type Frame = { type: string; [key: string]: unknown };

/** `{type: "X", ...}` or `{"X": {...}}`; null for anything else. */
export function readFrame(text: string): Frame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (typeof record.type === 'string') return record as Frame;
  const keys = Object.keys(record);
  const inner = keys.length === 1 ? record[keys[0]!] : undefined;
  if (typeof inner === 'object' && inner !== null && !Array.isArray(inner))
    return { ...(inner as Record<string, unknown>), type: keys[0]! };
  return null;
}

export function wsRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const hub = new SocketHub(
    deps.events,
    deps.log,
    (channelId, userId, sealed) => openDistribution(deps.sealKey, channelId, userId, sealed),
    new PresenceTracker(deps.db, deps.log),
  );

  /**
   * Membership at subscribe (isMemberNow: the read model for a live channel, the channel's own
   * stream, read now, for the membership, as the read model may lag a removal the hub has not
   * seen yet). A removal appended after this read reaches the hub in log order and drops the
   * subscription.
   */
  async function subscribe(member: HubSocket, channelId: unknown): Promise<Record<string, unknown>> {
    if (typeof channelId !== 'string' || !isUuid(channelId))
      return {
        type: 'Error',
        error: 'channel_id must be a channel UUID',
        code: 'not_found',
        channel_id: channelId ?? null,
      };
    try {
      if (!(await isMemberNow(deps, channelId, member.user_id)))
        return {
          type: 'Error',
          error: 'you are not a member of this channel',
          code: 'forbidden',
          channel_id: channelId,
        };
    } catch (error) {
      if (error instanceof ApiError || error instanceof DomainError)
        return { type: 'Error', error: 'no such channel', code: 'not_found', channel_id: channelId };
      throw error;
    }
    const result = hub.subscribe(member, channelId);
    if (result === 'full')
      return {
        type: 'Error',
        error: 'too many subscriptions on this connection',
        code: 'too_many_subscriptions',
        channel_id: channelId,
      };
    if (!result)
      return { type: 'Error', error: 'you are not a member of this channel', code: 'forbidden', channel_id: channelId };
    return { type: 'Subscribed', channel_id: channelId };
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/ws',
      tags: ['websocket'],
      summary: 'The chat WebSocket (authenticate with an Authenticate frame)',
      // Anyone opens the socket; it authenticates in-band (the Authenticate frame).
      middleware: anyone(),
      description:
        'Client frames: Authenticate {token} (answered Authenticated {user_id, client_version}), Ping, Subscribe {channel_id}, Unsubscribe {channel_id}, Typing {channel_id}. ' +
        'Server frames: Authenticated, KeysLow {remaining}, Pong, Subscribed, Unsubscribed {channel_id, reason}, MessageCreated {channel_id, message}, MessageEdited, MessageDeleted, ' +
        'SenderKeyUpdated {channel_id, user_id, chain_id, distribution}, SenderKeyRotationRequired {channel_id}, MemberJoined, MemberLeft, ChannelJoined {channel_id, scope} (to the joiner), Typing, Mentioned, Error {error, code?}. ' +
        'Rate limit per connection: 10-frame burst, 5 per second sustained.',
      responses: {
        101: { description: 'switching protocols' },
        ...chatErrors({ 426: 'not a WebSocket upgrade request' }),
      },
    }),
    async (c) => {
      if (c.req.header('upgrade')?.toLowerCase() !== 'websocket')
        throw new ApiError(426, 'upgrade_required', 'this route takes a WebSocket upgrade');
      const id = randomUUID();
      let member: HubSocket | null = null;
      let refusedInARow = 0;
      let queue = Promise.resolve();
      let timer: NodeJS.Timeout | null = null;
      let closed = false;
      let handle: ((text: string) => Promise<void>) | null = null;

      const response = await upgradeWebSocket(
        c,
        {
          onOpen(_event, ws) {
            const send = (frame: Record<string, unknown>) => {
              if (!closed) ws.send(JSON.stringify(frame));
            };
            const close = (code: number, reason: string) => {
              if (closed) return;
              closed = true;
              ws.close(code, reason);
            };
            timer = setTimeout(() => {
              if (!member) {
                send({ type: 'Error', error: 'authentication timeout' });
                close(4401, 'authentication timeout');
              }
            }, WS_AUTH_TIMEOUT_MS);
            handle = async (text: string) => {
              const decision = await deps.limiter.consume(`chat:ws:${id}`, WS_FRAME_RULE);
              if (!decision.allowed) {
                refusedInARow += 1;
                send({
                  type: 'Error',
                  error: 'too many frames',
                  code: 'rate_limited',
                  retry_after: decision.retryAfterSeconds,
                });
                if (refusedInARow >= WS_ABUSE_REFUSALS) close(1008, 'rate limit abuse');
                return;
              }
              refusedInARow = 0;
              const frame = readFrame(text);
              if (!frame) return send({ type: 'Error', error: 'frames are JSON objects with a type' });
              if (frame.type === 'Ping') return send({ type: 'Pong' });
              if (frame.type === 'Authenticate') {
                if (member) return send({ type: 'Error', error: 'already authenticated' });
                const principal = typeof frame.token === 'string' ? await principalOfAnyToken(deps, frame.token) : null;
                if (!principal) {
                  send({ type: 'Error', error: 'invalid or expired token' });
                  return close(4401, 'invalid token');
                }
                if (closed) return;
                member = { user_id: principal.user_id, session_id: principal.session_id, send, close };
                await hub.join(member);
                if (timer) clearTimeout(timer);
                return send({ type: 'Authenticated', user_id: principal.user_id, client_version: deps.version });
              }
              if (!member) return send({ type: 'Error', error: 'authenticate first' });
              if (frame.type === 'Subscribe') return send(await subscribe(member, frame.channel_id));
              if (frame.type === 'Unsubscribe') {
                if (typeof frame.channel_id === 'string') hub.unsubscribe(member, frame.channel_id);
                return send({ type: 'Unsubscribed', channel_id: frame.channel_id ?? null, reason: 'requested' });
              }
              if (frame.type === 'Typing') {
                if (typeof frame.channel_id === 'string' && hub.isSubscribed(member, frame.channel_id))
                  hub.typing(member, frame.channel_id);
                return;
              }
              return send({ type: 'Error', error: `unknown frame type ${JSON.stringify(frame.type.slice(0, 32))}` });
            };
          },
          onMessage(event) {
            const text = typeof event.data === 'string' ? event.data : '';
            const next = handle;
            if (!next) return;
            // One frame at a time, in order.
            queue = queue
              .then(() => next(text))
              .catch((error) => deps.log.error('chat_ws_frame_failed', { error: (error as Error).message }));
          },
          onClose() {
            closed = true;
            if (timer) clearTimeout(timer);
            if (member) hub.leave(member);
          },
        },
        { onError: (error) => deps.log.warn('chat_ws_error', { error: (error as Error).message }) },
      );
      return response as never;
    },
  );

  return app;
}
