// The spawned agent aggregate (`orch.agent-<uuid>`). An agent's credential is an account-like keyed
// principal (the users slice) with the same id; this stream holds what the agent is and where it
// stands:
//
//   queued ──claim──▶ claimed ──start──▶ running ──finish──▶ completed | failed
//      └───────────────┴──────────────────┴──stop / kill──▶ stopped | killed
//   claimed | running ──the runner restarts (recover)──▶ failed (with a reason)
//
// The runner is the only writer of claim, start, cost and finish (the API checks that); stop
// and kill come from people. Status-changing events carry `from`, so read models that count by
// status (the cockpit) move a count without a lookup.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { AgentRole, AgentTemplate, AgentStatus, AgentSpec, AgentEvent } from './events.ts';

export const AGENT_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Statuses an agent never leaves; the cockpit counts every other one as configured. */
export const ENDED: readonly AgentStatus[] = ['completed', 'failed', 'stopped', 'killed'];
export const isEnded = (status: AgentStatus) => ENDED.includes(status);

/** The template an agent of this role gets when the spawn names none. */
export function templateOfRole(role: AgentRole): AgentTemplate {
  return role === 'coordinator' ? 'coordinator' : role === 'custom' ? 'custom' : 'builder';
}

export type AgentCommand =
  | { type: 'SpawnAgent'; agent_id: string; spec: AgentSpec; created_by_user: string | null; at: string }
  | { type: 'ClaimAgent'; runner_instance: string; at: string }
  | { type: 'StartAgent'; runner_instance: string; at: string }
  | { type: 'RecordCost'; cost_usd: number; at: string }
  | { type: 'FinishAgent'; runner_instance: string; outcome: 'completed' | 'failed'; reason: string | null; at: string }
  /** The runner restarted: whatever it held is failed, never left running. */
  | { type: 'FailOrphaned'; reason: string; at: string }
  | { type: 'StopAgent'; by: string | null; at: string }
  | { type: 'KillAgent'; by: string | null; at: string };

export type AgentState =
  { exists: false } | { exists: true; agent_id: string; status: AgentStatus; runner_instance: string | null };

function evolve(state: AgentState, event: AgentEvent): AgentState {
  if (event.type === 'AgentSpawned')
    return { exists: true, agent_id: event.data.agent_id, status: 'queued', runner_instance: null };
  if (!state.exists) return state;
  switch (event.type) {
    case 'AgentClaimed':
      return { ...state, status: 'claimed', runner_instance: event.data.runner_instance };
    case 'AgentStarted':
      return { ...state, status: 'running' };
    case 'AgentCostRecorded':
      return state;
    case 'AgentCompleted':
      return { ...state, status: 'completed' };
    case 'AgentFailed':
      return { ...state, status: 'failed' };
    case 'AgentStopped':
      return { ...state, status: 'stopped' };
    case 'AgentKilled':
      return { ...state, status: 'killed' };
  }
}

const ended = (status: AgentStatus) =>
  new DomainError('conflict', 'agent_ended', `the agent has already ended (${status})`, { status });

/** The one not-found of an agent, here and in the slice's commands. */
export const agentNotFound = () => new DomainError('not_found', 'agent_not_found', 'no such agent');

function decide(command: AgentCommand, state: AgentState): AgentEvent[] {
  if (command.type === 'SpawnAgent') {
    if (state.exists) throw new DomainError('conflict', 'agent_exists', 'agent already exists');
    return [
      {
        type: 'AgentSpawned',
        data: { agent_id: command.agent_id, ...command.spec, created_by_user: command.created_by_user, at: command.at },
      },
    ];
  }
  if (!state.exists) throw agentNotFound();
  const { agent_id, status } = state;
  const at = command.at;
  const heldBy = (instance: string) => {
    if (isEnded(status)) throw ended(status);
    if (state.runner_instance !== instance)
      throw new DomainError('conflict', 'agent_not_held', 'this runner does not hold the agent');
  };
  switch (command.type) {
    case 'ClaimAgent':
      if (status !== 'queued')
        throw new DomainError('conflict', 'agent_not_queued', `the agent is ${status}, not queued`, { status });
      return [{ type: 'AgentClaimed', data: { agent_id, runner_instance: command.runner_instance, at } }];
    case 'StartAgent':
      heldBy(command.runner_instance);
      return status === 'running' ? [] : [{ type: 'AgentStarted', data: { agent_id, at } }];
    case 'RecordCost':
      // Money spent before the runner noticed a kill was spent all the same: recorded in any state.
      return command.cost_usd > 0
        ? [{ type: 'AgentCostRecorded', data: { agent_id, cost_usd: command.cost_usd, at } }]
        : [];
    case 'FinishAgent':
      heldBy(command.runner_instance);
      return command.outcome === 'completed'
        ? [{ type: 'AgentCompleted', data: { agent_id, from: status, at } }]
        : [{ type: 'AgentFailed', data: { agent_id, from: status, reason: command.reason ?? 'failed', at } }];
    case 'FailOrphaned':
      if (status !== 'claimed' && status !== 'running') return [];
      return [{ type: 'AgentFailed', data: { agent_id, from: status, reason: command.reason, at } }];
    case 'StopAgent':
      if (status === 'stopped') return [];
      if (isEnded(status)) throw ended(status);
      return [{ type: 'AgentStopped', data: { agent_id, from: status, by: command.by, at } }];
    case 'KillAgent':
      if (status === 'killed') return [];
      if (isEnded(status)) throw ended(status);
      return [{ type: 'AgentKilled', data: { agent_id, from: status, by: command.by, at } }];
  }
}

export const agentDecider: Decider<AgentState, AgentCommand, AgentEvent> = {
  initialState: () => ({ exists: false }),
  evolve,
  decide,
};
