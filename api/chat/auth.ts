// Who may call the chat service's authenticated routes: a Bearer JWT access token (HS256, 15
// minutes, claims `sub`, `is_admin`, `is_owner`, `sid`, `exp`), whose session is still live and
// whose account still exists and is not suspended (checked on every request, so revoking a
// session, deleting or suspending an account takes effect at once, not when the token expires),
// or a bot token in `X-Bot-Token` (tried first; a request carrying both is 400). Every JWT
// request counts against the caller's API token bucket; every bot request against its token's
// window (60 per 10 s unless the token says otherwise), with X-RateLimit-* headers on every bot
// response.
//
// Scopes: a route names the bot scopes it takes (`default` unless it says otherwise). `metrics`
// tokens reach only the cockpit, `bot:provision` tokens only the bot administration routes;
// any other scope is 403 there.
//
// Expiry is checked against the injected clock (tests move it), not hono's own `Date.now()`.

import type { Context, MiddlewareHandler } from 'hono';
import { sign, verify } from 'hono/jwt';
import { hashToken } from '../../crypto/tokens.ts';
import { BOT_RATE_DEFAULT, BOT_RATE_WINDOW_MS, BOT_TOKEN_PATTERN } from '../../domain/chat/bots/decider.ts';
import type { BotScope, BotTokenUseEvent } from '../../domain/chat/bots/events.ts';
import { botTokenUseStream } from '../../domain/chat/streams.ts';
import type { BotTokenAuthRow } from '../../projections/chat/bots.ts';
import { ApiError, rateLimited } from '../shared/http-errors.ts';
import { rateLimiting } from '../shared/route-declaration.ts';
import { guard } from '../shared/route-policy.ts';
import type { ChatDeps } from './deps.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface ChatPrincipal {
  user_id: string;
  username: string;
  is_admin: boolean;
  is_owner: boolean;
  /** For a bot: the token's id (its sockets close when it is revoked). */
  session_id: string;
  /** Set when the caller authenticated with a bot token. */
  bot?: { token_id: string; scope: BotScope };
}

export type ChatEnv = { Variables: { requestId: string; chatUser: ChatPrincipal } };

type TokenDeps = Pick<ChatDeps, 'jwtSecret' | 'clock'>;

export async function issueAccessToken(
  deps: TokenDeps,
  claims: { user_id: string; is_admin: boolean; is_owner: boolean; session_id: string },
): Promise<string> {
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  return sign(
    {
      sub: claims.user_id,
      is_admin: claims.is_admin,
      is_owner: claims.is_owner,
      sid: claims.session_id,
      iat: now,
      exp: now + ACCESS_TOKEN_TTL_SECONDS,
    },
    deps.jwtSecret,
    'HS256',
  );
}

/** The live principal behind an access token, or null (malformed, forged, expired, revoked). */
export async function principalOfToken(
  deps: Pick<ChatDeps, 'jwtSecret' | 'clock' | 'sessions'>,
  token: string,
): Promise<ChatPrincipal | null> {
  let payload: Record<string, unknown>;
  try {
    payload = await verify(token, deps.jwtSecret, { alg: 'HS256', exp: false, nbf: false, iat: false });
  } catch {
    return null;
  }
  const { sub, sid, exp } = payload;
  if (typeof sub !== 'string' || typeof sid !== 'string' || typeof exp !== 'number') return null;
  if (exp * 1000 <= deps.clock.now().getTime()) return null;
  if (!/^[0-9a-f-]{36}$/i.test(sid) || !/^[0-9a-f-]{36}$/i.test(sub)) return null;
  const row = await deps.sessions.principal(sid, sub);
  return (
    row && {
      user_id: row.user_id,
      username: row.username,
      is_admin: row.is_admin,
      is_owner: row.is_owner,
      session_id: sid,
    }
  );
}

/**
 * The per-user token bucket of the general API: `CHATSVC_API_RATE_PER_SEC` sustained with a
 * burst of twice that, expressed on the shared sliding-window limiter as "at most 2 × rate
 * requests in any 2 seconds": a full burst at once, then the rate on average.
 */
export function apiRule(ratePerSec: number) {
  return { limit: 2 * ratePerSec, windowMs: 2000 };
}

