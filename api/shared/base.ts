// What every service's Hono app starts with: a request id on every request and response, one
// JSON log line and one metrics observation per request (by route pattern, never the raw path),
// paths and query strings checked before any handler (url-hygiene.ts), each route's request body
// limit (body-limit.ts), the checks and documented answers every route gets (route-declaration.ts), zod
// validation failures and domain rejections turned into the service's error body, and
// unexpected errors answered 500 without internals.
//
// Apps are OpenAPIHono instances: every route is declared with `createRoute`, so the document a
// service serves is generated from the same schemas that validate its requests.

import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Env } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { matchedRoutes } from 'hono/route';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ZodError } from 'zod';
import { DomainError } from '../../domain/shared/decider.ts';
import type { Logger } from '../../infra/logging.ts';
import { ProjectionTimeoutError } from '../../infra/processors/projection.ts';
import type { Metrics } from '../../infra/metrics.ts';
import { bodyLimitOf, bodyLimits, DEFAULT_BODY_LIMIT } from './body-limit.ts';
import { ApiError, STATUS_OF } from './http-errors.ts';
import { openApiTemplate } from './openapi.ts';
import { declareRoute, type ServiceRoutes } from './route-declaration.ts';
import type { BodyLimit } from './route-policy.ts';
import { refuseMalformedTarget } from './url-hygiene.ts';

export interface ErrorShape {
  status: ContentfulStatusCode;
  code: string;
  message: string;
  extra?: Record<string, unknown>;
}

/** Renders an error in a service's own body form. */
export type ErrorBody = (error: ErrorShape) => Record<string, unknown>;

export type AppEnv<Vars extends object = object> = { Variables: Vars & { requestId: string } };

export interface ServiceOptions {
  service: 'orch' | 'chat' | 'registry';
  log: Logger;
  metrics?: Metrics;
  errorBody: ErrorBody;
  /** The schema of `errorBody`'s output, for the answers every route documents (route-declaration.ts). */
  errorSchema: ServiceRoutes['errorSchema'];
  /** A limiter outside a route's own middleware (route-declaration.ts). */
  rateLimited?: ServiceRoutes['rateLimited'];
  /** Status of a request that fails validation: 400, or 422 where the spec says so. */
  validationStatus?: 400 | 422;
  /** What the request log line shows of a path (a path that carries a secret, such as a webhook token, is redacted). */
  logPath?: (path: string) => string;
}

export function zodMessage(error: ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

const HTTP_CODES: Record<number, string> = {
  400: 'invalid_json',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Seconds a client is asked to wait after a `projection_lagging` 503. */
export const PROJECTION_LAG_RETRY_AFTER_S = 2;

export function toErrorShape(error: unknown, validationStatus: 400 | 422 = 400): ErrorShape | null {
  if (error instanceof ApiError)
    return { status: error.status, code: error.code, message: error.message, extra: error.extra };
  if (error instanceof DomainError) {
    // A domain-level validation failure answers like a schema one: 400, or 422 where the spec says so.
    const status = error.kind === 'invalid' ? validationStatus : STATUS_OF[error.kind];
    return { status, code: error.code, message: error.message, extra: error.details };
  }
  // The command's events are in the log, but a read model the answer comes from is behind: the
  // change stands, so the client is told to read again shortly rather than to repeat the request.
  if (error instanceof ProjectionTimeoutError) {
    return {
      status: 503,
      code: 'projection_lagging',
      message:
        'the change was recorded, but the read model has not caught up yet: read it again shortly rather than repeating the request',
      extra: { retry_after: PROJECTION_LAG_RETRY_AFTER_S },
    };
  }
  if (error instanceof ZodError)
    return { status: validationStatus, code: 'validation_failed', message: zodMessage(error) };
  // Hono's own rejections: a body that is not JSON, a media type the route does not take.
  if (error instanceof HTTPException && error.status < 500) {
    const status = error.status === 400 && validationStatus === 422 ? 422 : error.status;
    return {
      status: status as ContentfulStatusCode,
      code: HTTP_CODES[error.status] ?? 'bad_request',
      message: error.message,
    };
  }
  return null;
}

/** The route pattern that answered (`/api/v1/admin/users/:user_id`), or `unmatched`: a bounded label. */
export function routePattern(c: Context): string {
  const route = matchedRoutes(c).findLast((r) => r.method !== 'ALL');
  return route?.path ?? 'unmatched';
}

// A `\u0000` escape in a JSON string (an odd run of backslashes before `u0000`): PostgreSQL stores
// no NUL in text or jsonb, so such a value would fail deep inside a write.
const NUL_ESCAPE = /(^|[^\\])(\\\\)*\\u0000/i;
// A surrogate escape (`\uD800`-`\uDFFF`): legal JSON text, but alone (not half of a pair) it is
// no Unicode character, and jsonb refuses it ("invalid input syntax for type json") deep inside a write.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A string (value or key) anywhere in a parsed JSON value that holds a lone surrogate (walked without recursion: bodies nest deep). */
function hasLoneSurrogate(root: unknown): boolean {
  const stack = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (Array.isArray(value)) for (const v of value) stack.push(v);
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (LONE_SURROGATE.test(k)) return true;
        stack.push(v);
      }
    }
  }
  return false;
}

