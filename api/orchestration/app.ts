// The orchestration service's Hono app (spec 1). Error bodies: `{ error: <code>, message }`.
// The order below is the order requests meet things: health and metrics (anonymous), the web
// console's static files (anonymous, never under /api, /auth, /ws or /metrics), principal
// resolution, the routes that answer their own refusals (login, key rotation, agent credential rotation), the CSRF check
// for session writes, then the slices. Each route states who may call it and its body limit
// where it is declared (api/shared/route-policy.ts); `require_admin` is the first refusal of
// every route in the admin area, and of the area's paths no route takes (admin-area.ts).

import { createBaseApp } from '../shared/base.ts';
import { serveApiDocs } from '../shared/openapi.ts';
import { adminAreaRoutes } from './auth/admin-area.ts';
import { requireKey } from './auth/guards.ts';
import { authenticate, type OrchVars } from './auth/principal.ts';
import { requireCsrfForSessions } from './auth/session-cookies.ts';
import type { OrchDeps } from './deps.ts';
import { estateRoutes } from './estate/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { logRoutes } from './log/routes.ts';
import { socketRoutes } from './log/ws.ts';
import { metricsRoutes } from './metrics/routes.ts';
import { OrchError } from './router.ts';
import { keyRotationRoutes } from './users/key-rotation.ts';
import { loginRoutes } from './users/login.ts';
import { userRoutes } from './users/routes.ts';
import { profileRoutes } from './profiles/routes.ts';
import { knowledgeRoutes } from './knowledge/routes.ts';
import { templateRoutes } from './templates/routes.ts';
import { agentChatRoutes } from './agent-chat/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import { agentCredentialRoutes } from './agents/credential.ts';
import { agentChatTurnRoutes } from './agents/chat.ts';
import { agentRoutes } from './agents/routes.ts';
import { cockpitRoutes } from './cockpit/routes.ts';
import { consoleRoutes } from './console/routes.ts';
import { commanderLinkRoutes } from './commander-link/routes.ts';
import { mcpServerRoutes } from './mcp-servers/routes.ts';
import { projectRoutes } from './projects/routes.ts';
import { runnerRoutes } from './runner/routes.ts';
import { taskRoutes } from './tasks/routes.ts';
import { updateRoutes } from './updates/routes.ts';
import { chatsvcRoutes } from './chatsvc/routes.ts';

export const ORCH_DOCS = {
  title: 'Orchestration service API',
  description:
    'Agent profiles, chat, knowledge, projects, tasks and agents, the chat-service connector, cockpit and updates. Generated from the routes.',
};

export function createOrchestrationApp(deps: OrchDeps) {
  const app = createBaseApp<OrchVars>({
    service: 'orch',
    errorSchema: OrchError,
    log: deps.log,
    metrics: deps.metrics,
    errorBody: ({ code, message, extra }) => ({ error: code, message, ...extra }),
  });
  app.route('/', healthRoutes(deps));
  app.route('/', metricsRoutes(deps));
  // The web console's pages and assets (GETs outside /api, /auth, /ws and /metrics): no principal needed.
  app.use('*', consoleRoutes({ dist: deps.consoleDist }));
  // Commander link: no request without a valid signature gets further, whatever key it carries.
  app.route('/', commanderLinkRoutes());
  app.use('*', authenticate(deps));
  app.route('/', loginRoutes(deps));
  // Key rotation answers its own refusals (requires_admin and the rest) before require_admin runs.
  app.route('/', keyRotationRoutes(deps));
  app.route('/', agentCredentialRoutes(deps));
  app.use('/api/*', requireCsrfForSessions(deps.sealKey));
  app.route('/', userRoutes(deps));
  app.route('/', profileRoutes(deps));
  app.route('/', knowledgeRoutes(deps));
  app.route('/', templateRoutes(deps));
  app.route('/', estateRoutes(deps));
  app.route('/', logRoutes(deps));
  app.route('/', socketRoutes(deps));
  app.route('/', agentChatRoutes(deps));
  app.route('/', auditRoutes(deps));
  app.route('/', projectRoutes(deps));
  app.route('/', taskRoutes(deps));
  // Before the agent routes: `/api/v1/agents/mcp-servers` would otherwise read as an agent id.
  app.route('/', mcpServerRoutes(deps));
  app.route('/', chatsvcRoutes(deps));
  app.route('/', agentRoutes(deps));
  app.route('/', agentChatTurnRoutes(deps));
  app.route('/', runnerRoutes(deps));
  app.route('/', cockpitRoutes(deps));
  app.route('/', updateRoutes(deps));
  // Last: the admin area's paths that no route above takes.
  app.route('/', adminAreaRoutes(deps));
  serveApiDocs(app, {
    ...ORCH_DOCS,
    version: deps.version,
    documentPath: '/api/v1/openapi.json',
    pagePath: '/api/v1/docs',
    guard: requireKey(),
    errorSchema: OrchError,
  });
  return app;
}