type BotDeps = Pick<ChatDeps, 'bots' | 'clock'>;

/** Why a presented bot token is refused, or null when it is good now (active, unrevoked, unexpired, a live bot not suspended). */
export function botTokenRefusal(row: BotTokenAuthRow | null, now: Date): string | null {
  if (!row) return 'invalid bot token';
  if (row.revoked_at) return 'bot token revoked';
  if (row.expires_at && row.expires_at.getTime() <= now.getTime()) return 'bot token expired';
  if (!row.is_bot || row.deleted) return 'invalid bot token';
  if (row.suspended) return 'bot account suspended';
  return null;
}

/** The token row behind a presented bot token and whether it may be used now. */
export async function botTokenOf(
  deps: BotDeps,
  token: string,
): Promise<{ row: BotTokenAuthRow | null; refusal: string | null }> {
  const row = BOT_TOKEN_PATTERN.test(token) ? await deps.bots.byHash(hashToken(token)) : null;
  return { row, refusal: botTokenRefusal(row, deps.clock.now()) };
}

export const botPrincipal = (row: BotTokenAuthRow): ChatPrincipal => ({
  user_id: row.bot_id,
  username: row.username,
  is_admin: false,
  is_owner: false,
  session_id: row.token_id,
  bot: { token_id: row.token_id, scope: row.scope },
});

/** A bot token (`cb_...`) or an access token: the principal for the WebSocket `Authenticate` frame (bot tokens of the default scope only). */
export async function principalOfAnyToken(
  deps: Pick<ChatDeps, 'jwtSecret' | 'clock' | 'sessions' | 'bots'>,
  token: string,
): Promise<ChatPrincipal | null> {
  if (token.startsWith('cb_')) {
    const { row, refusal } = await botTokenOf(deps, token);
    return row && !refusal && row.scope === 'default' ? botPrincipal(row) : null;
  }
  return principalOfToken(deps, token);
}

export interface AuthOptions {
  /** Bot scopes the route takes (default: `default` only; [] refuses every bot token). */
  bots?: readonly BotScope[];
  /** Whether an access token (JWT) is taken (default true). */
  jwt?: boolean;
}

type Limits = { limit: number; remaining: number; reset: number };

function setLimitHeaders(headers: Headers, limits: Limits): void {
  headers.set('X-RateLimit-Limit', String(limits.limit));
  headers.set('X-RateLimit-Remaining', String(limits.remaining));
  headers.set('X-RateLimit-Reset', String(limits.reset));
}

/** The per-user (or per-bot-token) rate limit answers 429 on every route this guards. */
export function requireChatUser(deps: ChatDeps, options: AuthOptions = {}): MiddlewareHandler<ChatEnv> {
  const rule = apiRule(deps.config.apiRatePerSec);
  const scopes: readonly BotScope[] = options.bots ?? ['default'];
  const jwt = options.jwt ?? true;
  // Its rule by the credentials it takes: `user or bot default`, `user`, `bot metrics`, ...
  const credentials = [...(jwt ? ['user'] : []), ...scopes.map((scope) => `bot ${scope}`)].join(' or ');
  return rateLimiting(
    guard(
      {
        rule: credentials,
        refusals: {
          401: 'missing, invalid or expired credentials',
          403: 'insufficient_scope (a bot token of another scope)',
        },
      },
      async (c, next) => {
        const botToken = c.req.header('x-bot-token');
        const header = c.req.header('authorization');
        if (botToken !== undefined && header !== undefined)
          throw new ApiError(400, 'ambiguous_credentials', 'send either X-Bot-Token or Authorization, not both');
        if (botToken !== undefined) return botRequest(deps, c, botToken.trim(), scopes, next);
        const match = /^Bearer\s+(\S+)$/i.exec((header ?? '').trim());
        if (!match) throw new ApiError(401, 'unauthorized', 'missing Bearer access token or X-Bot-Token');
        const principal = await principalOfToken(deps, match[1]!);
        if (!principal) throw new ApiError(401, 'unauthorized', 'invalid or expired access token');
        if (!jwt) throw new ApiError(403, 'insufficient_scope', 'this route takes a bot token of scope metrics only');
        const decision = await deps.limiter.consume(`chat:api:${principal.user_id}`, rule);
        if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'too many requests');
        c.set('chatUser', principal);
        await next();
      },
    ),
  );
}

