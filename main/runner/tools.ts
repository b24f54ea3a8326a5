// The tools an agent's model may call: list, create and update the tasks of its project, each
// through the orchestration API with the agent's own credential (so a task it creates carries
// `created_by` = the agent). A tool's answer goes back to the model as JSON text; a refusal is
// an answer too (the model may correct itself), never a crash of the loop.

import type { ToolCall, ToolSpec } from '../../infra/llm/index.ts';
import type { ApiClient } from './client.ts';

const STATUSES = ['backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled'];
const PRIORITIES = ['low', 'medium', 'high', 'critical'];

export const TASK_TOOLS: ToolSpec[] = [
  {
    name: 'list_tasks',
    description: 'List the tasks of your project, optionally of one status.',
    parameters: {
      type: 'object',
      properties: { status: { type: 'string', enum: STATUSES } },
      additionalProperties: false,
    },
  },
  {
    name: 'create_task',
    description: 'Create a task in your project.',
    parameters: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 500 },
        priority: { type: 'string', enum: PRIORITIES },
        description: { type: 'string' },
        status: { type: 'string', enum: STATUSES },
      },
      required: ['title', 'priority'],
      additionalProperties: false,
    },
  },
  {
    name: 'update_task',
    description: 'Change a task of your project: its status, title, priority or description.',
    parameters: {
      type: 'object',
      properties: {
        task_id: { type: 'string' },
        status: { type: 'string', enum: STATUSES },
        title: { type: 'string', minLength: 1, maxLength: 500 },
        priority: { type: 'string', enum: PRIORITIES },
        description: { type: 'string' },
      },
      required: ['task_id'],
      additionalProperties: false,
    },
  },
];

const pick = (args: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => args[k] !== undefined).map((k) => [k, args[k]]));

/** Run one tool call as the agent; the text answer for the model. */
export async function runTool(api: ApiClient, agentKey: string, projectId: string, call: ToolCall): Promise<string> {
  const args = call.arguments ?? {};
  let reply;
  switch (call.name) {
    case 'list_tasks': {
      const query = new URLSearchParams({ project_id: projectId, limit: '100' });
      if (typeof args.status === 'string') query.set('status', args.status);
      reply = await api.request('GET', `/api/v1/tasks?${query}`, { key: agentKey });
      if (reply.status === 200) {
        return JSON.stringify(
          reply.body.tasks.map((t: Record<string, unknown>) =>
            pick(t, ['id', 'title', 'status', 'priority', 'assigned_agent_id']),
          ),
        );
      }
      break;
    }
    case 'create_task':
      reply = await api.request('POST', '/api/v1/tasks', {
        key: agentKey,
        json: { project_id: projectId, ...pick(args, ['title', 'priority', 'description', 'status']) },
      });
      break;
    case 'update_task':
      if (typeof args.task_id !== 'string') return JSON.stringify({ error: 'task_id is required' });
      reply = await api.request('PATCH', `/api/v1/tasks/${encodeURIComponent(args.task_id)}`, {
        key: agentKey,
        json: pick(args, ['status', 'title', 'priority', 'description']),
      });
      break;
    default:
      return JSON.stringify({ error: `no tool named ${call.name}` });
  }
  return JSON.stringify(
    reply.status < 300 ? reply.body : { error: reply.body?.error ?? reply.status, message: reply.body?.message },
  );
}
