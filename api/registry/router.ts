// How registry routes are declared: a router per slice, the service's error body
// (`{error: {code, message}}`, spec 3 leaves the field names open) and its documented error
// responses, and the access rule each route states in its `middleware`.

import { z } from '@hono/zod-openapi';
import { router } from '../shared/base.ts';
import { errorResponses } from '../shared/openapi.ts';
import type { ServiceRoutes } from '../shared/route-declaration.ts';
import type { RegistryEnv } from './auth/principal.ts';

export const RegistryError = z
  .object({
    error: z
      .object({
        code: z.string().openapi({ description: 'machine-readable code', example: 'insufficient_scope' }),
        message: z.string().openapi({ example: 'this route needs the scope customers:read' }),
      })
      .passthrough(),
  })
  .openapi('RegistryError');

/** Every /api/ route sits behind the principal resolution, whose per-token rate limit can answer 429. */
export const REGISTRY_ROUTES: ServiceRoutes = {
  errorSchema: RegistryError,
  validationStatus: 422,
  rateLimited: (route) => route.path.startsWith('/api/'),
};

export const registryRouter = () => router<RegistryEnv>(REGISTRY_ROUTES);

/** Documented error responses: `registryErrors({ 404: 'customer_not_found' })`. */
export const registryErrors = (statuses: Record<number, string>) => errorResponses(RegistryError, statuses);

/** What every authenticated route may answer. */
export const AUTH_ERRORS = {
  401: 'no or invalid credentials, or a revoked or expired token',
  403: 'authenticated but not permitted: missing scope, a read-only user writing, a token on an admin route, or a failed CSRF check',
  429: "the token's rate limit is exceeded (Retry-After)",
};

/** Routes with a JSON body add these. */
export const BODY_ERRORS = {
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed or invalid_json',
};
