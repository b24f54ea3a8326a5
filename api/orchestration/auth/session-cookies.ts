// Browser sessions: the `orch_sess` cookie (HttpOnly, SameSite=Strict, Secure over TLS or with
// ORCH_COOKIE_SECURE) and `orch_csrf`, readable by the page: an HMAC of the session id under the
// server key, bound to the session without being stored. A state-changing request made with the
// session must be same-origin and carry the CSRF token in `X-CSRF-Token`.

import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { csrfTokenFor, csrfTokenValid } from '../../../crypto/csrf.ts';
import { SESSION_TTL_MS } from '../../../domain/orchestration/users/session.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { overTls } from '../../shared/peer.ts';
import type { OrchDeps } from '../deps.ts';
import type { OrchEnv } from './principal.ts';

export const SESSION_COOKIE = 'orch_sess';
export const CSRF_COOKIE = 'orch_csrf';

export function setSessionCookies(c: Context, deps: Pick<OrchDeps, 'config' | 'sealKey'>, sessionId: string): void {
  const secure = deps.config.cookieSecure || overTls(c);
  const maxAge = Math.floor(SESSION_TTL_MS / 1000);
  setCookie(c, SESSION_COOKIE, sessionId, { httpOnly: true, sameSite: 'Strict', secure, path: '/', maxAge });
  setCookie(c, CSRF_COOKIE, csrfTokenFor(deps.sealKey, sessionId), {
    httpOnly: false,
    sameSite: 'Strict',
    secure,
    path: '/',
    maxAge,
  });
}

export function clearSessionCookies(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/' });
  deleteCookie(c, CSRF_COOKIE, { path: '/' });
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
export function sessionRequestTrusted(c: Context, sealKey: Uint8Array, sessionId: string): boolean {
  const presented = c.req.header('x-csrf-token');
  return sameOrigin(c) && presented === getCookie(c, CSRF_COOKIE) && csrfTokenValid(sealKey, sessionId, presented);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Defence in depth beside SameSite=Strict: every state-changing request authenticated by a
 * session cookie must pass the same-origin and CSRF checks (403 `csrf_failed`). Keyed clients
 * are not affected: a browser does not send a key on its own.
 */
export function requireCsrfForSessions(sealKey: Uint8Array): MiddlewareHandler<OrchEnv> {
  return async (c, next) => {
    const principal = c.get('principal');
    if (
      !SAFE_METHODS.has(c.req.method) &&
      principal.kind === 'account' &&
      principal.via === 'session' &&
      !sessionRequestTrusted(c, sealKey, principal.sessionId)
    ) {
      throw new ApiError(403, 'csrf_failed', 'same-origin or CSRF check failed');
    }
    await next();
  };
}
