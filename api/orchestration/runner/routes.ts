// The runner's own routes (spec: "Agents are spawned against a project and executed by a
// separate runner component"; the protocol is ours). Only the runner's service principal
// (ORCH_RUNNER_API_KEY) is served; any other principal gets 403 `runner_only`.
//
// - `POST /api/v1/runner/recover {runner_instance}`: at the runner's start. Whatever a runner
//   held (claimed or running) is failed with a reason: a runner that stopped mid-run never
//   leaves an agent stuck in `running`. One runner process per deployment is the model.
// - `POST /api/v1/runner/claim {runner_instance}`: the oldest queued agent whose project has a
//   free slot (fewer claimed or running agents than its max_concurrent_agents), with its
//   credential, its prompts, its project and the MCP servers (env opened); `{agent: null}` when
//   there is none. Claims are serialised by a PostgreSQL advisory lock, so concurrent claims
//   (several instances of the service) never overfill a project.
// - `POST /api/v1/runner/agents/{id}/report`: `running`, `cost` (an increment in USD),
//   `completed` or `failed` (with a reason). Answers the agent's status; once the agent has
//   ended (stopped or killed by a person), a state report is 409 `agent_ended`: the runner
//   learns of stop and kill from that answer or from `GET /api/v1/agents/{id}`.

import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { guard } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok, orNull } from '../../shared/openapi.ts';
import { actorOf, unauthenticated } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { Agent, AgentIdParam } from '../agents/schemas.ts';
import { AUTH_ERRORS, orchErrors, orchRouter } from '../router.ts';
import { claimNextAgent, recoverHeldAgents, reportAgent } from './commands.ts';

const tags = ['runner'];
const RUNNER_ERRORS = { ...AUTH_ERRORS, 403: 'runner_only' };

export function requireRunner(): MiddlewareHandler<OrchEnv> {
  return guard({ rule: 'runner', refusals: { 403: 'runner_only' } }, async (c, next) => {
    const principal = c.get('principal');
    if (principal.kind === 'anonymous') throw unauthenticated(c);
    if (principal.kind !== 'service') throw new ApiError(403, 'runner_only', 'this route serves the runner only');
    await next();
  });
}

const Instance = z.object({ runner_instance: z.string().min(1).max(200) });

const ClaimedAgent = Agent.extend({ initial_prompt: z.string().nullable() }).openapi('ClaimedAgent');

const Claim = z
  .object({
    agent: orNull(ClaimedAgent).openapi({ description: 'null when no queued agent has a free slot' }),
    system_prompt: z.string().optional(),
    credential: z.string().optional().openapi({ description: "the agent's API key" }),
    project: z.object({ id: z.uuid(), name: z.string(), repo_path: z.string().nullable() }).optional(),
    mcp_servers: z
      .array(
        z.object({
          name: z.string(),
          command: z.string(),
          args: z.array(z.string()),
          env: z.record(z.string(), z.string()),
          description: z.string().nullable(),
        }),
      )
      .optional(),
  })
  .openapi('RunnerClaim');

const Report = z
  .discriminatedUnion('event', [
    z.object({ event: z.literal('running'), runner_instance: z.string().min(1) }),
    z.object({ event: z.literal('cost'), cost_usd: z.number().min(0).max(1_000_000) }),
    z.object({ event: z.literal('completed'), runner_instance: z.string().min(1) }),
    z.object({ event: z.literal('failed'), runner_instance: z.string().min(1), reason: z.string().min(1).max(2000) }),
  ])
  .openapi('RunnerReport');

export function runnerRoutes(deps: OrchDeps) {
  const app = orchRouter();

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/runner/recover',
      tags,
      summary: 'Fail whatever a runner held (called when the runner starts)',
      middleware: [requireRunner()] as const,
      request: { body: jsonBody(Instance) },
      responses: {
        200: ok(z.object({ failed: z.array(z.uuid()) }), 'the agents failed'),
        ...orchErrors({ ...RUNNER_ERRORS, 400: 'validation_failed' }),
      },
    }),
    async (c) => c.json({ failed: await recoverHeldAgents(deps, actorOf(c)) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/runner/claim',
      tags,
      summary: 'Claim the next queued agent whose project has a free slot',
      middleware: [requireRunner()] as const,
      request: { body: jsonBody(Instance) },
      responses: {
        200: ok(Claim, 'the claimed agent with its credential (Cache-Control: no-store), or agent null'),
        ...orchErrors({ ...RUNNER_ERRORS, 400: 'validation_failed' }),
      },
    }),
    async (c) => {
      const { runner_instance } = c.req.valid('json');
      c.header('Cache-Control', 'no-store');
      const claimed = await claimNextAgent(deps, runner_instance, actorOf(c));
      if (!claimed) return c.json({ agent: null }, 200);
      return c.json(claimed, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/runner/agents/{id}/report',
      tags,
      summary: "Report an agent's progress: running, a cost increment, completed or failed",
      middleware: [requireRunner()] as const,
      request: { params: AgentIdParam, body: jsonBody(Report) },
      responses: {
        200: ok(z.object({ status: Agent.shape.status }), "the agent's status"),
        ...orchErrors({
          ...RUNNER_ERRORS,
          400: 'validation_failed',
          404: 'agent_not_found',
          409: 'agent_ended (stopped or killed meanwhile), agent_not_held',
        }),
      },
    }),
    async (c) => {
      const moved = await reportAgent(deps, c.req.valid('param').id, c.req.valid('json'), actorOf(c));
      return c.json({ status: moved.status }, 200);
    },
  );

  return app;
}
