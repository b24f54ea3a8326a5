// /auth/register, /auth/login, /auth/logout: local password accounts and browser sessions;
// /auth/session: what the web console asks first (who is signed in, and how one signs in here).
// Failed logins are throttled through the shared rate limiter: an account locks after 5 failures
// in 15 minutes (and then answers exactly like a wrong password), one client address gets 429
// after 20. With REDIS_URL set, every instance shares these counters.

import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../shared/http-errors.ts';
import { KiB } from '../../shared/body-limit.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { peerAddress } from '../../shared/peer.ts';
import { anyone, bodyLimit, guard } from '../../shared/route-policy.ts';
import { actorOf, roleOf, unauthenticated } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import { clearSessionCookies, setSessionCookies } from '../auth/session-cookies.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { endSession, logIn, register } from './commands.ts';
import { FlatUser, LoginBody, RegisterBody, SessionState } from './schemas.ts';

// Sign-in bodies are small: a body over 16 KiB never reaches the password check.
const AUTH_BODY_LIMIT = 16 * KiB;

const flat = (u: { id: string; username: string; email: string; role: 'admin' | 'user' | 'readonly' }) => ({
  id: u.id,
  username: u.username,
  email: u.email,
  role: u.role,
});
const tags = ['accounts and keys'];

export function loginRoutes(deps: OrchDeps) {
  // Under forward-auth SSO, local login and registration admit nobody.
  const localAuth = deps.config.forwardAuth.enabled
    ? { rule: 'nobody', refusals: { 403: 'local_auth_disabled (forward-auth SSO)' } }
    : { rule: 'anyone' };
  const localAuthOpen = guard(localAuth, async (_c, next) => {
    if (deps.config.forwardAuth.enabled) {
      throw new ApiError(
        403,
        'local_auth_disabled',
        'local login and registration are disabled under forward-auth SSO',
      );
    }
    await next();
  }) as MiddlewareHandler<OrchEnv>;
  const adminKeyOnly = guard(
    {
      rule: 'admin key',
      refusals: { 401: 'missing X-API-Key header, or invalid or inactive API key', 403: 'admin role required' },
    },
    async (c, next) => {
      const principal = c.get('principal');
      if (principal.kind === 'anonymous' || principal.via !== 'api_key') throw unauthenticated(c);
      if (roleOf(principal) !== 'admin') throw new ApiError(403, 'forbidden', 'admin role required');
      await next();
    },
  ) as MiddlewareHandler<OrchEnv>;
  const app = orchRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/register',
      tags,
      summary: 'First-run registration of the local admin (admin API key header)',
      middleware: [localAuthOpen, adminKeyOnly, bodyLimit(AUTH_BODY_LIMIT)] as const,
      request: { body: jsonBody(RegisterBody) },
      responses: {
        201: ok(FlatUser, 'the new local admin'),
        ...orchErrors({
          400: 'validation_failed',
          401: 'missing or invalid admin API key',
          403: 'not an admin key, or local_auth_disabled',
          409: 'already_registered',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => c.json(flat(await register(deps, c.req.valid('json'), actorOf(c))), 201),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/login',
      tags,
      summary: 'Log in with email and password; sets orch_sess and orch_csrf',
      middleware: [localAuthOpen, bodyLimit(AUTH_BODY_LIMIT)] as const,
      request: { body: jsonBody(LoginBody) },
      responses: {
        200: ok(FlatUser, 'signed in'),
        ...orchErrors({
          400: 'validation_failed',
          401: 'invalid_credentials',
          403: 'local_auth_disabled',
          413: 'payload_too_large',
          429: 'too many failed logins from this address (retry_after)',
        }),
      },
    }),
    async (c) => {
      const { email, password } = c.req.valid('json');
      const { user, sessionId } = await logIn(deps, { email, password, peer: peerAddress(c) ?? 'unknown' }, actorOf(c));
      setSessionCookies(c, deps, sessionId);
      return c.json(flat(user), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/auth/session',
      tags,
      summary: 'The browser session: who is signed in, and how this server signs people in',
      middleware: anyone(),
      description:
        'Public. `authenticated` is true for a browser session (a password sign-in, or forward-auth identity headers from a trusted proxy, ' +
        'which sign in on this very request); an API key is not a browser session and reads as not signed in. `login` says how to sign in: ' +
        '`password` (POST /auth/login) or `forward_auth` (through the SSO proxy); `logout_url` (forward-auth only, ORCH_FORWARD_AUTH_LOGOUT_URL) ' +
        'is where to send the browser after POST /auth/logout ends the local session.',
      responses: { 200: ok(SessionState, 'the session state') },
    }),
    async (c) => {
      const principal = c.get('principal');
      const fa = deps.config.forwardAuth;
      c.header('Cache-Control', 'no-store');
      const signedIn = principal.kind === 'account' && principal.via === 'session';
      return c.json(
        {
          authenticated: signedIn,
          ...(signedIn ? { user: flat(principal.user) } : {}),
          login: fa.enabled ? ('forward_auth' as const) : ('password' as const),
          ...(fa.enabled && fa.logoutUrl ? { logout_url: fa.logoutUrl } : {}),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/auth/logout',
      tags,
      summary: 'End the browser session (safe to repeat)',
      middleware: [anyone(), bodyLimit(AUTH_BODY_LIMIT)],
      responses: { 204: { description: 'signed out; cookies cleared' } },
    }),
    async (c) => {
      const principal = c.get('principal');
      if (principal.kind === 'account' && principal.via === 'session')
        await endSession(deps, principal.sessionHash, actorOf(c));
      clearSessionCookies(c);
      return c.body(null, 204);
    },
  );

  return app;
}
