// The customer registry's Hono app (spec 3). The spec leaves error field names open; we answer
// `{ error: <code>, message }`, like the orchestration service.

import { z } from '@hono/zod-openapi';
import { createBaseApp } from '../shared/base.ts';
import { MiB } from '../shared/body-limit.ts';
import { serveApiDocs } from '../shared/openapi.ts';
import { requireRegistryCaller } from './auth.ts';
import type { RegistryDeps } from './deps.ts';
import { healthRoutes } from './health/routes.ts';

export const RegistryError = z.object({ error: z.string(), message: z.string() }).passthrough().openapi('RegistryError');

export const REGISTRY_BODY_LIMITS = [{ prefix: '', maxBytes: 1 * MiB }];

export const REGISTRY_DOCS = {
  title: 'Customer registry API',
  description: 'Customers, deployments, subscriptions, rollups and machine tokens. Generated from the routes.',
};

export function createRegistryApp(deps: RegistryDeps) {
  const app = createBaseApp({
    service: 'registry', log: deps.log, metrics: deps.metrics, bodyLimits: REGISTRY_BODY_LIMITS,
    errorBody: ({ code, message, extra }) => ({ error: code, message, ...extra }),
  });
  app.route('/', healthRoutes(deps));
  serveApiDocs(app, {
    ...REGISTRY_DOCS, version: deps.version, documentPath: '/api/v1/openapi.json', pagePath: '/api/v1/docs',
    guard: requireRegistryCaller(), errorSchema: RegistryError,
  });
  return app;
}
