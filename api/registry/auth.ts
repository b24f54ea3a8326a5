// Who may call the registry's `/api/v1/*` routes. OIDC sessions, forward-auth and machine tokens
// arrive with the registry issue; until then no credential can be valid, so every route but
// `GET /health` answers 401, as the spec's access rules require of a caller without one.

import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../shared/http-errors.ts';

export function requireRegistryCaller(): MiddlewareHandler {
  return async () => {
    throw new ApiError(401, 'unauthorized', 'authentication required');
  };
}
