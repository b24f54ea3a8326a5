// How orchestration routes are declared: a router per slice, the service's error schema for
// the documented error responses, and the one way to give a `/api/v1/<path>` route its web-UI
// mirror at `/api/<path>` (same handler, browser sessions only, CSRF-checked like every session
// write).

import { z, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { errorResponses } from '../shared/openapi.ts';
import { router } from '../shared/base.ts';
import { requireSession } from './auth/guards.ts';
import type { OrchEnv } from './auth/principal.ts';

export const OrchError = z
  .object({
    error: z.string().openapi({ description: 'machine-readable code', example: 'unauthorized' }),
    message: z.string().openapi({ example: 'missing X-API-Key header' }),
  })
  .passthrough()
  .openapi('Error');

export const orchRouter = () => router<OrchEnv>({ errorSchema: OrchError, validationStatus: 400 });

/** Documented error responses: `orchErrors({ 401: 'not signed in', 403: 'admin role required' })`. */
export const orchErrors = (statuses: Record<number, string>) => errorResponses(OrchError, statuses);

/** The error responses every authenticated route shares. */
export const AUTH_ERRORS = { 401: 'missing X-API-Key header, or invalid or inactive API key' };

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/**
 * Declare `route` (a `/api/v1/...` path) and its web-UI mirror under `/api/...`. `options.first`:
 * a check the mirror makes before its session check: `adminArea` for a mirror in the admin area
 * (`/api/admin/...`, `/api/templates...`), where require_admin is the first refusal.
 */
export function withWebUiMirror<R extends RouteConfig>(
  app: OpenAPIHono<OrchEnv>,
  route: R,
  handler: RouteHandler<R, OrchEnv>,
  options: { first?: MiddlewareHandler<OrchEnv> } = {},
): void {
  if (!route.path.startsWith('/api/v1/')) throw new Error(`only /api/v1/ routes have a web-UI mirror: ${route.path}`);
  app.openapi(route, handler);
  const mirror = {
    ...route,
    path: `/api/${route.path.slice('/api/v1/'.length)}`,
    tags: [...(route.tags ?? []), 'web UI'],
    description:
      `${route.description ?? route.summary ?? ''} (web UI mirror of ${route.path}: browser sessions only)`.trim(),
    middleware: [...asArray(options.first), requireSession(), ...asArray(route.middleware)],
    responses: {
      ...route.responses,
      ...orchErrors({ 403: "a keyed caller (session_required), or the route's own refusals" }),
    },
  };
  // The mirror has the same request and response schemas, so the same handler serves it.
  app.openapi(mirror as unknown as R, handler);
}
