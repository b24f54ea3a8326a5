// The orchestration service's Hono app (spec 1). Error bodies: `{ error: <code>, message }`.

import type { Platform } from '../../infra/platform.ts';
import { createBaseApp } from '../shared/base.ts';
import { authenticate, requireAdmin, requireCsrfForSessions, type OrchVars } from './auth.ts';
import { adminUserRoutes } from './routes/admin-users.ts';
import { authRoutes } from './routes/auth.ts';
import { healthRoutes } from './routes/health.ts';
import { keyRotationRoutes } from './routes/key-rotation.ts';
import { meRoutes } from './routes/me.ts';

export function createOrchestrationApp(platform: Platform) {
  const app = createBaseApp<OrchVars>('orch', platform.log, ({ code, message, extra }) => ({ error: code, message, ...extra }));
  app.route('/', healthRoutes(platform));
  app.use('*', authenticate(platform));
  app.route('/', authRoutes(platform));
  app.route('/', meRoutes(platform));
  // Key rotation answers its own refusals (requires_admin and the rest) before require_admin runs.
  app.route('/', keyRotationRoutes(platform));
  app.use('/api/*', requireCsrfForSessions(platform));
  for (const path of ['/api/v1/admin/*', '/api/admin/*', '/api/templates', '/api/templates/*']) app.use(path, requireAdmin(platform));
  app.route('/', adminUserRoutes(platform));
  return app;
}
