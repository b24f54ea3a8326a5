// Who may call the chat service's authenticated routes. Chat accounts (JWT access tokens) and
// bot tokens arrive with the chat accounts and bots issues; until then no credential can be
// valid, so every authenticated route answers 401 with the spec's body, and nothing is open
// that the spec does not open.

import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../shared/http-errors.ts';

export function requireChatUser(): MiddlewareHandler {
  return async () => {
    throw new ApiError(401, 'unauthorized', 'authentication required');
  };
}
