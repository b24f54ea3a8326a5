// Request body limits, per route. A body past the limit of the route it is sent to is refused
// with 413 in the service's error body as soon as the limit is passed: a declared Content-Length
// over the limit is refused before a byte is read, a chunked body once it crosses the limit, and
// what was read is never more than the limit (hono's bodyLimit). The server then drains and
// discards the rest of the upload, within a bound, so that the client reads its answer rather
// than a reset (main/lingering-close.ts).
//
// Each route states its limit where it is declared (`bodyLimit(...)` in its middleware, see
// route-policy.ts), else it takes its service's default. The limit is applied by the app's
// middleware here, before principal resolution (a 413 comes before a 401), from the route the
// request matched; a request no route takes (a 404) meets the service's default.

import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from './http-errors.ts';
import { routePolicy, type BodyLimit } from './route-policy.ts';

export const KiB = 1024;
export const MiB = 1024 * 1024;

/** What every service takes when a route states no limit of its own. */
export const DEFAULT_BODY_LIMIT: BodyLimit = { maxBytes: 1 * MiB };

const tooLarge = (maxBytes: number) =>
  new ApiError(413, 'payload_too_large', `request body exceeds this route's limit of ${maxBytes} bytes`, {
    limit_bytes: maxBytes,
  });

/** Refuse a declared Content-Length over the limit, and let the route stream the body. */
function declaredLengthOnly(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(maxBytes);
    await next();
  };
}

const limiters = new Map<string, MiddlewareHandler>();

/** One limiter per distinct limit (routes share them). */
function limiterFor(limit: BodyLimit): MiddlewareHandler {
  const key = `${limit.maxBytes}:${!!limit.streamed}`;
  let limiter = limiters.get(key);
  if (!limiter) {
    limiter = limit.streamed
      ? declaredLengthOnly(limit.maxBytes)
      : bodyLimit({
          maxSize: limit.maxBytes,
          onError: () => {
            throw tooLarge(limit.maxBytes);
          },
        });
    limiters.set(key, limiter);
  }
  return limiter;
}

/** The limit the request's route states, else `fallback`. */
export const bodyLimitOf = (c: Parameters<MiddlewareHandler>[0], fallback: BodyLimit): BodyLimit =>
  routePolicy(c)?.bodyLimit ?? fallback;

/** One middleware for the whole app: the matched route names the limit. */
export function bodyLimits(fallback: BodyLimit): MiddlewareHandler {
  return (c, next) => {
    // A GET or HEAD has no body to limit; not touching `c.req.raw.body` keeps node-server's
    // lightweight request (materialising a full Request halves the throughput of small routes).
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    return limiterFor(bodyLimitOf(c, fallback))(c, next);
  };
}
