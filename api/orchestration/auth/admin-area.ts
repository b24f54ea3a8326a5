// The admin area (spec: `require_admin` guards `/api/v1/admin/*`, `/api/admin/*` and
// `/api/templates`): each route there states `require_admin` as its first refusal (`adminArea`),
// and a path of the area that no route takes answers it too before its 404, so a non-admin
// learns nothing of what the area holds. These catch-alls are mounted after every route.

import { Hono, type MiddlewareHandler } from 'hono';
import type { OrchEnv } from './principal.ts';
import type { OrchDeps } from '../deps.ts';
import { requireAdmin } from './guards.ts';

/** `require_admin` as the admin area applies it (off only under ORCH_ENFORCE_ADMIN_ROLE=false). */
export const adminArea = (deps: Pick<OrchDeps, 'config'>): MiddlewareHandler<OrchEnv> =>
  requireAdmin(deps.config.enforceAdminRole);

export function adminAreaRoutes(deps: Pick<OrchDeps, 'config'>) {
  const app = new Hono<OrchEnv>();
  for (const path of ['/api/v1/admin/*', '/api/admin/*', '/api/templates', '/api/templates/*']) {
    app.all(path, adminArea(deps), (c) => c.notFound());
  }
  return app;
}
