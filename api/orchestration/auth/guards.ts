// What each route admits, in one place: a signed-in caller (`requireKey`), a role
// (`requireRole`: `user` or higher, so a `readonly` account gets 403 `insufficient_role`), the
// admin (`requireAdmin`, the spec's `require_admin`), a browser session (`requireSession`, for
// the web UI's `/api/...` mirrors). Every 401 uses one of the spec's two messages. Each guard
// is tagged with the rule it enforces (route-policy.ts), so a route that uses it documents who
// may call it, and the generated authorisation matrix checks it.

import type { Context, MiddlewareHandler } from 'hono';
import type { Role } from '../../../domain/orchestration/users/events.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { UserRow } from '../../../projections/orchestration/users.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { guard } from '../../shared/route-policy.ts';
import type { OrchEnv, Principal } from './principal.ts';

export const MISSING_KEY = 'missing X-API-Key header';
export const INVALID_KEY = 'invalid or inactive API key';

/** The 401 for a caller with no principal: which of the spec's two messages depends on whether a key came. */
export function unauthenticated(c: Context<OrchEnv>): ApiError {
  return new ApiError(401, 'unauthorized', c.get('apiKeyPresented') ? INVALID_KEY : MISSING_KEY);
}

export function roleOf(principal: Principal): Role | null {
  if (principal.kind === 'anonymous') return null;
  // The runner and agents act with the normal role, never admin.
  return principal.kind === 'account' ? principal.user.role : 'user';
}

const RANK: Record<Role, number> = { readonly: 0, user: 1, admin: 2 };

const UNAUTHENTICATED = `${MISSING_KEY}, or ${INVALID_KEY}`;

/** 401 unless the caller is signed in (key or session). */
export function requireKey(): MiddlewareHandler<OrchEnv> {
  return guard({ rule: 'signed-in', refusals: { 401: UNAUTHENTICATED } }, async (c, next) => {
    if (c.get('principal').kind === 'anonymous') throw unauthenticated(c);
    await next();
  });
}

/** 401 for anonymous callers; 403 `insufficient_role` below `min` (a `readonly` account writing). */
export function requireRole(min: Exclude<Role, 'admin'>): MiddlewareHandler<OrchEnv> {
  const refusals = { 401: UNAUTHENTICATED, 403: `insufficient_role: this action needs role ${min} or higher` };
  return guard({ rule: `role:${min}`, refusals }, async (c, next) => {
    const role = roleOf(c.get('principal'));
    if (role === null) throw unauthenticated(c);
    if (RANK[role] < RANK[min]) throw new ApiError(403, 'insufficient_role', `this action needs role ${min} or higher`);
    await next();
  });
}

/** `require_admin`: 403 `admin role required` for any other principal, unless enforcement is opted out. */
export function requireAdmin(enforce: boolean): MiddlewareHandler<OrchEnv> {
  const access = enforce
    ? { rule: 'admin', refusals: { 401: UNAUTHENTICATED, 403: 'forbidden: admin role required' } }
    : { rule: 'signed-in', refusals: { 401: UNAUTHENTICATED } };
  return guard(access, async (c, next) => {
    const principal = c.get('principal');
    if (principal.kind === 'anonymous') throw unauthenticated(c);
    if (enforce && roleOf(principal) !== 'admin') throw new ApiError(403, 'forbidden', 'admin role required');
    await next();
  });
}

/**
 * The web UI's `/api/...` mirrors answer browser sessions only (cookie auth, CSRF-checked by
 * `requireCsrfForSessions`); keyed clients use the `/api/v1/...` form.
 */
export function requireSession(): MiddlewareHandler<OrchEnv> {
  return guard(
    { rule: 'session', refusals: { 401: UNAUTHENTICATED, 403: 'session_required: a keyed caller' } },
    async (c, next) => {
      const principal = c.get('principal');
      if (principal.kind === 'anonymous') throw unauthenticated(c);
      if (principal.kind !== 'account' || principal.via !== 'session') {
        throw new ApiError(
          403,
          'session_required',
          "this route serves the web UI's browser sessions; keyed clients use /api/v1/",
        );
      }
      await next();
    },
  );
}

export type SignedIn = Exclude<Principal, { kind: 'anonymous' }>;

/** The caller, signed in (a route's guard has already refused anonymous callers; 401 otherwise): what the slices' commands decide authority on. */
export function signedIn(c: Context<OrchEnv>): SignedIn {
  const principal = c.get('principal');
  if (principal.kind === 'anonymous') throw unauthenticated(c);
  return principal;
}

export function principalUser(c: Context<OrchEnv>): UserRow {
  const principal = c.get('principal');
  if (principal.kind === 'anonymous') throw unauthenticated(c);
  return principal.user;
}

/** The context recorded in event metadata for this request's principal. */
export function actorOf(c: Context<OrchEnv>): CommandContext {
  const principal = c.get('principal');
  const kind = principal.kind === 'anonymous' ? 'visitor' : principal.kind === 'account' ? 'user' : principal.kind;
  return {
    actor: { kind, id: principal.kind === 'anonymous' ? null : principal.user.id },
    correlationId: c.get('requestId'),
  };
}
