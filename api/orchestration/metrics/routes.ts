// GET /metrics: Prometheus text. No application-level authentication, unless ORCH_METRICS_TOKEN
// is set: then `Authorization: Bearer <token>` is required, compared in constant time. It must
// not be routed publicly (the spec): the token is the second line of defence.

import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { createHash, timingSafeEqual } from 'node:crypto';
import { guard } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { OrchEnv } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Equal-length digests, so neither the token's length nor its prefix leaks through timing. */
function metricsToken(token: string | null): MiddlewareHandler<OrchEnv> {
  const expected = token ? digest(token) : null;
  const access = token
    ? { rule: 'metrics token', refusals: { 401: 'the bearer token is missing or wrong' } }
    : { rule: 'anyone' };
  return guard(access, async (c, next) => {
    if (expected) {
      const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim() ?? '';
      if (!timingSafeEqual(digest(presented), expected)) {
        c.header('WWW-Authenticate', 'Bearer realm="metrics"');
        throw new ApiError(401, 'unauthorized', 'metrics require Authorization: Bearer <ORCH_METRICS_TOKEN>');
      }
    }
    await next();
  });
}

export function metricsRoutes(deps: Pick<OrchDeps, 'metrics' | 'config'>) {
  const app = orchRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/metrics',
      tags: ['health'],
      summary: 'Prometheus metrics (Bearer ORCH_METRICS_TOKEN when set)',
      middleware: [metricsToken(deps.config.metricsToken)] as const,
      responses: {
        200: { content: { 'text/plain': { schema: z.string() } }, description: 'Prometheus text exposition format' },
        ...orchErrors({ 401: 'ORCH_METRICS_TOKEN is set and the bearer token is missing or wrong' }),
      },
    }),
    async (c) => c.text(await deps.metrics.text(), 200, { 'Content-Type': deps.metrics.contentType }),
  );
  return app;
}
