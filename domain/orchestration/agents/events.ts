// The agents slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export const AGENT_ROLES = [
  'coordinator',
  'builder',
  'reviewer',
  'auditor',
  'security',
  'researcher',
  'tester',
  'deliberator',
  'planner',
  'custom',
] as const;

export type AgentRole = (typeof AGENT_ROLES)[number];

export const AGENT_TEMPLATES = ['coordinator', 'builder', 'custom'] as const;

export type AgentTemplate = (typeof AGENT_TEMPLATES)[number];

export const AGENT_STATUSES = ['queued', 'claimed', 'running', 'completed', 'failed', 'stopped', 'killed'] as const;

export type AgentStatus = (typeof AGENT_STATUSES)[number];

export type AgentSpec = {
  name: string;
  role: AgentRole;
  project_id: string;
  template: AgentTemplate;
  custom_agent_md: string | null;
  initial_prompt: string | null;
  model: string;
  base_branch: string;
  persistent: boolean;
};

export type AgentEvent =
  | DomainEvent<'AgentSpawned', AgentSpec & { agent_id: string; created_by_user: string | null; at: string }>
  | DomainEvent<'AgentClaimed', { agent_id: string; runner_instance: string; at: string }>
  | DomainEvent<'AgentStarted', { agent_id: string; at: string }>
  | DomainEvent<'AgentCostRecorded', { agent_id: string; cost_usd: number; at: string }>
  | DomainEvent<'AgentCompleted', { agent_id: string; from: AgentStatus; at: string }>
  | DomainEvent<'AgentFailed', { agent_id: string; from: AgentStatus; reason: string; at: string }>
  | DomainEvent<'AgentStopped', { agent_id: string; from: AgentStatus; by: string | null; at: string }>
  | DomainEvent<'AgentKilled', { agent_id: string; from: AgentStatus; by: string | null; at: string }>;

export const AGENT_EVENT_TYPES = eventTypes<AgentEvent>()([
  'AgentSpawned',
  'AgentClaimed',
  'AgentStarted',
  'AgentCostRecorded',
  'AgentCompleted',
  'AgentFailed',
  'AgentStopped',
  'AgentKilled',
]);
