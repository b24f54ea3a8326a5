// What every route gets when it is declared (`app.openapi(route, handler)` on a service router),
// so that a new route is checked and documented like the others without a line of its own:
//
// - path parameters declared as UUIDs (`format: 'uuid'`) are checked as UUIDs after the route's
//   own middleware (authentication first) and before its handler: a value that is not one names
//   nothing, so the answer is the route's documented 404, or the validation status where the
//   route documents no 404; it never reaches the database;
// - the answers the shared machinery gives, added to the route's responses where the route does
//   not describe them itself: the validation status (every path and query is checked, see
//   url-hygiene.ts, and parameters and bodies against their schemas), 413 with the route's limit
//   for every method with a body (see body-limit.ts), 415 for a JSON or form body (Hono's
//   media-type gate), 429 where a rate limiter can refuse the route, and 503 `projection_lagging`
//   (a change recorded whose read model is behind; any route may record one);
// - its policy (route-policy.ts): the access rules its middleware states, as the operation's
//   `x-access` and the 401/403 they answer, and its body limit, carried by a marker middleware
//   for the app's body-limit middleware to find.

import type { RouteConfig } from '@hono/zod-openapi';
import { getOpenApiMetadata } from '@asteasolutions/zod-to-openapi';
import type { MiddlewareHandler } from 'hono';
import { isUuid } from './params.ts';
import type { z } from 'zod';
import { DEFAULT_BODY_LIMIT } from './body-limit.ts';
import { ApiError } from './http-errors.ts';
import { errorResponses, pathPatterns } from './openapi.ts';
import { policyMarker, policyOf } from './route-policy.ts';

export interface ServiceRoutes {
  /** The service's error body schema (a named component). */
  errorSchema: z.ZodType;
  /** Status of a request that fails validation: 400, or 422 where the spec says so. */
  validationStatus: 400 | 422;
  /** A rate limiter outside the route's own middleware can refuse it (registry: every /api/ route, per token). */
  rateLimited?: (route: RouteConfig) => boolean;
}

const RATE_LIMITER = Symbol('rate limiter');

/** Marks a middleware that can answer 429, so the routes it guards document it. */
export function rateLimiting<M extends MiddlewareHandler<any>>(middleware: M): M {
  return Object.assign(middleware, { [RATE_LIMITER]: true });
}

const limits = (middleware: unknown) => typeof middleware === 'function' && RATE_LIMITER in middleware;

const asArray = <T>(value: T | readonly T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? [...value] : [value as T];

/** The path parameters the route declares as UUIDs (`format: 'uuid'`, or `z.uuid()`). */
function uuidParams(route: RouteConfig): string[] {
  const params = route.request?.params as z.ZodObject | undefined;
  const shape = (params as { shape?: Record<string, z.ZodType> } | undefined)?.shape ?? {};
  return Object.entries(shape)
    .filter(
      ([, schema]) =>
        getOpenApiMetadata(schema as never).format === 'uuid' || (schema as { format?: string }).format === 'uuid',
    )
    .map(([name]) => name);
}

function uuidCheck(names: string[], status: 404 | 400 | 422, notFoundCode: string): MiddlewareHandler {
  return async (c, next) => {
    for (const name of names) {
      if (!isUuid(c.req.param(name) ?? '')) {
        throw status === 404
          ? new ApiError(404, notFoundCode, `${name} is not a UUID: nothing by that id`)
          : new ApiError(status, 'validation_failed', `${name}: must be a UUID`);
      }
    }
    await next();
  };
}

const JSON_OR_FORM = /json|x-www-form-urlencoded|multipart\/form-data/i;

/** Hono's media-type gate (415) guards a body declared with a zod schema for JSON or form content. */
function gatedBody(route: RouteConfig): boolean {
  const content =
    (route.request?.body as { content?: Record<string, { schema?: unknown }> } | undefined)?.content ?? {};
  return Object.entries(content).some(
    ([type, media]) =>
      JSON_OR_FORM.test(type) && typeof (media.schema as { safeParse?: unknown } | undefined)?.safeParse === 'function',
  );
}

/** The code the route documents for its 404 (`profile_not_found` in its description), else `not_found`. */
const notFoundCode = (response: unknown) =>
  /\b(\w+_not_found)\b/.exec((response as { description?: string } | undefined)?.description ?? '')?.[1] ?? 'not_found';

/** The parameters, each carrying the pattern its path gives it (`{file{[0-9a-f-]+\.ics}}`) in the document. */
function withPathPatterns(route: RouteConfig): RouteConfig['request'] {
  const patterns = Object.entries(pathPatterns(route.path));
  const params = route.request?.params as (z.ZodObject & { shape: Record<string, z.ZodString> }) | undefined;
  if (!patterns.length || !params) return route.request;
  const patterned = Object.fromEntries(
    patterns
      .filter(([name]) => params.shape[name])
      .map(([name, pattern]) => [name, params.shape[name]!.openapi({ pattern: `^${pattern}$` })]),
  );
  return { ...route.request, params: params.extend(patterned) as never };
}

/** The route as registered: its UUID parameters checked, the shared answers documented. */
export function declareRoute<R extends RouteConfig>(route: R, service: ServiceRoutes): R {
  const middleware = asArray(route.middleware as MiddlewareHandler | MiddlewareHandler[] | undefined);
  const responses = route.responses as Record<string, unknown>;
  const uuids = uuidParams(route);
  const notFoundStatus = responses['404'] ? 404 : service.validationStatus;
  const method = route.method.toLowerCase();
  const policy = policyOf(middleware, DEFAULT_BODY_LIMIT);
  const shared: Record<number, string> = {
    [service.validationStatus]:
      'validation_failed: a path or query that is not percent-encoded UTF-8 or carries a NUL, or a parameter or body that fails its schema',
  };
  if (uuids.length && notFoundStatus === 404) shared[404] = `${uuids.join(', ')}: not a UUID, or nothing by that id`;
  for (const status of [401, 403] as const) {
    const refusals = policy.access.map((a) => a.refusals?.[status]).filter((r): r is string => !!r);
    if (refusals.length) shared[status] = refusals.join('; ');
  }
  if (method !== 'get' && method !== 'head')
    shared[413] = `payload_too_large: the body is over the route's limit of ${policy.bodyLimit.maxBytes} bytes (limit_bytes)`;
  if (gatedBody(route)) shared[415] = 'unsupported_media_type: the body is not of a media type the route takes';
  if (middleware.some(limits) || service.rateLimited?.(route))
    shared[429] = 'rate_limited (Retry-After and retry_after)';
  // Any request that records a change waits for the read models its answer comes from (api/shared/base.ts).
  shared[503] =
    'projection_lagging: the change was recorded but a read model has not caught up yet (Retry-After and retry_after); read again rather than repeat';
  const added = Object.fromEntries(Object.entries(shared).filter(([status]) => !(status in responses)));
  return {
    ...route,
    request: withPathPatterns(route),
    middleware: [
      policyMarker(policy),
      ...middleware,
      ...(uuids.length ? [uuidCheck(uuids, notFoundStatus, notFoundCode(responses['404']))] : []),
    ],
    responses: { ...responses, ...errorResponses(service.errorSchema, added) },
    ...(policy.access.length ? { 'x-access': [...new Set(policy.access.map((a) => a.rule))] } : {}),
  };
}
