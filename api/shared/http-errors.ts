// Errors answered with a status and the service's body form, and the mapping of domain
// rejections to statuses, shared by the three services. Each service renders the body in its own
// spec's form (see each app's `errorBody`).

import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { DomainErrorKind } from '../../domain/shared/decider.ts';

export const STATUS_OF: Record<DomainErrorKind, ContentfulStatusCode> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  unavailable: 503,
};

/** An error answered with a status and the service's body form, thrown from handlers and middleware. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Every 429 of every service: `Retry-After` (seconds) in the headers and `retry_after` in the body. */
export function rateLimited(retryAfterSeconds: number, message = 'rate limited'): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, 'rate_limited', message, { retry_after: seconds }, { 'Retry-After': String(seconds) });
}
