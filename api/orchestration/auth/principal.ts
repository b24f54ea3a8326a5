// Principal resolution: every request resolves to one principal and is never rejected here.
// An `X-API-Key` (account, runner service principal or agent credential; a key wins over a
// cookie), else the `orch_sess` cookie, else forward-auth identity headers from a trusted peer
// (a sign-in, see forward-auth.ts), else anonymous. The guards (guards.ts) decide what each
// route admits.

import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { hashToken } from '../../../crypto/tokens.ts';
import { runnerRefusal } from '../../../domain/orchestration/users/runner.ts';
import type { UserRow } from '../../../projections/orchestration/users.ts';
import type { OrchDeps } from '../deps.ts';
import { forwardAuth } from './forward-auth.ts';
import { SESSION_COOKIE } from './session-cookies.ts';

export type Principal =
  | { kind: 'account'; user: UserRow; via: 'api_key' }
  | { kind: 'account'; user: UserRow; via: 'session'; sessionHash: string; sessionId: string }
  | { kind: 'service'; user: UserRow; via: 'api_key' }
  | { kind: 'agent'; user: UserRow; via: 'api_key' }
  | { kind: 'anonymous' };

export type OrchVars = { principal: Principal; apiKeyPresented: boolean };
export type OrchEnv = { Variables: OrchVars & { requestId: string } };

export function authenticate(deps: OrchDeps): MiddlewareHandler<OrchEnv> {
  const runnerAllowed = runnerRefusal(deps.config) === null;
  const signIn = forwardAuth(deps);

  return async (c, next) => {
    c.set('principal', { kind: 'anonymous' });
    const key = c.req.header('x-api-key')?.trim();
    c.set('apiKeyPresented', !!key);

    if (key) {
      const user = await deps.principals.byKeyHash(hashToken(key));
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
    const sessionUser = sessionHash ? await deps.principals.bySessionHash(sessionHash) : null;
    const asserted = signIn.assertedUser(c);

    if (sessionUser && sessionId && sessionHash && (!asserted || asserted === sessionUser.username)) {
      c.set('principal', { kind: 'account', user: sessionUser, via: 'session', sessionHash, sessionId });
    } else if (asserted) {
      const signedIn = await signIn.signIn(c, asserted);
      if (signedIn)
        c.set('principal', {
          kind: 'account',
          user: signedIn.user,
          via: 'session',
          sessionHash: hashToken(signedIn.sessionId),
          sessionId: signedIn.sessionId,
        });
    }
    return next();
  };
}
