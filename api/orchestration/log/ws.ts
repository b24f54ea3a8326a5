// The orchestration sockets (spec 1, "Health and sockets"):
//
// - `GET /ws`: the log as it happens. Frames `{position, stream, type, data, metadata, at}`, one
//   per event the principal may see (./visibility.ts), in log order; `?from=<position>` first
//   replays what followed that position (exclusive: resume with the last position received),
//   without it the feed starts now. The first frame is `{control: "ready", from}`. The principal
//   is optional: an `X-API-Key`, the session cookie, forward-auth, or `?key=` for browsers; a key
//   that is presented but invalid is refused (401). A socket that does not keep up is closed 4008.
// - `GET /ws/live`: status frames only (./live-status.ts), every few seconds. Unless
//   ORCH_GATE_WS_LIVE is an explicit falsy value, an upgrade without identity gets 401.
//
// Both answer 426 to a request that is not a WebSocket upgrade. Clients send nothing; anything
// they send is ignored.

import { upgradeWebSocket } from '@hono/node-server';
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { hashToken } from '../../../crypto/tokens.ts';
import { parsePosition, type Position } from '../../../infra/eventstore/position.ts';
import { anyone, checkedByHandler } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { INVALID_KEY, roleOf, unauthenticated } from '../auth/guards.ts';
import type { OrchEnv, Principal } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { DEFAULT_FEED_LIMITS, LogFeed, type FeedLimits } from './feed.ts';
import { LiveStatus } from './live-status.ts';
import type { Viewer } from './visibility.ts';
import { agentById } from '../../../projections/orchestration/agents.ts';
import { projectStreams } from '../../../projections/orchestration/projects.ts';

export const STATUS_INTERVAL_MS = 2000;

type RawSocket = { bufferedAmount?: number };

async function viewerOf(principal: Principal, deps: OrchDeps): Promise<Viewer> {
  if (principal.kind === 'anonymous') return { kind: 'anonymous', userId: null };
  if (principal.kind === 'account')
    return { kind: roleOf(principal) === 'admin' ? 'admin' : 'account', userId: principal.user.id };
  if (principal.kind !== 'agent') return { kind: principal.kind, userId: principal.user.id };
  // An agent credential's id is its agent's.
  const agent = await agentById(deps.db, principal.user.id);
  const project = agent
    ? { id: agent.project_id, streams: new Set(await projectStreams(deps.db, agent.project_id)) }
    : undefined;
  return { kind: 'agent', userId: principal.user.id, project };
}

/** The request's principal, with `?key=` read for browsers (which cannot set headers on a socket). */
async function socketPrincipal(c: Context<OrchEnv>, deps: OrchDeps): Promise<Principal> {
  const principal = c.get('principal');
  const key = c.req.query('key')?.trim();
  if (c.get('apiKeyPresented') && principal.kind === 'anonymous') throw unauthenticated(c);
  if (principal.kind !== 'anonymous' || !key) return principal;
  const user = await deps.principals.byKeyHash(hashToken(key));
  if (!user?.is_active || user.principal_type === 'service') throw new ApiError(401, 'unauthorized', INVALID_KEY);
  return user.principal_type === 'agent'
    ? { kind: 'agent', user, via: 'api_key' }
    : { kind: 'account', user, via: 'api_key' };
}

/** A socket authenticated by the session cookie must come from this origin (cross-site WebSocket hijacking). */
function checkOrigin(c: Context<OrchEnv>, principal: Principal): void {
  const origin = c.req.header('origin');
  if (principal.kind !== 'account' || principal.via !== 'session' || !origin) return;
  let host: string | null = null;
  try {
    host = new URL(origin).host;
  } catch {
    host = null;
  }
  if (host !== c.req.header('host')) throw new ApiError(403, 'forbidden', 'cross-origin socket with a session cookie');
}

const requireUpgrade = (c: Context<OrchEnv>) => {
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket')
    throw new ApiError(426, 'upgrade_required', 'this route takes a WebSocket upgrade');
};

const FromQuery = z.object({
  from: z.string().optional().openapi({
    description:
      'resume after this log position (`commit/prepare`, exclusive); `0/0` replays the whole log; absent: from now on',
  }),
  key: z.string().optional().openapi({ description: 'an API key, for browsers that cannot set X-API-Key on a socket' }),
});

