// Authentication and authorisation of the orchestration service, in one place.
//
// `authenticate` resolves every request to one principal and never rejects: an `X-API-Key`
// (account, runner service principal or agent credential; a key wins over a cookie), else the
// `orch_sess` cookie, else forward-auth identity headers from a trusted peer, else anonymous.
// The guards below (`requireKey`, `requireAdmin`) decide what each route admits.

import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { csrfTokenFor, csrfTokenValid } from '../../crypto/csrf.ts';
import { hashToken } from '../../crypto/tokens.ts';
import { SESSION_TTL_MS } from '../../domain/orchestration/sessions/decider.ts';
import type { Role } from '../../domain/orchestration/users/decider.ts';
import type { Config } from '../../infra/config.ts';
import type { Platform } from '../../infra/platform.ts';
import { ApiError } from '../shared/http-errors.ts';
import { userByKeyHash, userBySession, type UserRow } from './accounts/queries.ts';
import { forwardAuthSignIn, startSession } from './accounts/service.ts';
import { PrincipalCache } from './principal-cache.ts';
import { trustedNets } from './trusted-nets.ts';

export type Principal =
  | { kind: 'account'; user: UserRow; via: 'api_key' }
  | { kind: 'account'; user: UserRow; via: 'session'; sessionHash: string; sessionId: string }
  | { kind: 'service'; user: UserRow; via: 'api_key' }
  | { kind: 'agent'; user: UserRow; via: 'api_key' }
  | { kind: 'anonymous' };

export type OrchVars = { principal: Principal; apiKeyPresented: boolean };
export type OrchEnv = { Variables: OrchVars & { requestId: string } };

export const MISSING_KEY = 'missing X-API-Key header';
export const INVALID_KEY = 'invalid or inactive API key';
export const SESSION_COOKIE = 'orch_sess';
export const CSRF_COOKIE = 'orch_csrf';

/**
 * Whether the runner principal may exist: it needs its own key, never the admin's, and the admin
 * key must not sit as a literal in this process's environment (the file form is required).
 */
export function runnerRefusal(config: Config): string | null {
  if (!config.runnerApiKey) return 'ORCH_RUNNER_API_KEY is not set';
  if (config.adminApiKeyLiteral) return 'ADMIN_API_KEY is set as a literal value in the environment; supply it through ADMIN_API_KEY_FILE';
  if (config.adminApiKey && config.adminApiKey === config.runnerApiKey) return 'ORCH_RUNNER_API_KEY equals the admin key; the runner must have its own, non-admin key';
  return null;
}

export function peerAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

function overTls(c: Context): boolean {
  const incoming = (c.env as { incoming?: { socket?: { encrypted?: boolean } } } | undefined)?.incoming;
  return incoming?.socket?.encrypted === true;
}

/** Set `orch_sess` (HttpOnly) and `orch_csrf` (readable by the page, bound to the session). */
export function setSessionCookies(c: Context, platform: Platform, sessionId: string): void {
  const secure = platform.config.cookieSecure || overTls(c);
  const maxAge = Math.floor(SESSION_TTL_MS / 1000);
  setCookie(c, SESSION_COOKIE, sessionId, { httpOnly: true, sameSite: 'Strict', secure, path: '/', maxAge });
  setCookie(c, CSRF_COOKIE, csrfTokenFor(platform.sealKey, sessionId), { httpOnly: false, sameSite: 'Strict', secure, path: '/', maxAge });
}

export function clearSessionCookies(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/' });
  deleteCookie(c, CSRF_COOKIE, { path: '/' });
}

function roleFromGroups(config: Config, groups: string[]): Role {
  if (groups.includes(config.forwardAuth.adminGroup)) return 'admin';
  if (groups.includes(config.forwardAuth.userGroup)) return 'user';
  return 'readonly';
}

