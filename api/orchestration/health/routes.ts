// Health routes (anonymous): liveness without the database, and the database with its migrations.

import { createRoute, z } from '@hono/zod-openapi';
import { migrationStatus } from '../../../infra/db/migrate.ts';
import { anyone } from '../../shared/route-policy.ts';
import { ok } from '../../shared/openapi.ts';
import type { OrchDeps } from '../deps.ts';
import { orchRouter } from '../router.ts';

const tags = ['health'];
/** During an update's maintenance writes are refused; read_only once none is in flight (the sidecar waits for it). */
export const Maintenance = z.object({ active: z.boolean(), read_only: z.boolean() }).openapi('Maintenance');
const Health = z
  .object({
    status: z.literal('ok'),
    version: z.string(),
    integrations: z.object({
      chatsvc_bot_ws: z.object({
        status: z.string().openapi({
          description:
            'disabled (no integration key), idle (no active integration), connected, degraded (some sockets down), disconnected (all down), standby (held by another instance)',
        }),
        active: z.number().int(),
        connected: z.number().int(),
        down: z.number().int(),
        standby: z.number().int(),
      }),
    }),
    maintenance: Maintenance,
  })
  .openapi('Health');
const DbHealth = z
  .object({ status: z.literal('ok'), migrations_applied: z.number().int(), latest_migration: z.string() })
  .openapi('DbHealth');
const DbDown = z
  .object({ status: z.literal('unavailable'), error: z.string(), message: z.string() })
  .openapi('DbUnavailable');

export const maintenanceOf = (deps: Pick<OrchDeps, 'maintenance'>) => {
  const view = deps.maintenance();
  return { active: view.active, read_only: view.readOnly };
};

export function healthRoutes(deps: Pick<OrchDeps, 'db' | 'version' | 'maintenance' | 'chatsvc'>) {
  const app = orchRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/health',
      tags,
      summary: 'Liveness (does not check the database)',
      middleware: anyone(),
      responses: { 200: ok(Health, 'the service runs') },
    }),
    (c) =>
      c.json(
        {
          status: 'ok' as const,
          version: deps.version,
          integrations: { chatsvc_bot_ws: deps.chatsvc.health() },
          maintenance: maintenanceOf(deps),
        },
        200,
      ),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/health/db',
      tags,
      summary: 'The database and its applied migrations',
      middleware: anyone(),
      responses: { 200: ok(DbHealth, 'the database answers'), 503: ok(DbDown, 'the database is unreachable') },
    }),
    async (c) => {
      try {
        const { applied, latest } = await migrationStatus(deps.db);
        return c.json({ status: 'ok' as const, migrations_applied: applied, latest_migration: latest ?? '' }, 200);
      } catch {
        return c.json(
          { status: 'unavailable' as const, error: 'database_unreachable', message: 'the database is unreachable' },
          503,
        );
      }
    },
  );
  return app;
}
