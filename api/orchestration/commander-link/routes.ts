// `/api/v1/commander-link/*` (spec: "Tasks, projects, agents"): the routes exist, their payloads
// are not specified, and every request needs a signature. No signing scheme is configured in
// this build, so no request carries a valid one: everything there answers 401
// `signature_required`, whatever key or session comes with it, and nothing else is served yet.
// One route per method answers the whole prefix (the OpenAPI document lists no operation there:
// there is none to describe until the payloads are specified). Mounted before principal
// resolution, so that no credential, and no forward-auth identity, is looked at first.

import { Hono } from 'hono';
import { ApiError } from '../../shared/http-errors.ts';
import type { OrchEnv } from '../auth/principal.ts';

export function commanderLinkRoutes() {
  const app = new Hono<OrchEnv>();
  for (const path of ['/api/v1/commander-link', '/api/v1/commander-link/*']) {
    app.all(path, () => {
      throw new ApiError(401, 'signature_required', 'commander-link requests must be signed');
    });
  }
  return app;
}
