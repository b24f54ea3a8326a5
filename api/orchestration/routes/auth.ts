// /auth/register, /auth/login, /auth/logout: local password accounts and browser sessions.

import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { hashToken } from '../../../crypto/tokens.ts';
import type { Platform } from '../../../infra/platform.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { FailureCounter } from '../../shared/rate-limit.ts';
import { validate } from '../../shared/validate.ts';
import { userByEmail } from '../accounts/queries.ts';
import { endSession, recordSecurityEvent, register, startSession, verifyLogin } from '../accounts/service.ts';
import { actorOf, clearSessionCookies, peerAddress, roleOf, setSessionCookies, unauthenticated, type OrchEnv } from '../auth.ts';

/** Failed logins: an account locks after 5 in 15 minutes, an address is throttled after 20. */
export const LOGIN_LIMITS = { perAccount: 5, perAddress: 20, windowMs: 15 * 60 * 1000 };

const registerBody = z.object({
  username: z.string().trim().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, dot, dash, underscore'),
  email: z.email(),
  password: z.string().min(12, 'password must be at least 12 characters').max(1024),
});
const loginBody = z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) });

const flat = (u: { id: string; username: string; email: string; role: string }) => ({ id: u.id, username: u.username, email: u.email, role: u.role });

export function authRoutes(platform: Platform) {
  const accounts = new FailureCounter(LOGIN_LIMITS.perAccount, LOGIN_LIMITS.windowMs);
  const addresses = new FailureCounter(LOGIN_LIMITS.perAddress, LOGIN_LIMITS.windowMs);
  const localAuthOpen = () => {
    if (platform.config.forwardAuth.enabled) {
      throw new ApiError(403, 'local_auth_disabled', 'local login and registration are disabled under forward-auth SSO');
    }
  };
  const wrongCredentials = () => new ApiError(401, 'invalid_credentials', 'invalid email or password');

  async function loginFailed(c: Context<OrchEnv>, userId: string | null, email: string, reason: 'bad_credentials' | 'locked' | 'rate_limited', peer: string) {
    await recordSecurityEvent(platform, {
      type: 'LoginFailed', data: { user_id: userId, email_hash: hashToken(email.trim().toLowerCase()), reason, peer, at: new Date().toISOString() },
    }, actorOf(c));
  }

  return new Hono<OrchEnv>()
    .post('/auth/register', async (c, next) => {
      localAuthOpen();
      const principal = c.get('principal');
      if (principal.kind === 'anonymous' || principal.via !== 'api_key') {
        throw unauthenticated(c);
      }
      if (roleOf(principal) !== 'admin') throw new ApiError(403, 'forbidden', 'admin role required');
      await next();
    }, validate('json', registerBody), async (c) => {
      const user = await register(platform, c.req.valid('json'), actorOf(c));
      return c.json(flat(user), 201);
    })
    .post('/auth/login', async (c, next) => {
      localAuthOpen();
      await next();
    }, validate('json', loginBody), async (c) => {
      const { email, password } = c.req.valid('json');
      const peer = peerAddress(c) ?? 'unknown';
      if (addresses.blocked(peer)) {
        await loginFailed(c, null, email, 'rate_limited', peer);
        const retryAfter = addresses.retryAfter(peer);
        throw new ApiError(429, 'rate_limited', 'too many failed logins from this address', { retry_after: retryAfter }, { 'Retry-After': String(retryAfter) });
      }
      const user = await userByEmail(platform.pool, email);
      const accountKey = user?.id ?? `email:${hashToken(email.trim().toLowerCase())}`;
      // A locked account answers exactly like a wrong password.
      if (accounts.blocked(accountKey)) {
        addresses.fail(peer);
        await loginFailed(c, user?.id ?? null, email, 'locked', peer);
        throw wrongCredentials();
      }
      if (!(await verifyLogin(user, password)) || !user) {
        accounts.fail(accountKey);
        addresses.fail(peer);
        await loginFailed(c, user?.id ?? null, email, 'bad_credentials', peer);
        throw wrongCredentials();
      }
      accounts.reset(accountKey);
      const sessionId = await startSession(platform, user, 'password', { actor: { kind: 'user', id: user.id }, correlationId: c.get('requestId') });
      setSessionCookies(c, platform, sessionId);
      return c.json(flat(user));
    })
    .post('/auth/logout', async (c) => {
      const principal = c.get('principal');
      if (principal.kind === 'account' && principal.via === 'session') await endSession(platform, principal.sessionHash, actorOf(c));
      clearSessionCookies(c);
      return c.body(null, 204);
    });
}
