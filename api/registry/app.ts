// The customer registry's Hono app (spec 3). The spec leaves error field names open; we answer
// `{ error: <code>, message }`, like the orchestration service.

import type { Platform } from '../../infra/platform.ts';
import { createBaseApp } from '../shared/base.ts';

export function createRegistryApp(platform: Platform) {
  const app = createBaseApp('registry', platform.log, ({ code, message, extra }) => ({ error: code, message, ...extra }));
  // Anonymous liveness: 200 only when the service and its database answer.
  app.get('/health', async (c) => {
    try {
      await platform.pool.query('SELECT 1');
      return c.json({ status: 'ok', database: 'ok', version: platform.version });
    } catch {
      return c.json({ status: 'unavailable', database: 'unreachable', version: platform.version }, 503);
    }
  });
  return app;
}
