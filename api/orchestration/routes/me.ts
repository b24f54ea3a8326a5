// GET /api/v1/me: the calling account, with its API key in plaintext (unsealed from the read model).

import { Hono } from 'hono';
import type { Platform } from '../../../infra/platform.ts';
import { revealApiKey } from '../accounts/keys.ts';
import type { UserRow } from '../accounts/queries.ts';
import { principalUser, requireKey, type OrchEnv } from '../auth.ts';

/** An account as the API shows it; the key only where the spec shows it. */
export function accountView(user: UserRow) {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    role: user.role,
    auth_source: user.auth_source,
    is_active: user.is_active,
    created_at: user.created_at.toISOString(),
    updated_at: user.updated_at.toISOString(),
  };
}

export function meRoutes(platform: Platform) {
  // Rows served from the principal cache are the same objects request after request: unseal
  // their key once. Entries go with the rows when the cache drops them.
  const revealed = new WeakMap<UserRow, string>();
  const apiKeyOf = (user: UserRow) => {
    let key = revealed.get(user);
    if (key === undefined) revealed.set(user, (key = revealApiKey(platform.sealKey, user.id, user.api_key_sealed)));
    return key;
  };
  return new Hono<OrchEnv>().get('/api/v1/me', requireKey(), (c) => {
    const user = principalUser(c);
    return c.json({ ...accountView(user), api_key: apiKeyOf(user) });
  });
}
