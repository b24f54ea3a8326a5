// Health routes: liveness (no database), and the database with its migrations.

import { Hono } from 'hono';
import { migrationStatus } from '../../../infra/db/migrate.ts';
import type { Platform } from '../../../infra/platform.ts';
import type { OrchEnv } from '../auth.ts';

export function healthRoutes(platform: Platform) {
  return new Hono<OrchEnv>()
    .get('/api/v1/health', (c) => c.json({
      status: 'ok',
      version: platform.version,
      // The chat-service bot connector is not running in this build: no socket to report on.
      integrations: { chatsvc_bot_ws: { status: 'disabled' } },
    }))
    .get('/api/v1/health/db', async (c) => {
      try {
        const { applied, latest } = await migrationStatus(platform.pool);
        return c.json({ status: 'ok', migrations_applied: applied, latest_migration: latest ?? '' });
      } catch {
        return c.json({ status: 'unavailable', error: 'database_unreachable', message: 'the database is unreachable' }, 503);
      }
    });
}
