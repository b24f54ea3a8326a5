// GET /api/health (anonymous): the service and its database.

import { createRoute, z } from '@hono/zod-openapi';
import { ok } from '../../shared/openapi.ts';
import { anyone } from '../../shared/route-policy.ts';
import type { ChatDeps } from '../deps.ts';
import { chatRouter } from '../router.ts';

const ChatHealth = z
  .object({
    status: z.enum(['ok', 'degraded']),
    version: z.string(),
    uptime_secs: z.number().int(),
    db_healthy: z.boolean(),
    maintenance: z.object({ active: z.boolean(), read_only: z.boolean() }),
  })
  .openapi('ChatHealth');

async function databaseHealthy(deps: ChatDeps): Promise<boolean> {
  try {
    await deps.db.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

export function healthRoutes(deps: ChatDeps) {
  const app = chatRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/health',
      tags: ['health'],
      summary: 'Service and database health',
      middleware: anyone(),
      responses: { 200: ok(ChatHealth, 'healthy'), 503: ok(ChatHealth, 'the database is unreachable (degraded)') },
    }),
    async (c) => {
      const healthy = await databaseHealthy(deps);
      const body = {
        status: healthy ? ('ok' as const) : ('degraded' as const),
        version: deps.version,
        uptime_secs: Math.floor((deps.clock.now().getTime() - deps.startedAt.getTime()) / 1000),
        db_healthy: healthy,
        maintenance: { active: deps.maintenance().active, read_only: deps.maintenance().readOnly },
      };
      return healthy ? c.json(body, 200) : c.json(body, 503);
    },
  );
  return app;
}
