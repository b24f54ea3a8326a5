// The path and query string of every request are checked before any handler runs: each
// percent-encoded part must decode to well-formed UTF-8 (no stray `%`, no lone surrogate such as
// `%ED%A0%80`) without a NUL character. PostgreSQL stores no NUL in text, so such a value would
// otherwise fail deep inside a query as a 500; Hono leaves a malformed sequence undecoded, so it
// would reach a handler as a literal. JSON bodies get the same rule in base.ts (`refuseNul`).

import type { Context } from 'hono';
import { ApiError } from './http-errors.ts';

// With the `u` flag a surrogate pair is one code point; only a lone surrogate matches.
const LONE_SURROGATE = /\p{Cs}/u;

/** A part decoded strictly: `null` when it is malformed or carries a NUL or a lone surrogate. */
function decodedPart(part: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(part);
  } catch {
    return null; // URIError: a stray `%`, or bytes that are not UTF-8 (an encoded surrogate among them)
  }
  return decoded.includes('\u0000') || LONE_SURROGATE.test(decoded) ? null : decoded;
}

/** Whether the request target (path and query) is well formed in the sense above. */
export function wellFormedTarget(url: string): boolean {
  const start = url.indexOf('/', url.indexOf(':') + 3);
  const hash = url.indexOf('#', start);
  const target = start < 0 ? '' : url.slice(start, hash < 0 ? undefined : hash);
  // The common case: nothing encoded, nothing to decode (the URL parser encodes raw controls).
  if (!target.includes('%') && !target.includes('\u0000') && !LONE_SURROGATE.test(target)) return true;
  const query = target.indexOf('?');
  const path = query < 0 ? target : target.slice(0, query);
  const parts = path.split('/');
  if (query >= 0) for (const pair of target.slice(query + 1).split('&')) parts.push(...pair.split('='));
  return parts.every((part) => decodedPart(part) !== null);
}

/** Refuse a malformed path or query with the service's validation status, in its error body. */
export function refuseMalformedTarget(validationStatus: 400 | 422) {
  return async (c: Context, next: () => Promise<void>) => {
    if (!wellFormedTarget(c.req.url)) {
      throw new ApiError(
        validationStatus,
        'validation_failed',
        'the path and query must be percent-encoded UTF-8 without NUL characters',
      );
    }
    await next();
  };
}
