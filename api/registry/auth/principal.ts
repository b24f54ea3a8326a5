// Principal resolution for the registry: every request to /api/* resolves to one principal and
// is never refused here, except a valid token over its rate limit (429). In order:
//   1. `Authorization: Bearer registry_sk_...`: a machine token (invalid, revoked or expired ones
//      resolve to anonymous with the reason, answered 401 by the access rule);
//   2. the `registry_sess` cookie of an OIDC sign-in;
//   3. forward-auth identity headers, when OIDC is not configured and the TCP peer is in
//      REGISTRY_FORWARD_AUTH_TRUSTED_NETS (from anyone else they are ignored).
// What each route admits is decided by access.ts.

import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { hashToken } from '../../../crypto/tokens.ts';
import type { InteractiveRole } from '../../../domain/registry/sessions/events.ts';
import { TOKEN_PREFIX } from '../../../domain/registry/tokens/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { liveSession } from '../../../projections/registry/sessions.ts';
import type { TokenRow } from '../../../projections/registry/tokens.ts';
import { trustedNets } from '../../orchestration/auth/trusted-nets.ts';
import { rateLimited } from '../../shared/http-errors.ts';
import { peerAddress } from '../../shared/peer.ts';
import type { RegistryDeps } from '../deps.ts';
import { noteTokenUse } from './token-use.ts';

export const SESSION_COOKIE = 'registry_sess';

export type RegistryPrincipal =
  | { kind: 'token'; token: TokenRow }
  | {
      kind: 'session';
      role: InteractiveRole;
      subject: string;
      name: string;
      email: string | null;
      sessionId: string;
      sessionHash: string;
    }
  | { kind: 'forward_auth'; role: InteractiveRole; name: string; email: string | null }
  | { kind: 'anonymous'; problem: 'none' | 'invalid_token' | 'revoked_token' | 'expired_token' };

export type RegistryVars = { principal: RegistryPrincipal };
export type RegistryEnv = { Variables: RegistryVars & { requestId: string } };

export const isInteractive = (
  p: RegistryPrincipal,
): p is Extract<RegistryPrincipal, { kind: 'session' | 'forward_auth' }> =>
  p.kind === 'session' || p.kind === 'forward_auth';

function bearer(c: Context): string | undefined {
  const header = c.req.header('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export function authenticate(deps: RegistryDeps): MiddlewareHandler<RegistryEnv> {
  const fa = deps.config.registry.forwardAuth;
  // Forward-auth is the fallback surface: only when OIDC is not configured.
  const trusted = deps.config.registry.oidc
    ? () => false
    : trustedNets(fa.trustedNets, 'REGISTRY_FORWARD_AUTH_TRUSTED_NETS');
  const rule = { limit: deps.config.registry.tokenRatePerMin, windowMs: 60_000 };

  return async (c, next) => {
    c.set('principal', { kind: 'anonymous', problem: 'none' });
    const presented = bearer(c);
    if (presented !== undefined || c.req.header('authorization') !== undefined) {
      const token = presented?.startsWith(TOKEN_PREFIX) ? await deps.tokens.byHash(hashToken(presented)) : null;
      const now = deps.clock.now();
      if (!token) c.set('principal', { kind: 'anonymous', problem: 'invalid_token' });
      else if (token.revoked_at) c.set('principal', { kind: 'anonymous', problem: 'revoked_token' });
      else if (Date.parse(token.expires_at) <= now.getTime())
        c.set('principal', { kind: 'anonymous', problem: 'expired_token' });
      else {
        const decision = await deps.limiter.consume(`registry_token:${token.id}`, rule);
        if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, "this token's rate limit is exceeded");
        await noteTokenUse(deps, token.id, now, c.get('requestId'));
        c.set('principal', { kind: 'token', token });
      }
      return next();
    }

    const sessionId = getCookie(c, SESSION_COOKIE);
    if (sessionId) {
      const sessionHash = hashToken(sessionId);
      const session = await liveSession(deps.db, sessionHash, deps.clock.now());
      if (session) {
        c.set('principal', {
          kind: 'session',
          role: session.role,
          subject: session.subject,
          name: session.name,
          email: session.email,
          sessionId,
          sessionHash,
        });
        return next();
      }
    }

    const user = trusted(peerAddress(c)) ? c.req.header(fa.userHeader)?.trim() : undefined;
    if (user) {
      const groups = (c.req.header(fa.groupsHeader) ?? '')
        .split(fa.groupsDelim)
        .map((g) => g.trim())
        .filter(Boolean);
      c.set('principal', {
        kind: 'forward_auth',
        name: user,
        email: c.req.header(fa.emailHeader)?.trim() || null,
        role: groups.includes(fa.adminGroup) ? 'admin' : 'readonly',
      });
    }
    return next();
  };
}

/** The context recorded in event metadata: who did it, as the audit stream shows it. */
export function actorOf(c: Context<RegistryEnv>): CommandContext {
  const p = c.get('principal');
  const correlationId = c.get('requestId');
  switch (p.kind) {
    case 'token':
      return { actor: { kind: 'service', id: `token:${p.token.id}` }, correlationId };
    case 'session':
      return { actor: { kind: 'user', id: `oidc:${p.email ?? p.subject}` }, correlationId };
    case 'forward_auth':
      return { actor: { kind: 'user', id: `forward_auth:${p.name}` }, correlationId };
    case 'anonymous':
      return { actor: { kind: 'visitor', id: null }, correlationId };
  }
}
