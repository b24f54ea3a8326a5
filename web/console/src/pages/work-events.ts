// Log events from /ws applied to the rows the pages show, as the server's projections apply them
// (the event names and fields are the domain's, snake_case like the API's). Folding the event
// itself, rather than reading the row again, keeps a page from racing the projection: the socket
// may deliver an event before the read model has it.

import type { LogEvent } from '../live.ts';
import { streamId } from '../live.ts';
import type { Agent, Project, Task, TaskStatus } from './work.ts';

type Data = Record<string, unknown>;
const TASK_EDITABLE = [
  'title',
  'description',
  'priority',
  'directive_id',
  'parent_task_id',
  'branch_name',
  'metadata',
] as const;

/** The project's tasks after a task event (other projects' events leave them as they are). */
export function applyTaskEvent(tasks: Task[], event: LogEvent, projectId: string): Task[] {
  const id = streamId(event.stream, 'orch.task');
  if (!id) return tasks;
  const d = event.data as Data;
  const at = String(d.at ?? event.at);
  const change = (patch: (t: Task) => Task) => tasks.map((t) => (t.id === id ? patch(t) : t));
  switch (event.type) {
    case 'TaskCreated': {
      if (d.project_id !== projectId || tasks.some((t) => t.id === id)) return tasks;
      const task: Task = {
        id,
        project_id: projectId,
        title: String(d.title),
        description: (d.description as string | null) ?? null,
        priority: d.priority as Task['priority'],
        status: d.status as TaskStatus,
        directive_id: (d.directive_id as string | null) ?? null,
        parent_task_id: (d.parent_task_id as string | null) ?? null,
        branch_name: (d.branch_name as string | null) ?? null,
        created_by: (d.created_by as string | null) ?? null,
        created_by_user: (d.created_by_user as string | null) ?? null,
        assigned_agent_id: null,
        metadata: (d.metadata as Task['metadata']) ?? {},
        depends_on: (d.depends_on as string[]) ?? [],
        created_at: at,
        updated_at: at,
      };
      return [...tasks, task];
    }
    case 'TaskUpdated':
      return change((t) => {
        const next: Record<string, unknown> = { ...t, updated_at: at };
        for (const field of TASK_EDITABLE) if (field in d) next[field] = d[field];
        return next as Task;
      });
    case 'TaskStatusChanged':
      return change((t) => ({ ...t, status: d.to as TaskStatus, updated_at: at }));
    case 'TaskAssigned':
      return change((t) => ({ ...t, assigned_agent_id: String(d.agent_id), updated_at: at }));
    case 'TaskDeleted':
      return tasks.filter((t) => t.id !== id);
    default:
      return tasks;
  }
}

const AGENT_STATUS: Record<string, Agent['status']> = {
  AgentClaimed: 'claimed',
  AgentStarted: 'running',
  AgentCompleted: 'completed',
  AgentFailed: 'failed',
  AgentStopped: 'stopped',
  AgentKilled: 'killed',
};

/** The agents after an agent event. */
export function applyAgentEvent(agents: Agent[], event: LogEvent): Agent[] {
  const id = streamId(event.stream, 'orch.agent');
  if (!id) return agents;
  const d = event.data as Data;
  const at = String(d.at ?? event.at);
  if (event.type === 'AgentSpawned') {
    if (agents.some((a) => a.id === id)) return agents;
    return [
      ...agents,
      {
        id,
        name: String(d.name),
        role: d.role as Agent['role'],
        project_id: String(d.project_id),
        template: d.template as Agent['template'],
        model: String(d.model),
        base_branch: String(d.base_branch),
        persistent: d.persistent === true,
        status: 'queued',
        status_reason: null,
        total_cost_usd: 0,
        created_by_user: (d.created_by_user as string | null) ?? null,
        created_at: at,
        started_at: null,
        ended_at: null,
      },
    ];
  }
  return agents.map((a) => {
    if (a.id !== id) return a;
    if (event.type === 'AgentCostRecorded') return { ...a, total_cost_usd: a.total_cost_usd + Number(d.cost_usd ?? 0) };
    const status = AGENT_STATUS[event.type];
    if (!status) return a;
    const ended = status !== 'claimed' && status !== 'running';
    return {
      ...a,
      status,
      status_reason: event.type === 'AgentFailed' ? String(d.reason ?? 'failed') : a.status_reason,
      started_at: status === 'running' ? (a.started_at ?? at) : a.started_at,
      ended_at: ended ? at : a.ended_at,
    };
  });
}

/** The projects after a project event. */
export function applyProjectEvent(projects: Project[], event: LogEvent): Project[] {
  const id = streamId(event.stream, 'orch.project');
  if (!id) return projects;
  const d = event.data as Data;
  const at = String(d.at ?? event.at);
  if (event.type === 'ProjectCreated') {
    if (projects.some((p) => p.id === id)) return projects;
    return [
      ...projects,
      {
        id,
        name: String(d.name),
        repo_path: (d.repo_path as string | null | undefined) ?? null,
        max_concurrent_agents: Number(d.max_concurrent_agents),
        owner_id: String(d.owner_id),
        created_at: at,
        updated_at: at,
      },
    ];
  }
  if (event.type === 'ProjectUpdated') {
    return projects.map((p) =>
      p.id !== id
        ? p
        : {
            ...p,
            updated_at: at,
            ...('name' in d ? { name: String(d.name) } : {}),
            ...('max_concurrent_agents' in d ? { max_concurrent_agents: Number(d.max_concurrent_agents) } : {}),
            ...('repo_path' in d ? { repo_path: (d.repo_path as string | null) ?? null } : {}),
          },
    );
  }
  return projects;
}