export function socketRoutes(deps: OrchDeps, limits: FeedLimits = DEFAULT_FEED_LIMITS) {
  const app = orchRouter();
  const feed = new LogFeed(deps.events, deps.log, limits);
  const status = new LiveStatus(deps, STATUS_INTERVAL_MS);
  const onError = (error: unknown) => deps.log.warn('ws_error', { error: (error as Error).message });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/ws',
      tags: ['websocket'],
      summary: 'The log as it happens, filtered by what the principal may see',
      middleware: anyone(),
      description:
        'Frames: `{control: "ready", from}` first, then `{position, stream, type, data, metadata, at}` per event. ' +
        "Admins see every event; accounts their own account's events and the estate; anonymous sockets only public events. " +
        'Personal fields reach admins only. Close 4008: the socket fell too far behind.',
      request: { query: FromQuery },
      responses: {
        101: { description: 'switching protocols' },
        ...orchErrors({
          400: 'validation_failed (from is not a log position)',
          401: 'invalid or inactive API key',
          403: 'cross-origin socket with a session cookie',
          426: 'not a WebSocket upgrade request',
        }),
      },
    }),
    async (c) => {
      requireUpgrade(c);
      const principal = await socketPrincipal(c, deps);
      checkOrigin(c, principal);
      const fromText = c.req.query('from');
      let from: Position | null = null;
      if (fromText !== undefined) {
        try {
          from = parsePosition(fromText);
        } catch {
          throw new ApiError(400, 'validation_failed', 'from must be a log position (commit/prepare)');
        }
      }
      const viewer = await viewerOf(principal, deps);
      let leave: (() => void) | null = null;
      let closed = false;
      const response = await upgradeWebSocket(
        c,
        {
          onOpen(_event, ws) {
            const raw = ws.raw as RawSocket | undefined;
            const socket = {
              viewer,
              send: (text: string) => {
                if (!closed) ws.send(text);
              },
              bufferedAmount: () => raw?.bufferedAmount ?? 0,
              close: (code: number, reason: string) => {
                if (closed) return;
                closed = true;
                ws.close(code, reason);
              },
            };
            socket.send(JSON.stringify({ control: 'ready', from: fromText ?? null }));
            feed.open(socket, from).then(
              (remove) => {
                if (closed) remove();
                else leave = remove;
              },
              (error) => {
                deps.log.error('ws_feed_open_failed', { error: (error as Error).message });
                socket.close(1011, 'live delivery unavailable');
              },
            );
          },
          onClose() {
            closed = true;
            leave?.();
          },
        },
        { onError },
      );
      return response as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/ws/live',
      tags: ['websocket'],
      summary: 'Status frames: health, projection lag, agent and task counts, chat turns per minute',
      middleware: deps.config.gateWsLive ? checkedByHandler({ rule: 'signed-in' }) : anyone(),
      description:
        `Frames \`{type: "status", at, service, projections, agents_by_status, tasks_by_status, chat_turns_per_minute}\` every ${STATUS_INTERVAL_MS / 1000} s; no message bodies, no user data. ` +
        'Needs a key, session or forward-auth identity unless ORCH_GATE_WS_LIVE is an explicit falsy value.',
      request: { query: FromQuery.pick({ key: true }) },
      responses: {
        101: { description: 'switching protocols' },
        ...orchErrors({
          401: 'gated and no identity (missing X-API-Key header), or an invalid key',
          403: 'cross-origin socket with a session cookie',
          426: 'not a WebSocket upgrade request',
        }),
      },
    }),
    async (c) => {
      requireUpgrade(c);
      const principal = await socketPrincipal(c, deps);
      if (principal.kind === 'anonymous' && deps.config.gateWsLive) throw unauthenticated(c);
      checkOrigin(c, principal);
      let stop: (() => void) | null = null;
      const response = await upgradeWebSocket(
        c,
        {
          onOpen(_event, ws) {
            stop = status.listen((frame) => ws.send(frame));
          },
          onClose() {
            stop?.();
          },
        },
        { onError },
      );
      return response as never;
    },
  );

  return app;
}
