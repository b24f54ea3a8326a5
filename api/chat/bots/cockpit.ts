// GET /api/v1/metrics/cockpit: instance metadata for a monitoring cockpit, for bot tokens of
// scope `metrics` only (access tokens and other scopes get 403). Counts only, no content.

import { createRoute, z } from '@hono/zod-openapi';
import { cockpitCounts } from '../../../projections/chat/bots.ts';
import { ok } from '../../shared/openapi.ts';
import { requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';

const Cockpit = z
  .object({
    version: z.string(),
    health: z.object({ status: z.enum(['ok', 'degraded']), db_healthy: z.boolean(), uptime_secs: z.number().int() }),
    workspaces: z.number().int().openapi({ description: 'live communities' }),
    members: z.number().int().openapi({ description: 'live accounts (people and bots)' }),
    channels: z.number().int().openapi({ description: 'live channels (group, standalone and DM)' }),
    messages: z.number().int().openapi({ description: 'messages not deleted' }),
    generated_at: z.iso.datetime(),
  })
  .openapi('Cockpit');

export function cockpitRoutes(deps: ChatDeps) {
  const app = chatRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/metrics/cockpit',
      tags: ['metrics'],
      summary: 'Instance counts for a cockpit (bot token of scope metrics only)',
      middleware: [requireChatUser(deps, { bots: ['metrics'], jwt: false })] as const,
      responses: {
        200: ok(Cockpit, 'metadata only'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'X-Bot-Token and Authorization both sent',
          403: 'not a metrics token (access tokens and other scopes are refused)',
        }),
      },
    }),
    async (c) => {
      let counts = { workspaces: 0, members: 0, channels: 0, messages: 0 };
      let healthy = true;
      try {
        counts = await cockpitCounts(deps.db);
      } catch {
        healthy = false;
      }
      return c.json(
        {
          version: deps.version,
          health: {
            status: healthy ? ('ok' as const) : ('degraded' as const),
            db_healthy: healthy,
            uptime_secs: Math.floor((deps.clock.now().getTime() - deps.startedAt.getTime()) / 1000),
          },
          ...counts,
          generated_at: deps.clock.now().toISOString(),
        },
        200,
      );
    },
  );
  return app;
}
