// MCP server registrations (spec: "MCP server registration"), admin-only operator state: PUT
// replaces the stored set with the array sent (`[]` removes all); GET shows it with `env` values
// redacted. `env` is sealed in the log (env-seal.ts); the runner receives it in full when it claims an agent
// (runner/commands.ts). The admin check is the routes' own, whatever ORCH_ENFORCE_ADMIN_ROLE says:
// these are commands the runner will execute.

import { createRoute, z } from '@hono/zod-openapi';
import { listMcpServers, type McpServerRow } from '../../../projections/orchestration/mcp-servers.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireAdmin } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter } from '../router.ts';
import { replaceMcpServers } from './commands.ts';

const tags = ['agents'];
export const REDACTED = '[redacted]';

const McpServerInput = z
  .object({
    name: z.string().trim().min(1).max(200),
    command: z.string().trim().min(1).max(4096),
    args: z.array(z.string().max(4096)).max(256).default([]),
    env: z.record(z.string().min(1).max(256), z.string().max(65_536)).default({}),
    description: z.string().max(2000).nullable().optional(),
  })
  .openapi('McpServerRegistration');
const McpServerSet = z
  .array(McpServerInput)
  .max(100)
  .superRefine((servers, ctx) => {
    const seen = new Set<string>();
    servers.forEach((s, i) => {
      if (seen.has(s.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${s.name}" appears more than once` });
      seen.add(s.name);
    });
  });
const McpServer = z
  .object({
    name: z.string(),
    command: z.string(),
    args: z.array(z.string()),
    env: z.record(z.string(), z.string()).openapi({ description: 'values redacted' }),
    description: z.string().nullable(),
  })
  .openapi('McpServer');

const redactedView = (row: McpServerRow) => ({
  name: row.name,
  command: row.command,
  args: row.args,
  env: Object.fromEntries(row.env_keys.map((k) => [k, REDACTED])),
  description: row.description,
});

export function mcpServerRoutes(deps: OrchDeps) {
  const app = orchRouter();
  const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'admin role required' };

  app.openapi(
    createRoute({
      method: 'put',
      path: '/api/v1/agents/mcp-servers',
      tags,
      summary: 'Replace the stored MCP server set (admin)',
      middleware: [requireAdmin(true)] as const,
      request: { body: jsonBody(McpServerSet) },
      responses: {
        200: ok(z.array(McpServer), 'the stored set, env values redacted'),
        ...orchErrors({ ...ADMIN_ERRORS, 400: 'validation_failed', 413: 'payload_too_large' }),
      },
    }),
    async (c) => {
      const stored = await replaceMcpServers(deps, c.req.valid('json'), actorOf(c));
      return c.json(stored.map(redactedView), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/agents/mcp-servers',
      tags,
      summary: 'The stored MCP server set, env values redacted (admin)',
      middleware: [requireAdmin(true)] as const,
      responses: { 200: ok(z.array(McpServer), 'the stored set'), ...orchErrors(ADMIN_ERRORS) },
    }),
    async (c) => c.json((await listMcpServers(deps.db)).map(redactedView), 200),
  );

  return app;
}
