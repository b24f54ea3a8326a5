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
import { agentSystemPrompt } from '../../../domain/orchestration/agents/templates.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { claimableAgents, heldAgentIds, type AgentRow } from '../../../projections/orchestration/agents.ts';
import { listMcpServers } from '../../../projections/orchestration/mcp-servers.ts';
import { projectById } from '../../../projections/orchestration/projects.ts';
import { userById } from '../../../projections/orchestration/users.ts';
import { guard } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok, orNull } from '../../shared/openapi.ts';
import { actorOf, unauthenticated } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { Agent, AgentIdParam } from '../agents/schemas.ts';
import { agentView, findAgent, moveAgent } from '../agents/commands.ts';
import { openMcpServer } from '../mcp-servers/env-seal.ts';
import { AUTH_ERRORS, orchErrors, orchRouter } from '../router.ts';
import { revealApiKey } from '../users/keys.ts';
import { withAdvisoryLock } from '../../../infra/db/advisory-lock.ts';

const tags = ['runner'];
/** Serialises claims across every process on this database. */
export const ORPHANED_REASON = 'runner_restarted: the runner stopped while the agent was running';
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

const Claim = z.object({
  agent: orNull(ClaimedAgent).openapi({ description: 'null when no queued agent has a free slot' }),
  system_prompt: z.string().optional(),
  credential: z.string().optional().openapi({ description: 'the agent\'s API key' }),
  project: z.object({ id: z.uuid(), name: z.string(), repo_path: z.string().nullable() }).optional(),
  mcp_servers: z.array(z.object({ name: z.string(), command: z.string(), args: z.array(z.string()), env: z.record(z.string(), z.string()), description: z.string().nullable() })).optional(),
}).openapi('RunnerClaim');

const Report = z.discriminatedUnion('event', [
  z.object({ event: z.literal('running'), runner_instance: z.string().min(1) }),
  z.object({ event: z.literal('cost'), cost_usd: z.number().min(0).max(1_000_000) }),
  z.object({ event: z.literal('completed'), runner_instance: z.string().min(1) }),
  z.object({ event: z.literal('failed'), runner_instance: z.string().min(1), reason: z.string().min(1).max(2000) }),
]).openapi('RunnerReport');

export function runnerRoutes(deps: OrchDeps) {
  const app = orchRouter();
  const now = () => deps.clock.now().toISOString();

  app.openapi(createRoute({
    method: 'post', path: '/api/v1/runner/recover', tags, summary: 'Fail whatever a runner held (called when the runner starts)',
    middleware: [requireRunner()] as const,
    request: { body: jsonBody(Instance) },
    responses: { 200: ok(z.object({ failed: z.array(z.uuid()) }), 'the agents failed'), ...orchErrors({ ...RUNNER_ERRORS, 400: 'validation_failed' }) },
  }), async (c) => {
    const failed: string[] = [];
    for (const id of await heldAgentIds(deps.db)) {
      const agent = await moveAgent(deps, id, { type: 'FailOrphaned', reason: ORPHANED_REASON, at: now() }, actorOf(c));
      if (agent.status === 'failed' && agent.status_reason === ORPHANED_REASON) failed.push(id);
    }
    return c.json({ failed }, 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/v1/runner/claim', tags, summary: 'Claim the next queued agent whose project has a free slot',
    middleware: [requireRunner()] as const,
    request: { body: jsonBody(Instance) },
    responses: { 200: ok(Claim, 'the claimed agent with its credential (Cache-Control: no-store), or agent null'), ...orchErrors({ ...RUNNER_ERRORS, 400: 'validation_failed' }) },
  }), async (c) => {
    const { runner_instance } = c.req.valid('json');
    c.header('Cache-Control', 'no-store');
    const claimed = await withClaimLock(deps, async () => {
      for (const candidate of await claimableAgents(deps.db, 5)) {
        try {
          return await moveAgent(deps, candidate.id, { type: 'ClaimAgent', runner_instance, at: now() }, actorOf(c));
        } catch (error) {
          // Stopped or killed between the read and the claim: try the next one.
          if (!(error instanceof DomainError && error.code === 'agent_not_queued')) throw error;
        }
      }
      return null;
    });
    if (!claimed) return c.json({ agent: null }, 200);
    return c.json(await claimPayload(deps, claimed), 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/v1/runner/agents/{id}/report', tags, summary: 'Report an agent\'s progress: running, a cost increment, completed or failed',
    middleware: [requireRunner()] as const,
    request: { params: AgentIdParam, body: jsonBody(Report) },
    responses: {
      200: ok(z.object({ status: Agent.shape.status }), 'the agent\'s status'),
      ...orchErrors({ ...RUNNER_ERRORS, 400: 'validation_failed', 404: 'agent_not_found', 409: 'agent_ended (stopped or killed meanwhile), agent_not_held' }),
    },
  }), async (c) => {
    const agent = await findAgent(deps, c.req.valid('param').id);
    const report = c.req.valid('json');
    const at = now();
    const moved = await moveAgent(deps, agent.id, report.event === 'cost' ? { type: 'RecordCost', cost_usd: report.cost_usd, at }
      : report.event === 'running' ? { type: 'StartAgent', runner_instance: report.runner_instance, at }
        : { type: 'FinishAgent', runner_instance: report.runner_instance, outcome: report.event, reason: report.event === 'failed' ? report.reason : null, at }, actorOf(c));
    return c.json({ status: moved.status }, 200);
  });

  return app;
}

/** One claim at a time across instances, so two runners never take the same agent. */
const withClaimLock = <T>(deps: Pick<OrchDeps, 'db'>, work: () => Promise<T>) => withAdvisoryLock(deps.db, 'orchard:runner-claim', work);

async function claimPayload(deps: OrchDeps, agent: AgentRow) {
  const [project, credential, servers] = await Promise.all([projectById(deps.db, agent.project_id), userById(deps.db, agent.id), listMcpServers(deps.db)]);
  if (!project || !credential) throw new Error(`claimed agent ${agent.id} has no project or credential`);
  return {
    agent: { ...agentView(agent), initial_prompt: agent.initial_prompt },
    system_prompt: agentSystemPrompt({ template: agent.template, custom_agent_md: agent.custom_agent_md, name: agent.name, role: agent.role, project_name: project.name }),
    credential: revealApiKey(deps.sealKey, credential.id, credential.api_key_sealed),
    project: { id: project.id, name: project.name, repo_path: project.repo_path },
    mcp_servers: servers.map((s) => openMcpServer(deps.sealKey, s)),
  };
}
