// GET /health: the registry's only anonymous route; 200 only when the service and its database answer.

import { createRoute, z } from '@hono/zod-openapi';
import { ok } from '../../shared/openapi.ts';
import { anyone } from '../../shared/route-policy.ts';
import type { RegistryDeps } from '../deps.ts';
import { registryRouter } from '../router.ts';

const RegistryHealth = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    database: z.enum(['ok', 'unreachable']),
    version: z.string(),
    maintenance: z.object({ active: z.boolean(), read_only: z.boolean() }),
  })
  .openapi('RegistryHealth');

export function healthRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/health',
      tags: ['health'],
      summary: 'Anonymous liveness',
      middleware: anyone(),
      responses: {
        200: ok(RegistryHealth, 'the service and its database answer'),
        503: ok(RegistryHealth, 'the database is unreachable'),
      },
    }),
    async (c) => {
      const maintenance = { active: deps.maintenance().active, read_only: deps.maintenance().readOnly };
      try {
        await deps.db.query('SELECT 1');
        return c.json({ status: 'ok' as const, database: 'ok' as const, version: deps.version, maintenance }, 200);
      } catch {
        return c.json(
          { status: 'unavailable' as const, database: 'unreachable' as const, version: deps.version, maintenance },
          503,
        );
      }
    },
  );
  return app;
}