export function authenticate(platform: Platform): MiddlewareHandler<OrchEnv> {
  const { config } = platform;
  const fa = config.forwardAuth;
  const trusted = fa.enabled ? trustedNets(fa.trustedNets) : () => false;
  const runnerAllowed = runnerRefusal(config) === null;
  const cache = new PrincipalCache(platform.engine);

  return async (c, next) => {
    c.set('principal', { kind: 'anonymous' });
    const key = c.req.header('x-api-key')?.trim();
    c.set('apiKeyPresented', !!key);
    const context = { actor: { kind: 'system' as const, id: 'auth' }, correlationId: c.get('requestId') };

    if (key) {
      const hash = hashToken(key);
      const user = await cache.get(`key:${hash}`, () => userByKeyHash(platform.pool, hash));
      if (user?.is_active) {
        if (user.principal_type === 'service') {
          if (runnerAllowed) c.set('principal', { kind: 'service', user, via: 'api_key' });
        } else if (user.principal_type === 'agent') {
          c.set('principal', { kind: 'agent', user, via: 'api_key' });
        } else {
          c.set('principal', { kind: 'account', user, via: 'api_key' });
        }
      }
      return next();
    }

    const sessionId = getCookie(c, SESSION_COOKIE);
    const sessionHash = sessionId ? hashToken(sessionId) : null;
    const sessionUser = sessionHash
      ? await cache.get(`session:${sessionHash}`, () => userBySession(platform.pool, sessionHash),
        (row) => (row as Awaited<ReturnType<typeof userBySession>>)!.session_expires_at.getTime())
      : null;
    const asserted = fa.enabled && trusted(peerAddress(c)) ? c.req.header(fa.userHeader)?.trim() : undefined;

    if (sessionUser && sessionId && sessionHash && (!asserted || asserted === sessionUser.username)) {
      c.set('principal', { kind: 'account', user: sessionUser, via: 'session', sessionHash, sessionId });
    } else if (asserted) {
      // Forward-auth sign-in: provisions on first sight; the stored role follows the groups only here.
      const groups = (c.req.header(fa.groupsHeader) ?? '').split(fa.groupsDelim).map((g) => g.trim()).filter(Boolean);
      const user = await forwardAuthSignIn(platform, {
        username: asserted, email: c.req.header(fa.emailHeader)?.trim() ?? '', role: roleFromGroups(config, groups),
      }, { ...context, actor: { kind: 'user', id: null } });
      if (user.is_active) {
        const newSession = await startSession(platform, user, 'forward_auth', { ...context, actor: { kind: 'user', id: user.id } });
        setSessionCookies(c, platform, newSession);
        c.set('principal', { kind: 'account', user, via: 'session', sessionHash: hashToken(newSession), sessionId: newSession });
      }
    }
    return next();
  };
}

/** `Origin` and `Sec-Fetch-Site`, when present, must say the request comes from this server's own pages. */
export function sameOrigin(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === c.req.header('host');
  } catch {
    return false; // `null` or garbage
  }
}

/** A cookie-authenticated request passes when same-origin and carrying its session's CSRF token. */
export function sessionRequestTrusted(c: Context, platform: Platform, sessionId: string): boolean {
  const presented = c.req.header('x-csrf-token');
  return sameOrigin(c) && presented === getCookie(c, CSRF_COOKIE) && csrfTokenValid(platform.sealKey, sessionId, presented);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Defence in depth beside SameSite=Strict: every state-changing request authenticated by a
 * session cookie must pass the same-origin and CSRF checks (403 `csrf_failed`). Keyed clients
 * are not affected: a key is not sent by a browser on its own.
 */
export function requireCsrfForSessions(platform: Platform): MiddlewareHandler<OrchEnv> {
  return async (c, next) => {
    const principal = c.get('principal');
    if (!SAFE_METHODS.has(c.req.method) && principal.kind === 'account' && principal.via === 'session'
      && !sessionRequestTrusted(c, platform, principal.sessionId)) {
      throw new ApiError(403, 'csrf_failed', 'same-origin or CSRF check failed');
    }
    await next();
  };
}

/** The 401 for a caller with no principal: which of the spec's two messages depends on whether a key came. */
export function unauthenticated(c: Context<OrchEnv>): ApiError {
  return new ApiError(401, 'unauthorized', c.get('apiKeyPresented') ? INVALID_KEY : MISSING_KEY);
}

/** 401 unless the caller is a keyed principal, with the spec's two messages. */
export function requireKey(): MiddlewareHandler<OrchEnv> {
  return async (c, next) => {
    if (c.get('principal').kind === 'anonymous') {
      throw unauthenticated(c);
    }
    await next();
  };
}

export function roleOf(principal: Principal): Role | null {
  if (principal.kind === 'anonymous') return null;
  // The runner and agents act with the normal role, never admin.
  return principal.kind === 'account' ? principal.user.role : 'user';
}

/** `require_admin`: 403 `admin role required` for any other principal, unless enforcement is opted out. */
export function requireAdmin(platform: Platform): MiddlewareHandler<OrchEnv> {
  return async (c, next) => {
    const principal = c.get('principal');
    if (principal.kind === 'anonymous') throw unauthenticated(c);
    if (platform.config.enforceAdminRole && roleOf(principal) !== 'admin') throw new ApiError(403, 'forbidden', 'admin role required');
    await next();
  };
}

export function principalUser(c: Context<OrchEnv>): UserRow {
  const principal = c.get('principal');
  if (principal.kind === 'anonymous') throw new ApiError(401, 'unauthorized', MISSING_KEY);
  return principal.user;
}

/** The actor recorded in event metadata for this request's principal. */
export function actorOf(c: Context<OrchEnv>) {
  const principal = c.get('principal');
  const kind = principal.kind === 'anonymous' ? 'visitor' : principal.kind === 'account' ? 'user' : principal.kind;
  return { actor: { kind, id: principal.kind === 'anonymous' ? null : principal.user.id } as const, correlationId: c.get('requestId') };
}
