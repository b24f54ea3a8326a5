// Who may call the chat service's authenticated routes: a Bearer JWT access token (HS256, 15
// minutes, claims `sub`, `is_admin`, `is_owner`, `sid`, `exp`), whose session is still live and
// whose account still exists (checked on every request, so revoking a session or deleting an
// account takes effect at once, not when the token expires). Bot tokens join with the bots
// issue. Every authenticated request also counts against the caller's API token bucket.
//
// Expiry is checked against the injected clock (tests move it), not hono's own `Date.now()`.

import type { MiddlewareHandler } from 'hono';
import { sign, verify } from 'hono/jwt';
import { ApiError, rateLimited } from '../shared/http-errors.ts';
import type { ChatDeps } from './deps.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface ChatPrincipal {
  user_id: string;
  username: string;
  is_admin: boolean;
  is_owner: boolean;
  session_id: string;
}

export type ChatEnv = { Variables: { requestId: string; chatUser: ChatPrincipal } };

type TokenDeps = Pick<ChatDeps, 'jwtSecret' | 'clock'>;

export async function issueAccessToken(deps: TokenDeps, claims: { user_id: string; is_admin: boolean; is_owner: boolean; session_id: string }): Promise<string> {
  const now = Math.floor(deps.clock.now().getTime() / 1000);
  return sign({ sub: claims.user_id, is_admin: claims.is_admin, is_owner: claims.is_owner, sid: claims.session_id, iat: now, exp: now + ACCESS_TOKEN_TTL_SECONDS }, deps.jwtSecret, 'HS256');
}

/** The live principal behind an access token, or null (malformed, forged, expired, revoked). */
export async function principalOfToken(deps: Pick<ChatDeps, 'jwtSecret' | 'clock' | 'sessions'>, token: string): Promise<ChatPrincipal | null> {
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
  return row && { user_id: row.user_id, username: row.username, is_admin: row.is_admin, is_owner: row.is_owner, session_id: sid };
}

/**
 * The per-user token bucket of the general API: `CHATSVC_API_RATE_PER_SEC` sustained with a
 * burst of twice that, expressed on the shared sliding-window limiter as "at most 2 × rate
 * requests in any 2 seconds": a full burst at once, then the rate on average.
 */
export function apiRule(ratePerSec: number) {
  return { limit: 2 * ratePerSec, windowMs: 2000 };
}

export function requireChatUser(deps: ChatDeps): MiddlewareHandler<ChatEnv> {
  const rule = apiRule(deps.config.apiRatePerSec);
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!match) throw new ApiError(401, 'unauthorized', 'missing Bearer access token');
    const principal = await principalOfToken(deps, match[1]!);
    if (!principal) throw new ApiError(401, 'unauthorized', 'invalid or expired access token');
    const decision = await deps.limiter.consume(`chat:api:${principal.user_id}`, rule);
    if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'too many requests');
    c.set('chatUser', principal);
    await next();
  };
}

/** Instance administration: `is_admin` or `is_owner`. Runs after `requireChatUser`. */
export function requireChatAdmin(): MiddlewareHandler<ChatEnv> {
  return async (c, next) => {
    const user = c.get('chatUser');
    if (!user.is_admin && !user.is_owner) throw new ApiError(403, 'forbidden', 'instance admin or owner required');
    await next();
  };
}

export const actorOf = (c: { get(key: 'chatUser'): ChatPrincipal; get(key: 'requestId'): string }) => ({
  actor: { kind: 'user' as const, id: c.get('chatUser').user_id }, correlationId: c.get('requestId'),
});
