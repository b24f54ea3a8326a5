// Request body limits per route family. A body past its family's limit is refused with 413 in
// the service's error body as soon as the limit is passed: a declared Content-Length over the
// limit is refused before a byte is read, a chunked body once it crosses the limit, and what
// was read is never more than the limit (hono's bodyLimit). The server then drains and discards
// the rest of the upload, within a bound, so that the client reads its answer rather than a
// reset (main/lingering-close.ts).

import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from './http-errors.ts';

export interface BodyFamily {
  /** Path prefix of the family (`/auth/`), or '' for every other route. */
  prefix: string;
  /** Paths the family takes instead of a prefix (`/api/groups/{id}/icon`); such families are matched first. */
  pattern?: RegExp;
  maxBytes: number;
  /**
   * The family's routes read their body as a stream, never whole (an ingest batch may be far
   * larger than a request should hold in memory): here only a declared Content-Length over the
   * limit is refused; the route's reader counts bytes as they arrive and answers 413 past the
   * limit, and it refuses NUL characters itself.
   */
  streamed?: boolean;
}

export const KiB = 1024;
export const MiB = 1024 * 1024;

const tooLarge = (maxBytes: number) =>
  new ApiError(413, 'payload_too_large', `request body exceeds this route's limit of ${maxBytes} bytes`, { limit_bytes: maxBytes });

/** Patterns first, then prefixes, longest first. */
const precedence = (a: BodyFamily, b: BodyFamily) => Number(!!b.pattern) - Number(!!a.pattern) || b.prefix.length - a.prefix.length;
const matches = (f: BodyFamily, path: string) => (f.pattern ? f.pattern.test(path) : path.startsWith(f.prefix));

/** The family of `path`: a matching pattern, else the longest matching prefix. */
export function familyOf(families: BodyFamily[], path: string): BodyFamily | undefined {
  return [...families].sort(precedence).find((f) => matches(f, path));
}

/** Refuse a declared Content-Length over the limit, and let the route stream the body. */
function declaredLengthOnly(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(maxBytes);
    await next();
  };
}

/** One middleware for the whole app: the longest matching prefix names the limit. */
export function bodyLimits(families: BodyFamily[]): MiddlewareHandler {
  const ordered = [...families].sort(precedence).map((family) => ({
    ...family,
    limit: family.streamed ? declaredLengthOnly(family.maxBytes) : bodyLimit({
      maxSize: family.maxBytes,
      onError: () => {
        throw tooLarge(family.maxBytes);
      },
    }),
  }));
  return (c, next) => {
    // A GET or HEAD has no body to limit; not touching `c.req.raw.body` keeps node-server's
    // lightweight request (materialising a full Request halves the throughput of small routes).
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const family = ordered.find((f) => matches(f, c.req.path));
    return family ? family.limit(c, next) : next();
  };
}
