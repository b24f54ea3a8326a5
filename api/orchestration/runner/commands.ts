// The runner's application layer (its moves go through the agents slice's moveAgent, the only
// caller of the command runner for agents): recover what a restarted runner held, claim the next
// queued agent (one claim at a time across instances), and a progress report. The read-model
// lookups each decision needs are made here, once; routes.ts only maps HTTP to these.

import { agentSystemPrompt } from '../../../domain/orchestration/agents/templates.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { withAdvisoryLock } from '../../../infra/db/advisory-lock.ts';
import { claimableAgents, heldAgentIds, type AgentRow } from '../../../projections/orchestration/agents.ts';
import { listMcpServers } from '../../../projections/orchestration/mcp-servers.ts';
import { projectById } from '../../../projections/orchestration/projects.ts';
import { userById } from '../../../projections/orchestration/users.ts';
import type { OrchDeps } from '../deps.ts';
import { agentView, findAgent, moveAgent } from '../agents/commands.ts';
import { openMcpServer } from '../mcp-servers/env-seal.ts';
import { revealApiKey } from '../users/keys.ts';

export const ORPHANED_REASON = 'runner_restarted: the runner stopped while the agent was running';

/** Fail whatever a runner held (claimed or running); the ids of the agents failed. */
export async function recoverHeldAgents(deps: OrchDeps, context: CommandContext): Promise<string[]> {
  const failed: string[] = [];
  for (const id of await heldAgentIds(deps.db)) {
    const agent = await moveAgent(
      deps,
      id,
      { type: 'FailOrphaned', reason: ORPHANED_REASON, at: deps.clock.now().toISOString() },
      context,
    );
    if (agent.status === 'failed' && agent.status_reason === ORPHANED_REASON) failed.push(id);
  }
  return failed;
}

/** One claim at a time across instances, so two runners never take the same agent. */
const withClaimLock = <T>(deps: Pick<OrchDeps, 'db'>, work: () => Promise<T>) =>
  withAdvisoryLock(deps.db, 'orchard:runner-claim', work);

/** Claim the oldest queued agent whose project has a free slot: the claim's payload, or null when there is none. */
export async function claimNextAgent(deps: OrchDeps, runnerInstance: string, context: CommandContext) {
  const claimed = await withClaimLock(deps, async () => {
    for (const candidate of await claimableAgents(deps.db, 5)) {
      try {
        return await moveAgent(
          deps,
          candidate.id,
          { type: 'ClaimAgent', runner_instance: runnerInstance, at: deps.clock.now().toISOString() },
          context,
        );
      } catch (error) {
        // Stopped or killed between the read and the claim: try the next one.
        if (!(error instanceof DomainError && error.code === 'agent_not_queued')) throw error;
      }
    }
    return null;
  });
  return claimed && claimPayload(deps, claimed);
}

async function claimPayload(deps: OrchDeps, agent: AgentRow) {
  const [project, credential, servers] = await Promise.all([
    projectById(deps.db, agent.project_id),
    userById(deps.db, agent.id),
    listMcpServers(deps.db),
  ]);
  if (!project || !credential) throw new Error(`claimed agent ${agent.id} has no project or credential`);
  return {
    agent: { ...agentView(agent), initial_prompt: agent.initial_prompt },
    system_prompt: agentSystemPrompt({
      template: agent.template,
      custom_agent_md: agent.custom_agent_md,
      name: agent.name,
      role: agent.role,
      project_name: project.name,
    }),
    credential: revealApiKey(deps.sealKey, credential.id, credential.api_key_sealed),
    project: { id: project.id, name: project.name, repo_path: project.repo_path },
    mcp_servers: servers.map((s) => openMcpServer(deps.sealKey, s)),
  };
}

export type RunnerReport =
  | { event: 'running'; runner_instance: string }
  | { event: 'cost'; cost_usd: number }
  | { event: 'completed'; runner_instance: string }
  | { event: 'failed'; runner_instance: string; reason: string };

/** A progress report on an agent: 404 `agent_not_found`; answers the agent as moved. */
export async function reportAgent(
  deps: OrchDeps,
  id: string,
  report: RunnerReport,
  context: CommandContext,
): Promise<AgentRow> {
  const agent = await findAgent(deps, id);
  const at = deps.clock.now().toISOString();
  return moveAgent(
    deps,
    agent.id,
    report.event === 'cost'
      ? { type: 'RecordCost', cost_usd: report.cost_usd, at }
      : report.event === 'running'
        ? { type: 'StartAgent', runner_instance: report.runner_instance, at }
        : {
            type: 'FinishAgent',
            runner_instance: report.runner_instance,
            outcome: report.event,
            reason: report.event === 'failed' ? report.reason : null,
            at,
          },
    context,
  );
}
