// The agents slice's application layer (the only caller of the command runner for it): spawning
// (the agent's credential, a keyed principal of kind agent with the agent's id, then the agent
// itself), stopping and killing (authority over the agent decided here, and only here), the
// runner's moves, and a chat turn's cost. When an agent ends, its credential is deactivated, so a
// stopped or killed agent can no longer act.

import { randomUUID } from 'node:crypto';
import {
  agentDecider,
  agentNotFound,
  isEnded,
  templateOfRole,
  type AgentCommand,
} from '../../../domain/orchestration/agents/decider.ts';
import type { AgentRole, AgentTemplate } from '../../../domain/orchestration/agents/events.ts';
import { agentStream, userStream } from '../../../domain/orchestration/streams.ts';
import { agentSystemPrompt } from '../../../domain/orchestration/agents/templates.ts';
import { DEFAULT_REPLY_MODE, PROFILE_DEFAULTS } from '../../../domain/orchestration/profiles/decider.ts';
import { userDecider } from '../../../domain/orchestration/users/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { agentById, type AgentRow } from '../../../projections/orchestration/agents.ts';
import { projectById } from '../../../projections/orchestration/projects.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { isUuid } from '../../shared/params.ts';
import type { OrchDeps } from '../deps.ts';
import { roleOf, type SignedIn } from '../auth/guards.ts';
import { runTurn, type PipelineDeps, type TurnResult } from '../agent-chat/commands.ts';
import { badReference } from '../tasks/commands.ts';
import { createAccount, refuseRotationAttempt, rotateKey, type RotationAttempt } from '../users/commands.ts';

type Deps = Pick<OrchDeps, 'db' | 'commands' | 'clock' | 'sealKey' | 'config'>;

export function agentView(a: AgentRow) {
  return {
    id: a.id,
    name: a.name,
    role: a.role,
    project_id: a.project_id,
    template: a.template,
    model: a.model,
    base_branch: a.base_branch,
    persistent: a.persistent,
    status: a.status,
    status_reason: a.status_reason,
    total_cost_usd: a.total_cost_usd,
    created_by_user: a.created_by_user,
    created_at: a.created_at.toISOString(),
    started_at: a.started_at?.toISOString() ?? null,
    ended_at: a.ended_at?.toISOString() ?? null,
  };
}

/** The agent a request names: 404 `agent_not_found` (also a malformed id: the runner's report route takes any value). */
export async function findAgent(deps: Pick<OrchDeps, 'db'>, id: string): Promise<AgentRow> {
  const agent = isUuid(id) ? await agentById(deps.db, id) : null;
  if (!agent) throw agentNotFound();
  return agent;
}

export interface SpawnInput {
  name: string;
  role: AgentRole;
  project_id: string;
  initial_prompt?: string;
  template?: AgentTemplate;
  custom_agent_md?: string;
  model?: string;
  base_branch?: string;
  persistent?: boolean;
}

export async function spawnAgent(
  deps: Deps,
  input: SpawnInput,
  callerId: string,
  context: CommandContext,
): Promise<AgentRow> {
  const template = input.template ?? templateOfRole(input.role);
  if (template === 'custom' && !input.custom_agent_md)
    throw new ApiError(400, 'validation_failed', 'custom_agent_md: required with template custom');
  if (template !== 'custom' && input.custom_agent_md)
    throw new ApiError(400, 'validation_failed', 'custom_agent_md: only with template custom');
  if (!(await projectById(deps.db, input.project_id))) throw badReference('project_id', 'project');
  const id = randomUUID();
  // The credential first: an agent never exists without one. Its key is sealed at rest and
  // handed only to the runner that claims the agent; spawn never returns it.
  await createAccount(
    deps,
    {
      username: `agent-${id}`,
      email: `agent-${id}@agents.invalid`,
      role: 'user',
      auth_source: 'agent',
      principal_type: 'agent',
    },
    context,
    undefined,
    id,
  );
  await deps.commands.run(
    agentStream(id),
    agentDecider,
    {
      type: 'SpawnAgent',
      agent_id: id,
      created_by_user: callerId,
      at: deps.clock.now().toISOString(),
      spec: {
        name: input.name,
        role: input.role,
        project_id: input.project_id,
        template,
        custom_agent_md: input.custom_agent_md ?? null,
        initial_prompt: input.initial_prompt ?? null,
        model: input.model ?? deps.config.llmModel ?? 'local',
        base_branch: input.base_branch ?? 'main',
        persistent: input.persistent ?? false,
      },
    },
    context,
  );
  return (await agentById(deps.db, id))!;
}

