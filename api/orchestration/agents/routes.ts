// Agents (spec: "Agent (spawn)", "Agent status"): spawn (role user or higher; 201 once the record
// exists, `queued`, which does not mean a runner executes it), list, read, and stop or kill (the
// project's owner, the spawner or an admin). Chat with an agent is in chat.ts, the credential
// rotation in credential.ts, the runner's own routes under api/orchestration/runner. Spawn, list,
// read, stop and kill are mirrored under `/api/...` for the web console's browser sessions.

import { createRoute } from '@hono/zod-openapi';
import { listAgents } from '../../../projections/orchestration/agents.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { actorOf, principalUser, requireKey, requireRole, signedIn } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { Agent, AgentUuidParam, AgentListQuery, AgentPage, SpawnBody } from './schemas.ts';
import { agentView, endAgent, findAgent, spawnAgent } from './commands.ts';

const tags = ['agents'];
export const AGENTS_PAGE = { defaultLimit: 50, maxLimit: 200 };

export function agentRoutes(deps: OrchDeps) {
  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/spawn',
      tags,
      summary: 'Spawn an agent in a project (queued for the runner)',
      description:
        "Mints the agent's credential (sealed at rest, handed only to the runner that claims the agent; never returned here).",
      middleware: [requireRole('user')] as const,
      request: { body: jsonBody(SpawnBody) },
      responses: {
        201: ok(Agent, 'the agent record, status queued'),
        ...orchErrors({
          ...AUTH_ERRORS,
          400: 'validation_failed, or invalid_reference (project_id)',
          403: 'insufficient_role (readonly)',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => c.json(agentView(await spawnAgent(deps, c.req.valid('json'), principalUser(c).id, actorOf(c))), 201),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agents',
      tags,
      summary: 'Agents, oldest first, optionally of one project',
      middleware: [requireKey()] as const,
      request: { query: AgentListQuery.extend(pageQuery(AGENTS_PAGE).shape) },
      responses: {
        200: ok(AgentPage, 'a page of agents'),
        ...orchErrors({ ...AUTH_ERRORS, 400: 'validation_failed (a malformed project_id)' }),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const { rows, total } = await listAgents(deps.db, { project_id: query.project_id }, query.limit, query.offset);
      return c.json(page('agents', rows.map(agentView), total, query), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agents/{id}',
      tags,
      summary: 'One agent',
      middleware: [requireKey()] as const,
      request: { params: AgentUuidParam },
      responses: { 200: ok(Agent, 'the agent'), ...orchErrors({ ...AUTH_ERRORS, 404: 'agent_not_found' }) },
    }),
    async (c) => c.json(agentView(await findAgent(deps, c.req.valid('param').id)), 200),
  );

  for (const [verb, type, status] of [
    ['stop', 'StopAgent', 'stopped'],
    ['kill', 'KillAgent', 'killed'],
  ] as const) {
    withWebUiMirror(
      app,
      createRoute({
        method: 'post',
        path: `/api/v1/agents/{id}/${verb}`,
        tags,
        summary: `Move the agent to ${status} (its runner abandons it)`,
        description: `The project's owner, the spawner or an admin. Repeating it answers the agent as it is; an agent that already ended otherwise is 409 \`agent_ended\`.`,
        middleware: [requireKey()] as const,
        request: { params: AgentUuidParam },
        responses: {
          200: ok(Agent, `the agent, ${status}`),
          ...orchErrors({
            ...AUTH_ERRORS,
            403: 'agent_authority_required',
            404: 'agent_not_found',
            409: 'agent_ended',
          }),
        },
      }),
      async (c) => {
        return c.json(agentView(await endAgent(deps, signedIn(c), c.req.valid('param').id, type, actorOf(c))), 200);
      },
    );
  }

  return app;
}
