// Authentication (public): POST /api/auth/register, /login, /refresh, /recover and
// GET /api/auth/config. The POST routes share a stricter limit per client address
// (CHATSVC_AUTH_RATE_PER_MIN requests a minute, sliding window), counted on every attempt.

import { createRoute } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { DomainError } from '../../../domain/shared/decider.ts';
import { ApiError, rateLimited } from '../../shared/http-errors.ts';
import { KiB } from '../../shared/body-limit.ts';
import { anyone, bodyLimit } from '../../shared/route-policy.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { peerAddress } from '../../shared/peer.ts';
import type { ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { chatErrors, chatRouter } from '../router.ts';
import { RefreshReuseError, rotateRefreshToken } from '../sessions/sessions.ts';
import { login, recover, register } from './commands.ts';
import {
  AuthConfig,
  AuthResponse,
  LoginBody,
  LoginResponse,
  RecoverBody,
  RefreshBody,
  RegisterBody,
  TokenPair,
} from './schemas.ts';

const tags = ['authentication'];

export function authLimit(deps: ChatDeps): MiddlewareHandler<ChatEnv> {
  const rule = { limit: deps.config.authRatePerMin, windowMs: 60_000 };
  return async (c, next) => {
    const decision = await deps.limiter.consume(`chat:auth:${peerAddress(c) ?? 'unknown'}`, rule);
    if (!decision.allowed)
      throw rateLimited(decision.retryAfterSeconds, 'too many authentication requests from this address');
    await next();
  };
}

const anonymous = (requestId: string) => ({ actor: { kind: 'visitor' as const, id: null }, correlationId: requestId });

export function authRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const limited = authLimit(deps);
  // Sign-in and registration bodies are small: 64 KiB holds the public keys a registration carries.
  const small = bodyLimit(64 * KiB);
  const LIMIT = { 413: 'body too large', 429: 'too many authentication requests from this address (Retry-After)' };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/auth/register',
      tags,
      summary: 'Register an account with its public keys',
      middleware: [anyone(), limited, small] as const,
      request: { body: jsonBody(RegisterBody) },
      responses: {
        201: ok(AuthResponse, 'the account, a token pair and the recovery code (shown once; Cache-Control: no-store)'),
        ...chatErrors({
          400: 'validation error; identity key or signed prekey signature invalid',
          403: 'registration closed, or invite required and missing or invalid',
          409: 'username or email taken',
          ...LIMIT,
        }),
      },
    }),
    async (c) => {
      const result = await register(
        deps,
        c.req.valid('json'),
        c.req.header('user-agent') ?? null,
        anonymous(c.get('requestId')),
      );
      c.header('Cache-Control', 'no-store');
      return c.json(result, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/auth/login',
      tags,
      summary: 'Log in with username and password (and a TOTP or backup code when TOTP is on)',
      middleware: [anyone(), limited, small] as const,
      request: { body: jsonBody(LoginBody) },
      responses: {
        200: ok(LoginResponse, 'a token pair (Cache-Control: no-store)'),
        ...chatErrors({
          400: 'validation error',
          401: 'invalid username or password; TOTP code required (`totp_required`: true) or invalid',
          ...LIMIT,
        }),
      },
    }),
    async (c) => {
      const result = await login(
        deps,
        c.req.valid('json'),
        c.req.header('user-agent') ?? null,
        anonymous(c.get('requestId')),
      );
      c.header('Cache-Control', 'no-store');
      return c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/auth/refresh',
      tags,
      summary: 'Exchange a refresh token for a new pair; the old one is revoked',
      description:
        'Presenting a refresh token that was already exchanged revokes its whole session (theft detection) and answers 401.',
      middleware: [anyone(), limited, small] as const,
      request: { body: jsonBody(RefreshBody) },
      responses: {
        200: ok(TokenPair, 'a new token pair (Cache-Control: no-store)'),
        ...chatErrors({ 400: 'validation error', 401: 'invalid, revoked or reused refresh token', ...LIMIT }),
      },
    }),
    async (c) => {
      try {
        const pair = await rotateRefreshToken(deps, c.req.valid('json').refresh_token, anonymous(c.get('requestId')));
        c.header('Cache-Control', 'no-store');
        return c.json(pair, 200);
      } catch (error) {
        if (error instanceof RefreshReuseError) throw new ApiError(401, 'refresh_token_reused', error.message);
        throw error;
      }
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/auth/recover',
      tags,
      summary: 'Reset the password with the recovery code; every session ends',
      middleware: [anyone(), limited, small] as const,
      request: { body: jsonBody(RecoverBody) },
      responses: {
        200: ok(
          AuthResponse.pick({ recovery_code: true }).openapi('RecoverResponse'),
          'the new recovery code (shown once; the old one no longer works)',
        ),
        ...chatErrors({ 400: 'validation error', 401: 'invalid username or recovery code', ...LIMIT }),
      },
    }),
    async (c) => {
      const result = await recover(deps, c.req.valid('json'), anonymous(c.get('requestId'))).catch((error) => {
        if (error instanceof DomainError && error.kind === 'unauthorized')
          throw new ApiError(401, error.code, error.message);
        throw error;
      });
      c.header('Cache-Control', 'no-store');
      return c.json(result, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/auth/config',
      tags,
      summary: 'Registration mode and public URL',
      middleware: anyone(),
      responses: { 200: ok(AuthConfig, 'how this instance registers accounts') },
    }),
    (c) => c.json({ registration_mode: deps.config.registration, public_url: deps.config.publicUrl }, 200),
  );

  return app;
}
