// How chat routes are declared: a router per slice typed with the chat principal, and the
// service's error body (`{ error: <description> }`, plus `code` where the spec names one) for
// the documented error responses.

import { z } from '@hono/zod-openapi';
import { router } from '../shared/base.ts';
import { errorResponses } from '../shared/openapi.ts';
import type { ChatEnv } from './auth.ts';

export const ChatError = z
  .object({ error: z.string().openapi({ description: 'what went wrong' }), code: z.string().optional() })
  .passthrough()
  .openapi('ChatError');

export const chatRouter = () => router<ChatEnv>({ errorSchema: ChatError, validationStatus: 400 });

/** Documented error responses: `chatErrors({ 401: 'missing or invalid token' })`. */
export const chatErrors = (statuses: Record<number, string>) => errorResponses(ChatError, statuses);

/** What every authenticated route may answer besides its own refusals. */
export const AUTH_ERRORS = {
  401: 'missing, invalid or expired access token, or a revoked session',
  429: 'per-user rate limit (Retry-After)',
};