/** Parsed JSON text, or undefined when it does not parse (the route's own parsing answers that). */
function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * JSON bodies carrying a NUL character or a lone surrogate are refused up front, in every service
 * (400 or 422); routes that stream their body (a streamed body limit) check it themselves.
 */
function refuseNul(validationStatus: 400 | 422, fallback: BodyLimit) {
  return async (c: Context, next: () => Promise<void>) => {
    // The header first: reading `c.req.raw.body` of a GET would materialise a full Request.
    if (
      /json/i.test(c.req.header('content-type') ?? '') &&
      c.req.method !== 'GET' &&
      c.req.method !== 'HEAD' &&
      !bodyLimitOf(c, fallback).streamed &&
      c.req.raw.body
    ) {
      const text = await c.req.text();
      if (NUL_ESCAPE.test(text))
        throw new ApiError(validationStatus, 'validation_failed', 'strings must not contain NUL (\\u0000) characters');
      // Parsed only when an escape is there: most bodies never pay for a second parse.
      if (SURROGATE_ESCAPE.test(text) && hasLoneSurrogate(parsedOrUndefined(text))) {
        throw new ApiError(
          validationStatus,
          'validation_failed',
          'strings must be well-formed Unicode (no lone surrogates such as \\ud800)',
        );
      }
    }
    await next();
  };
}

/** Validation failures are thrown, so the service's error handler renders them. */
export const throwOnInvalid = (result: { success: boolean; error?: unknown }) => {
  if (!result.success) throw result.error;
};

/**
 * A router for one slice's routes of a service; mounted into its service's app with
 * `app.route('/', ...)`. Each route it declares gets the service's shared checks and answers
 * (route-declaration.ts).
 */
export function router<E extends Env>(service: ServiceRoutes): OpenAPIHono<E> {
  const app = new OpenAPIHono<E>({ defaultHook: throwOnInvalid });
  const declare = app.openapi;
  app.openapi = ((route, handler, hook) => {
    const declared = declareRoute(route, service);
    const template = openApiTemplate(declared.path);
    if (template === declared.path) return declare(declared, handler, hook);
    // Hono's pattern syntax routes (`{file{[0-9a-f-]+\.ics}}`); the document gets the plain template.
    declare({ ...declared, hide: true }, handler, hook);
    const { middleware: _, hide, ...documented } = declared;
    if (!hide) app.openAPIRegistry.registerPath({ ...documented, path: template });
    return app;
  }) as typeof app.openapi;
  return app;
}

export function createBaseApp<Vars extends object>(options: ServiceOptions): OpenAPIHono<AppEnv<Vars>> {
  const { service, log, metrics, errorBody } = options;
  const app = router<AppEnv<Vars>>({
    errorSchema: options.errorSchema,
    validationStatus: options.validationStatus ?? 400,
    rateLimited: options.rateLimited,
  });
  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const route = routePattern(c);
    metrics?.observeRequest({ service, method: c.req.method, route, status: c.res.status }, seconds);
    log.info('request', {
      service,
      request_id: c.get('requestId'),
      method: c.req.method,
      path: options.logPath ? options.logPath(c.req.path) : c.req.path,
      route,
      status: c.res.status,
      ms: Math.round(seconds * 10_000) / 10,
    });
  });
  app.use(refuseMalformedTarget(options.validationStatus ?? 400));
  // A request no declared route takes (a 404) meets the default limit.
  app.use(bodyLimits(DEFAULT_BODY_LIMIT));
  app.use(refuseNul(options.validationStatus ?? 400, DEFAULT_BODY_LIMIT));
  app.onError((error, c) => {
    const shape = toErrorShape(error, options.validationStatus);
    if (shape) {
      if (error instanceof ProjectionTimeoutError)
        log.warn('projection_lagging', { service, request_id: c.get('requestId'), error: error.message });
      if (error instanceof ApiError) for (const [k, v] of Object.entries(error.headers)) c.header(k, v);
      // A 503 `maintenance` (and any other refusal that says when to come back) carries Retry-After.
      else if (typeof shape.extra?.retry_after === 'number') c.header('Retry-After', String(shape.extra.retry_after));
      return c.json(errorBody(shape), shape.status);
    }
    log.error('unhandled_error', {
      service,
      request_id: c.get('requestId'),
      error: (error as Error).message,
      stack: (error as Error).stack,
    });
    return c.json(
      errorBody({
        status: 500,
        code: 'internal',
        message: 'internal error',
        extra: { request_id: c.get('requestId') },
      }),
      500,
    );
  });
  app.notFound((c: Context) => c.json(errorBody({ status: 404, code: 'not_found', message: 'no such route' }), 404));
  return app;
}
