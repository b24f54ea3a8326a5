// Authentication and authorisation of the orchestration service, in one place.
// `authenticate` resolves the caller to a principal and never rejects; the guards below decide.

import type { Context, MiddlewareHandler } from 'hono';
import { hashToken } from '../../crypto/tokens.ts';
import type { Platform } from '../../infra/platform.ts';
import { ApiError } from '../shared/http-errors.ts';
import { userByKeyHash, type UserRow } from './accounts/queries.ts';

export type Principal =
  | { kind: 'account'; user: UserRow; via: 'api_key' }
  | { kind: 'anonymous' };

export type OrchVars = { principal: Principal; apiKeyPresented: boolean };
export type OrchEnv = { Variables: OrchVars & { requestId: string } };

export const MISSING_KEY = 'missing X-API-Key header';
export const INVALID_KEY = 'invalid or inactive API key';

export function authenticate(platform: Platform): MiddlewareHandler<OrchEnv> {
  return async (c, next) => {
    const key = c.req.header('x-api-key')?.trim();
    c.set('apiKeyPresented', !!key);
    c.set('principal', { kind: 'anonymous' });
    if (key) {
      const user = await userByKeyHash(platform.pool, hashToken(key));
      if (user?.is_active) c.set('principal', { kind: 'account', user, via: 'api_key' });
    }
    await next();
  };
}

/** 401 unless the caller is a keyed principal: the two messages of the spec. */
export function requireKey(): MiddlewareHandler<OrchEnv> {
  return async (c, next) => {
    if (c.get('principal').kind === 'anonymous') {
      throw new ApiError(401, 'unauthorized', c.get('apiKeyPresented') ? INVALID_KEY : MISSING_KEY);
    }
    await next();
  };
}

export function accountOf(c: Context<OrchEnv>): UserRow {
  const principal = c.get('principal');
  if (principal.kind !== 'account') throw new ApiError(401, 'unauthorized', MISSING_KEY);
  return principal.user;
}
