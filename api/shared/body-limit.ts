// Request body limits per route family. A body past its family's limit is refused with 413 in
// the service's error body as soon as the limit is passed: a declared Content-Length over the
// limit is refused before a byte is read, a chunked body once it crosses the limit, and what
// was read is never more than the limit (hono's bodyLimit). The server then drains or closes
// the rest of the upload; the client has its answer either way, never a bare reset.

import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from './http-errors.ts';

export interface BodyFamily {
  /** Path prefix of the family (`/auth/`), or '' for every other route. */
  prefix: string;
  maxBytes: number;
}

export const KiB = 1024;
export const MiB = 1024 * 1024;

/** One middleware for the whole app: the longest matching prefix names the limit. */
export function bodyLimits(families: BodyFamily[]): MiddlewareHandler {
  const ordered = [...families].sort((a, b) => b.prefix.length - a.prefix.length).map((family) => ({
    ...family,
    limit: bodyLimit({
      maxSize: family.maxBytes,
      onError: () => {
        throw new ApiError(413, 'payload_too_large', `request body exceeds this route's limit of ${family.maxBytes} bytes`, { limit_bytes: family.maxBytes });
      },
    }),
  }));
  return (c, next) => {
    // A GET or HEAD has no body to limit; not touching `c.req.raw.body` keeps node-server's
    // lightweight request (materialising a full Request halves the throughput of small routes).
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const family = ordered.find((f) => c.req.path.startsWith(f.prefix));
    return family ? family.limit(c, next) : next();
  };
}