async function botRequest(
  deps: ChatDeps,
  c: Context<ChatEnv>,
  token: string,
  scopes: readonly BotScope[],
  next: () => Promise<void>,
): Promise<void> {
  const { row, refusal } = await botTokenOf(deps, token);
  if (refusal || !row) throw new ApiError(401, 'unauthorized', refusal ?? 'invalid bot token');
  const limit = row.rate_limit_per_window ?? BOT_RATE_DEFAULT;
  const decision = await deps.limiter.consume(`chat:bot:${row.token_id}`, { limit, windowMs: BOT_RATE_WINDOW_MS });
  const limits: Limits = {
    limit,
    remaining: decision.remaining,
    reset:
      Math.ceil(deps.clock.now().getTime() / 1000) +
      (decision.allowed ? (decision.resetSeconds ?? Math.ceil(BOT_RATE_WINDOW_MS / 1000)) : decision.retryAfterSeconds),
  };
  // On the context (kept by the error handler's response) and again on the final response.
  for (const [k, v] of [
    ['X-RateLimit-Limit', limits.limit],
    ['X-RateLimit-Remaining', limits.remaining],
    ['X-RateLimit-Reset', limits.reset],
  ] as const)
    c.header(k, String(v));
  try {
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'bot token rate limit exceeded');
    if (!scopes.includes(row.scope)) {
      throw new ApiError(
        403,
        'insufficient_scope',
        row.scope === 'metrics'
          ? 'a metrics token reaches only GET /api/v1/metrics/cockpit'
          : row.scope === 'bot:provision'
            ? 'a bot:provision token reaches only the bot administration routes'
            : 'this route does not take a bot token of this scope',
      );
    }
    const now = deps.clock.now();
    if (deps.bots.shouldRecordUse(row.token_id, now.getTime())) {
      const event: BotTokenUseEvent = { type: 'BotTokenUsed', data: { token_id: row.token_id, at: now.toISOString() } };
      await deps.commands.record(botTokenUseStream(row.token_id), event, {
        actor: { kind: 'user', id: row.bot_id },
        correlationId: c.get('requestId'),
      });
    }
    c.set('chatUser', botPrincipal(row));
    await next();
  } finally {
    if (c.finalized) setLimitHeaders(c.res.headers, limits);
  }
}

/** Bot administration: an admin JWT, or a `bot:provision` token (`provision: false`: admin JWT only). Runs after `requireChatUser(deps, { bots: ['bot:provision'] })`. */
export function requireBotAdmin(options: { provision: boolean }): MiddlewareHandler<ChatEnv> {
  const access = {
    rule: options.provision ? 'instance admin or bot bot:provision' : 'instance admin',
    refusals: { 403: 'forbidden or insufficient_scope' },
  };
  return guard(access, async (c, next) => {
    const user = c.get('chatUser');
    if (user.bot) {
      if (!options.provision || user.bot.scope !== 'bot:provision')
        throw new ApiError(403, 'insufficient_scope', 'this route needs an admin access token');
    } else if (!user.is_admin && !user.is_owner) {
      throw new ApiError(403, 'forbidden', 'instance admin or owner required');
    }
    await next();
  });
}

/** Instance administration: `is_admin` or `is_owner`. Runs after `requireChatUser`. */
export function requireChatAdmin(): MiddlewareHandler<ChatEnv> {
  return guard(
    { rule: 'instance admin', refusals: { 403: 'forbidden: instance admin or owner required' } },
    async (c, next) => {
      const user = c.get('chatUser');
      if (!user.is_admin && !user.is_owner) throw new ApiError(403, 'forbidden', 'instance admin or owner required');
      await next();
    },
  );
}

export const actorOf = (c: { get(key: 'chatUser'): ChatPrincipal; get(key: 'requestId'): string }) => ({
  actor: { kind: 'user' as const, id: c.get('chatUser').user_id },
  correlationId: c.get('requestId'),
});
