// The customer registry's Hono app (spec 3). Error bodies are `{error: {code, message}}` and
// validation failures answer 422 (the spec's status for malformed bodies and unknown enum or
// scope values). Requests meet: the anonymous health route, principal resolution for /api/*
// (machine token, OIDC session cookie, forward-auth headers), then each route's access rule.

import { createBaseApp } from '../shared/base.ts';
import { serveApiDocs } from '../shared/openapi.ts';
import { access } from './auth/access.ts';
import { authenticate, type RegistryVars } from './auth/principal.ts';
import { customerRecordRoutes } from './customers/records.ts';
import { customerRoutes } from './customers/routes.ts';
import type { RegistryDeps } from './deps.ts';
import { deploymentRoutes } from './deployments/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { REGISTRY_ROUTES, RegistryError } from './router.ts';
import { rollupRoutes } from './rollups/routes.ts';
import { sessionRoutes } from './sessions/routes.ts';
import { subscriptionRoutes } from './subscriptions/routes.ts';
import { tokenRoutes } from './tokens/routes.ts';

export { RegistryError };

export const REGISTRY_DOCS = {
  title: 'Customer registry API',
  description: 'Customers, deployments, subscriptions, rollups and machine tokens. Generated from the routes.',
};

export function createRegistryApp(deps: RegistryDeps) {
  const app = createBaseApp<RegistryVars>({
    service: 'registry',
    ...REGISTRY_ROUTES,
    log: deps.log,
    metrics: deps.metrics,
    errorBody: ({ code, message, extra }) => ({ error: { code, message, ...extra } }),
  });
  app.route('/', healthRoutes(deps));
  app.use('/api/*', authenticate(deps));
  app.route('/', sessionRoutes(deps));
  app.route('/', customerRoutes(deps));
  app.route('/', customerRecordRoutes(deps));
  app.route('/', deploymentRoutes(deps));
  app.route('/', subscriptionRoutes(deps));
  app.route('/', tokenRoutes(deps));
  app.route('/', rollupRoutes(deps));
  serveApiDocs(app, {
    ...REGISTRY_DOCS,
    version: deps.version,
    documentPath: '/api/v1/openapi.json',
    pagePath: '/api/v1/docs',
    guard: access(deps, 'any'),
    errorSchema: RegistryError,
  });
  return app;
}
