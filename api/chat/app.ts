// The chat service's Hono app (spec 2); REST paths live under /api. Error bodies: `{ error }`
// (a description string), plus `code` where the spec names one (`rate_limited`) and
// `retry_after` on a 429.

import { createBaseApp } from '../shared/base.ts';
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
import { chatUpdateRoutes } from './updates/routes.ts';
import { wsRoutes } from './ws/routes.ts';
import { channelRoutes } from './channels/routes.ts';
import { dmRoutes } from './channels/dms.ts';
import { communityInviteRoutes } from './communities/invites.ts';
import { moderationRoutes } from './communities/moderation.ts';
import { communityRoutes } from './communities/routes.ts';
import { groupRoutes } from './groups/routes.ts';
import { messageRoutes } from './messages/routes.ts';
import { senderKeyRoutes } from './sender-keys/routes.ts';
import { botRoutes } from './bots/routes.ts';
import { cockpitRoutes } from './bots/cockpit.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { adminRoutes } from './admin/routes.ts';
import { feedbackRoutes } from './feedback/routes.ts';
import { pollRoutes } from './polls/routes.ts';
import { meetingRoutes } from './meetings/routes.ts';
import { meetingIcsRoutes } from './calendar-feeds/routes.ts';
import { scheduledRoutes } from './scheduled/routes.ts';
import { bookmarkRoutes } from './bookmarks/routes.ts';
import { fileRoutes } from './files/routes.ts';
import { adminFileRoutes } from './admin-files/routes.ts';
import { assetRoutes } from './assets/routes.ts';
import { linkPreviewRoutes } from './link-preview/routes.ts';
import { gifRoutes } from './gifs/routes.ts';
import { pushRoutes } from './push/routes.ts';

export { ChatError } from './router.ts';

/** A webhook's token and a calendar feed's token are their URLs: log lines show those paths without them. */
export const redactSecrets = (path: string) =>
  path
    .replace(/^(\/api\/webhooks\/execute\/)[^/]*/, '$1[redacted]')
    .replace(/^(\/api\/calendar\/feeds\/)[^/]*/, '$1[redacted]');

export const CHAT_DOCS = {
  title: 'Chat service API',
  description: 'Team chat with end-to-end encryption, bots, webhooks and the admin surface. Generated from the routes.',
};

export function createChatApp(deps: ChatDeps) {
  const app = createBaseApp<{ chatUser: ChatPrincipal }>({
    service: 'chat',
    errorSchema: ChatError,
    log: deps.log,
    metrics: deps.metrics,
    logPath: redactSecrets,
    errorBody: ({ code, message, extra }) => ({
      error: message,
      ...(code === 'rate_limited' ? { code } : {}),
      ...extra,
    }),
  });
  app.route('/', healthRoutes(deps));
  app.route('/', authRoutes(deps));
  app.route('/', accountRoutes(deps));
  app.route('/', sessionRoutes(deps));
  app.route('/', totpRoutes(deps));
  app.route('/', keyRoutes(deps));
  app.route('/', userRoutes(deps));
  app.route('/', inviteRoutes(deps));
  app.route('/', chatUpdateRoutes(deps));
  app.route('/', communityRoutes(deps));
  app.route('/', communityInviteRoutes(deps));
  app.route('/', moderationRoutes(deps));
  app.route('/', groupRoutes(deps));
  // Before the channel routes: /api/channels/unread is not a channel id.
  app.route('/', messageRoutes(deps));
  app.route('/', channelRoutes(deps));
  app.route('/', dmRoutes(deps));
  app.route('/', senderKeyRoutes(deps));
  app.route('/', pollRoutes(deps));
  // The .ics routes first: /api/meetings/<id>.ics is not a meeting id.
  app.route('/', meetingIcsRoutes(deps));
  app.route('/', meetingRoutes(deps));
  app.route('/', scheduledRoutes(deps));
  app.route('/', bookmarkRoutes(deps));
  app.route('/', wsRoutes(deps));
  app.route('/', botRoutes(deps));
  app.route('/', cockpitRoutes(deps));
  app.route('/', webhookRoutes(deps));
  app.route('/', adminRoutes(deps));
  app.route('/', feedbackRoutes(deps));
  app.route('/', fileRoutes(deps));
  app.route('/', adminFileRoutes(deps));
  app.route('/', assetRoutes(deps));
  app.route('/', linkPreviewRoutes(deps));
  app.route('/', gifRoutes(deps));
  app.route('/', pushRoutes(deps));
  serveApiDocs(app, {
    ...CHAT_DOCS,
    version: deps.version,
    documentPath: '/api/openapi.json',
    pagePath: '/api/docs',
    guard: requireChatUser(deps),
    errorSchema: ChatError,
  });
  return app;
}
