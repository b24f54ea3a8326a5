// The chat service's Hono app (spec 2); REST paths live under /api. Error bodies: `{ error }`
// (a description string), plus `code` where the spec names one.

import { Hono } from 'hono';
import type { Platform } from '../../infra/platform.ts';
import { createBaseApp } from '../shared/base.ts';

async function databaseHealthy(platform: Platform): Promise<boolean> {
  try {
    await platform.pool.query('SELECT 1');
    return true;
  } catch {
    return false;
  }
}

export function createChatApp(platform: Platform) {
  const app = createBaseApp('chat', platform.log, ({ code, message, extra }) => ({
    error: message, ...(code === 'rate_limited' ? { code } : {}), ...extra,
  }));
  const api = new Hono().get('/health', async (c) => {
    const healthy = await databaseHealthy(platform);
    return c.json({
      status: healthy ? 'ok' : 'degraded',
      version: platform.version,
      uptime_secs: Math.floor((Date.now() - platform.startedAt.getTime()) / 1000),
      db_healthy: healthy,
    }, healthy ? 200 : 503);
  });
  app.route('/api', api);
  return app;
}
