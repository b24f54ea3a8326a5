// The registry's access rules (spec 3, "Authentication"), in one place. Each route states its
// rule in its `middleware`:
//   access({ scope })  a machine token with that scope; any interactive user for GET, an
//                      interactive admin for writes;
//   access('admin')    interactive admins only (deletes, token administration): a token never
//                      reaches it (403), a read-only user neither;
//   access('any')      any authenticated caller (the OpenAPI document, /auth/me);
//   access('session')  an interactive user, whatever the role (logout).
// Interactive writes (OIDC session or forward-auth) must be same-origin and carry the CSRF
// token (`X-CSRF-Token`, equal to the `registry_csrf` cookie): 403 `csrf_failed` otherwise.

import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { csrfTokenFor, csrfTokenValid } from '../../../crypto/csrf.ts';
import type { Scope } from '../../../domain/registry/catalog.ts';
import { sameOrigin } from '../../orchestration/auth/session-cookies.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { guard } from '../../shared/route-policy.ts';
import type { RegistryDeps } from '../deps.ts';
import { isInteractive, type RegistryEnv, type RegistryPrincipal } from './principal.ts';

export type AccessRule = { scope: Scope } | 'admin' | 'any' | 'session';

export const CSRF_COOKIE = 'registry_csrf';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const UNAUTHENTICATED: Record<Extract<RegistryPrincipal, { kind: 'anonymous' }>['problem'], string> = {
  none: 'authentication required: a machine token (Authorization: Bearer registry_sk_...) or a signed-in session',
  invalid_token: 'invalid token',
  revoked_token: 'this token has been revoked',
  expired_token: 'this token has expired',
};

/** What an interactive principal's CSRF token is bound to: the session id, or the forward-auth user. */
function csrfSubject(p: Extract<RegistryPrincipal, { kind: 'session' | 'forward_auth' }>): string {
  return p.kind === 'session' ? `registry_session:${p.sessionId}` : `registry_forward_auth:${p.name}`;
}

export function csrfTokenOf(
  deps: Pick<RegistryDeps, 'sealKey'>,
  p: Extract<RegistryPrincipal, { kind: 'session' | 'forward_auth' }>,
): string {
  return csrfTokenFor(deps.sealKey, csrfSubject(p));
}

export function setCsrfCookie(c: Context, deps: Pick<RegistryDeps, 'sealKey' | 'config'>, token: string): void {
  const secure = deps.config.registry.publicUrl?.startsWith('https:') ?? false;
  setCookie(c, CSRF_COOKIE, token, { httpOnly: false, sameSite: 'Lax', secure, path: '/' });
}

function csrfPasses(
  c: Context,
  deps: Pick<RegistryDeps, 'sealKey'>,
  p: Extract<RegistryPrincipal, { kind: 'session' | 'forward_auth' }>,
): boolean {
  const presented = c.req.header('x-csrf-token');
  return (
    sameOrigin(c) &&
    presented !== undefined &&
    presented === getCookie(c, CSRF_COOKIE) &&
    csrfTokenValid(deps.sealKey, csrfSubject(p), presented)
  );
}

export function unauthenticated(p: Extract<RegistryPrincipal, { kind: 'anonymous' }>): ApiError {
  return new ApiError(401, 'unauthorized', UNAUTHENTICATED[p.problem]);
}

/** The rule's name in the route's document (`x-access`): `signed-in`, `admin`, `session` or `scope:<scope>`. */
const ruleName = (rule: AccessRule) =>
  rule === 'any' ? 'signed-in' : typeof rule === 'object' ? `scope:${rule.scope}` : rule;

export function access(
  deps: Pick<RegistryDeps, 'sealKey' | 'config'>,
  rule: AccessRule,
): MiddlewareHandler<RegistryEnv> {
  return guard({ rule: ruleName(rule) }, async (c, next) => {
    const p = c.get('principal');
    if (p.kind === 'anonymous') throw unauthenticated(p);
    if (p.kind === 'token') {
      if (rule === 'admin')
        throw new ApiError(
          403,
          'interactive_admin_only',
          'this route is for interactive admins only; machine tokens never reach it',
        );
      if (rule === 'session') throw new ApiError(403, 'session_required', 'this route is for interactive sessions');
      if (rule !== 'any' && !p.token.scopes.includes(rule.scope)) {
        throw new ApiError(403, 'insufficient_scope', `this route needs the scope ${rule.scope}`, {
          required_scope: rule.scope,
        });
      }
      return next();
    }
    if (!isInteractive(p)) throw unauthenticated({ kind: 'anonymous', problem: 'none' });
    const write = !SAFE_METHODS.has(c.req.method);
    if (rule === 'admin' && p.role !== 'admin')
      throw new ApiError(403, 'admin_required', 'this route is for interactive admins only');
    if (write && p.role !== 'admin' && rule !== 'session')
      throw new ApiError(403, 'read_only', 'read-only users may not write');
    if (write && !csrfPasses(c, deps, p)) throw new ApiError(403, 'csrf_failed', 'same-origin or CSRF check failed');
    // A forward-auth browser gets its CSRF token as a cookie on its first read (no sign-in step hands it out).
    if (!write && p.kind === 'forward_auth') {
      const token = csrfTokenOf(deps, p);
      if (getCookie(c, CSRF_COOKIE) !== token) setCsrfCookie(c, deps, token);
    }
    return next();
  });
}
