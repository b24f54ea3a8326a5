// GET /api/v1/me: the calling account, with its API key in plaintext (unsealed from the read model).

import { Hono } from 'hono';
import type { Platform } from '../../../infra/platform.ts';
import { revealApiKey } from '../accounts/keys.ts';
import { accountOf, requireKey, type OrchEnv } from '../auth.ts';

export function meRoutes(platform: Platform) {
  return new Hono<OrchEnv>().get('/api/v1/me', requireKey(), (c) => {
    const user = accountOf(c);
    return c.json({
      id: user.id,
      username: user.username,
      email: user.email,
      role: user.role,
      auth_source: user.auth_source,
      is_active: user.is_active,
      api_key: revealApiKey(platform.sealKey, user.id, user.api_key_sealed),
      created_at: user.created_at.toISOString(),
      updated_at: user.updated_at.toISOString(),
    });
  });
}
