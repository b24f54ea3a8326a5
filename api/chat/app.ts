// The chat service's Hono app (spec 2); REST paths live under /api. Error bodies: `{ error }`
// (a description string), plus `code` where the spec names one (`rate_limited`) and
// `retry_after` on a 429.

import { createBaseApp } from '../shared/base.ts';
import { KiB, MiB } from '../shared/body-limit.ts';
import { serveApiDocs } from '../shared/openapi.ts';
import { authRoutes } from './accounts/auth-routes.ts';
import { accountRoutes } from './accounts/routes.ts';
import { requireChatUser, type ChatPrincipal } from './auth.ts';
import type { ChatDeps } from './deps.ts';
import { healthRoutes } from './health/routes.ts';
import { inviteRoutes } from './invites/routes.ts';
import { keyRoutes } from './keys/routes.ts';
import { ChatError } from './router.ts';
import { sessionRoutes } from './sessions/routes.ts';
import { totpRoutes } from './totp/routes.ts';
import { userRoutes } from './users/routes.ts';
import { wsRoutes } from './ws/routes.ts';

export { ChatError } from './router.ts';

export const CHAT_BODY_LIMITS = [{ prefix: '/api/auth/', maxBytes: 64 * KiB }, { prefix: '', maxBytes: 1 * MiB }];

export const CHAT_DOCS = {
  title: 'Chat service API',
  description: 'Team chat with end-to-end encryption, bots, webhooks and the admin surface. Generated from the routes.',
};

export function createChatApp(deps: ChatDeps) {
  const app = createBaseApp<{ chatUser: ChatPrincipal }>({
    service: 'chat', log: deps.log, metrics: deps.metrics, bodyLimits: CHAT_BODY_LIMITS,
    errorBody: ({ code, message, extra }) => ({ error: message, ...(code === 'rate_limited' ? { code } : {}), ...extra }),
  });
  app.route('/', healthRoutes(deps));
  app.route('/', authRoutes(deps));
  app.route('/', accountRoutes(deps));
  app.route('/', sessionRoutes(deps));
  app.route('/', totpRoutes(deps));
  app.route('/', keyRoutes(deps));
  app.route('/', userRoutes(deps));
  app.route('/', inviteRoutes(deps));
  app.route('/', wsRoutes(deps));
  serveApiDocs(app, { ...CHAT_DOCS, version: deps.version, documentPath: '/api/openapi.json', pagePath: '/api/docs', guard: requireChatUser(deps), errorSchema: ChatError });
  return app;
}