/** Run a command on the agent's stream; when the agent ends by it, deactivate its credential. */
export async function moveAgent(
  deps: Deps,
  agentId: string,
  command: AgentCommand,
  context: CommandContext,
): Promise<AgentRow> {
  const { state } = await deps.commands.run(agentStream(agentId), agentDecider, command, context);
  if (state.exists && isEnded(state.status)) {
    await deps.commands.run(
      userStream(agentId),
      userDecider,
      { type: 'SetActive', is_active: false, by: context.actor.id, at: deps.clock.now().toISOString() },
      context,
    );
  }
  return (await agentById(deps.db, agentId))!;
}

/**
 * Stop or kill an agent, as the caller: 404 `agent_not_found`, then 403 `agent_authority_required`
 * unless the caller is its project's owner, its spawner or an admin.
 */
export async function endAgent(
  deps: Deps,
  principal: SignedIn,
  id: string,
  type: 'StopAgent' | 'KillAgent',
  context: CommandContext,
): Promise<AgentRow> {
  const agent = await findAgent(deps, id);
  const caller = principal.user.id;
  const authorised =
    roleOf(principal) === 'admin' ||
    agent.created_by_user === caller ||
    (await projectById(deps.db, agent.project_id))?.owner_id === caller;
  if (!authorised)
    throw new ApiError(
      403,
      'agent_authority_required',
      "only the project's owner, the agent's spawner or an admin can do this",
    );
  return moveAgent(deps, agent.id, { type, by: caller, at: deps.clock.now().toISOString() }, context);
}

/** Add a chat turn's cost to the agent's total (nothing to record for a free turn). */
export async function recordAgentCost(
  deps: Pick<OrchDeps, 'commands' | 'clock'>,
  agentId: string,
  costCents: number,
  context: CommandContext,
): Promise<void> {
  if (costCents <= 0) return;
  await deps.commands.run(
    agentStream(agentId),
    agentDecider,
    { type: 'RecordCost', cost_usd: costCents / 100, at: deps.clock.now().toISOString() },
    context,
  );
}

/**
 * Rotate an agent's credential (admin route, interactive session): refused and recorded like an
 * account's rotation (users/commands.ts), `api_key_rotation_not_found` for an unknown agent.
 */
export async function rotateAgentCredential(
  deps: Deps,
  attempt: RotationAttempt,
  context: CommandContext,
): Promise<{ agent: AgentRow; apiKey: string; rotatedAt: string }> {
  if (attempt.refused) return refuseRotationAttempt(deps, attempt, attempt.refused, context);
  const agent = attempt.target_user_id ? await agentById(deps.db, attempt.target_user_id) : null;
  if (!agent) return refuseRotationAttempt(deps, attempt, 'api_key_rotation_not_found', context);
  const { apiKey, rotatedAt } = await rotateKey(deps, agent.id, 'admin', context);
  return { agent, apiKey, rotatedAt };
}

/** The profile the pipeline sees for an agent: the agent's id, name, model and template prompt, the default limits. */
function agentAsProfile(agent: AgentRow, projectName: string): ProfileRow {
  return {
    ...PROFILE_DEFAULTS,
    id: agent.id,
    slug: `agent-${agent.name.toLowerCase()}`,
    name: agent.name,
    model: agent.model,
    system_prompt: agentSystemPrompt({
      template: agent.template,
      custom_agent_md: agent.custom_agent_md,
      name: agent.name,
      role: agent.role,
      project_name: projectName,
    }),
    channel_reply_mode: DEFAULT_REPLY_MODE,
    integrations: {},
    created_at: agent.created_at,
    updated_at: agent.created_at,
  };
}

/**
 * One chat turn of an account with a spawned agent, through the chat pipeline (the agent stands
 * in for a profile): 404 `agent_not_found` first; the turn's cost is added to the agent's total.
 */
export async function chatWithAgent(
  deps: Deps & PipelineDeps,
  agentId: string,
  userId: string,
  body: { message: string; conversation_id: string | null },
  context: CommandContext,
): Promise<TurnResult> {
  const agent = await findAgent(deps, agentId);
  const project = await projectById(deps.db, agent.project_id);
  const result = await runTurn(deps, {
    surface: 'private',
    kind: 'private',
    clientLimit: null,
    caller: `account:${userId}`,
    profile: async () => agentAsProfile(agent, project?.name ?? ''),
    owner: { kind: 'account', id: userId },
    visitorId: null,
    conversationId: body.conversation_id,
    message: body.message,
    maxChars: deps.config.publicChat.maxChars,
    context,
  });
  await recordAgentCost(deps, agent.id, result.cost_cents, context);
  return result;
}
