// The orchestration service's Hono app (spec 1). Error bodies: `{ error: <code>, message }`.

import type { Platform } from '../../infra/platform.ts';
import { createBaseApp } from '../shared/base.ts';
import { authenticate, type OrchVars } from './auth.ts';
import { healthRoutes } from './routes/health.ts';
import { meRoutes } from './routes/me.ts';

export function createOrchestrationApp(platform: Platform) {
  const app = createBaseApp<OrchVars>('orch', platform.log, ({ code, message, extra }) => ({ error: code, message, ...extra }));
  app.route('/', healthRoutes(platform));
  app.use('*', authenticate(platform));
  app.route('/', meRoutes(platform));
  return app;
}
