// The chat service's Hono app (spec 2); REST paths live under /api. Error bodies: `{ error }`
// (a description string), plus `code` where the spec names one (`rate_limited`) and
// `retry_after` on a 429.

import { z } from '@hono/zod-openapi';
import { createBaseApp } from '../shared/base.ts';
import { MiB } from '../shared/body-limit.ts';
import { serveApiDocs } from '../shared/openapi.ts';
import { requireChatUser } from './auth.ts';
import type { ChatDeps } from './deps.ts';
import { healthRoutes } from './health/routes.ts';

export const ChatError = z.object({ error: z.string().openapi({ description: 'what went wrong' }), code: z.string().optional() }).passthrough().openapi('ChatError');

export const CHAT_BODY_LIMITS = [{ prefix: '', maxBytes: 1 * MiB }];

export const CHAT_DOCS = {
  title: 'Chat service API',
  description: 'Team chat with end-to-end encryption, bots, webhooks and the admin surface. Generated from the routes.',
};

export function createChatApp(deps: ChatDeps) {
  const app = createBaseApp({
    service: 'chat', log: deps.log, metrics: deps.metrics, bodyLimits: CHAT_BODY_LIMITS,
    errorBody: ({ code, message, extra }) => ({ error: message, ...(code === 'rate_limited' ? { code } : {}), ...extra }),
  });
  app.route('/', healthRoutes(deps));
  serveApiDocs(app, { ...CHAT_DOCS, version: deps.version, documentPath: '/api/openapi.json', pagePath: '/api/docs', guard: requireChatUser(), errorSchema: ChatError });
  return app;
}
