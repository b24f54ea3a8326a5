// Request and response schemas of the agents slice (spec: "Agent (spawn)").

import { z } from '@hono/zod-openapi';
import { uuidParams } from '../../shared/params.ts';
import { AGENT_NAME_PATTERN } from '../../../domain/orchestration/agents/decider.ts';
import { AGENT_ROLES, AGENT_STATUSES, AGENT_TEMPLATES } from '../../../domain/orchestration/agents/events.ts';
import { pageFields } from '../../shared/pagination.ts';

export const SpawnBody = z
  .object({
    name: z
      .string()
      .regex(AGENT_NAME_PATTERN, 'name must be 1-64 letters, digits, dashes or underscores')
      .openapi({ example: 'builder-1' }),
    role: z.enum(AGENT_ROLES),
    project_id: z.uuid(),
    initial_prompt: z.string().max(100_000).optional(),
    template: z
      .enum(AGENT_TEMPLATES)
      .optional()
      .openapi({ description: 'default: coordinator for the coordinator role, custom for custom, builder otherwise' }),
    custom_agent_md: z
      .string()
      .min(1)
      .max(100_000)
      .optional()
      .openapi({ description: 'the instructions of template custom (required with it, refused without it)' }),
    model: z.string().trim().min(1).max(200).optional().openapi({ description: 'default ORCH_LLM_MODEL, else local' }),
    base_branch: z
      .string()
      .regex(/^[A-Za-z0-9._/-]{1,200}$/, 'base_branch must be a branch name')
      .refine((b) => !b.includes('..') && !b.startsWith('-'), 'base_branch must be a branch name')
      .optional()
      .openapi({ description: 'default main' }),
    persistent: z
      .boolean()
      .optional()
      .openapi({ description: 'keep the working directory when the agent ends (default false)' }),
  })
  .openapi('SpawnRequest');

export const Agent = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(AGENT_ROLES),
    project_id: z.uuid(),
    template: z.enum(AGENT_TEMPLATES),
    model: z.string(),
    base_branch: z.string(),
    persistent: z.boolean(),
    status: z.enum(AGENT_STATUSES),
    status_reason: z.string().nullable().openapi({ description: 'why a failed agent failed' }),
    total_cost_usd: z.number(),
    created_by_user: z.uuid().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
  })
  .openapi('Agent');

export const AgentPage = z.object({ agents: z.array(Agent), ...pageFields }).openapi('AgentPage');
export const AgentListQuery = z.object({ project_id: z.uuid().optional() });
/** The agent routes' id: a UUID (declareRoute answers 404 `agent_not_found` for any other value). */
export const AgentUuidParam = uuidParams('id');
/** Any value: the runner's report and the credential rotation answer (and record) a malformed id themselves. */
export const AgentIdParam = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: '3f1c2a8e-0000-4000-8000-000000000000' }),
});

export const CredentialRotation = z
  .object({
    agent_id: z.uuid(),
    api_key: z.string(),
    rotated_at: z.string(),
    message: z.string(),
  })
  .openapi('AgentCredentialRotation');
