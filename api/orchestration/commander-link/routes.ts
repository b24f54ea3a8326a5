// `/api/v1/commander-link/*` (spec: "Tasks, projects, agents"): the routes exist, their payloads
// are not specified, and every request needs a signature. No signing scheme is configured in
// this build, so no request carries a valid one: everything there answers 401
// `signature_required`, whatever key or session comes with it, and nothing else is served yet.
// A middleware answers the whole prefix (the OpenAPI document lists no operation there: there is
// none to describe until the payloads are specified).

import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../../shared/http-errors.ts';
import type { OrchEnv } from '../auth/principal.ts';

export const COMMANDER_LINK_PATHS = ['/api/v1/commander-link', '/api/v1/commander-link/*'];

export const signatureRequired = (): MiddlewareHandler<OrchEnv> => async () => {
  throw new ApiError(401, 'signature_required', 'commander-link requests must be signed');
};
