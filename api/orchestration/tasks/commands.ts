// The tasks slice's application layer (the only caller of the command runner for it): references
// checked against the read models (a reference that does not exist is a 400 naming the column, the
// spec's FK rule), and the commands. Authority over an existing task (who may change, delete or
// assign it) is decided here and only here: the routes only require the role that may call them.

import { randomUUID } from 'node:crypto';
import { taskDecider, taskNotFound } from '../../../domain/orchestration/tasks/decider.ts';
import type { TaskEditable, TaskPriority, TaskStatus } from '../../../domain/orchestration/tasks/events.ts';
import { taskStream } from '../../../domain/orchestration/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { agentById } from '../../../projections/orchestration/agents.ts';
import { projectById } from '../../../projections/orchestration/projects.ts';
import { taskById, taskStatuses, type TaskRow } from '../../../projections/orchestration/tasks.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { roleOf, type SignedIn } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';

type Deps = Pick<OrchDeps, 'db' | 'commands' | 'clock'>;

/** 400 for a reference to nothing, naming the column (`created_by must reference an existing agent`). */
export const badReference = (column: string, what: string) =>
  new ApiError(400, 'invalid_reference', `${column} must reference an existing ${what}`, { column });

export function taskView(t: TaskRow) {
  return {
    id: t.id,
    project_id: t.project_id,
    title: t.title,
    description: t.description,
    priority: t.priority as TaskPriority,
    status: t.status,
    directive_id: t.directive_id,
    parent_task_id: t.parent_task_id,
    branch_name: t.branch_name,
    created_by: t.created_by,
    created_by_user: t.created_by_user,
    assigned_agent_id: t.assigned_agent_id,
    metadata: t.metadata,
    depends_on: t.depends_on,
    created_at: t.created_at.toISOString(),
    updated_at: t.updated_at.toISOString(),
  };
}

export interface NewTask extends Partial<TaskEditable> {
  project_id: string;
  title: string;
  priority: TaskPriority;
  status?: TaskStatus;
  created_by?: string | null;
}

/** The task a request names (a UUID: its route checks the shape), from the read model; 404 `task_not_found`. */
export async function taskOf(deps: Pick<OrchDeps, 'db'>, id: string): Promise<TaskRow> {
  const task = await taskById(deps.db, id);
  if (!task) throw taskNotFound();
  return task;
}

export async function createTask(
  deps: Deps,
  principal: SignedIn,
  input: NewTask,
  context: CommandContext,
): Promise<TaskRow> {
  if (!(await projectById(deps.db, input.project_id))) throw badReference('project_id', 'project');
  if (input.parent_task_id && !(await taskById(deps.db, input.parent_task_id)))
    throw badReference('parent_task_id', 'task');
  // The creating agent: from the body only for an admin; otherwise the calling agent credential's agent, or none.
  let createdBy: string | null = null;
  if (roleOf(principal) === 'admin') {
    createdBy = input.created_by ?? null;
    if (createdBy && !(await agentById(deps.db, createdBy))) throw badReference('created_by', 'agent');
  } else if (principal.kind === 'agent') {
    createdBy = principal.user.id;
  }
  const id = randomUUID();
  await deps.commands.run(
    taskStream(id),
    taskDecider,
    {
      type: 'CreateTask',
      data: {
        task_id: id,
        project_id: input.project_id,
        title: input.title,
        description: input.description ?? null,
        priority: input.priority,
        status: input.status ?? 'backlog',
        directive_id: input.directive_id ?? null,
        parent_task_id: input.parent_task_id ?? null,
        branch_name: input.branch_name ?? null,
        created_by: createdBy,
        created_by_user: principal.user.id,
        metadata: input.metadata ?? {},
        depends_on: [],
      },
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return (await taskById(deps.db, id))!;
}

/**
 * Authority over a task (spec: "Tasks, projects, agents"): its creator account, the owner of its
 * project, an agent credential whose agent created it or works in its project, or an admin.
 */
async function hasAuthority(deps: Pick<OrchDeps, 'db'>, principal: SignedIn, task: TaskRow): Promise<boolean> {
  const id = principal.user.id;
  if (roleOf(principal) === 'admin' || task.created_by_user === id) return true;
  if (principal.kind === 'agent') {
    if (task.created_by === id) return true;
    const agent = await agentById(deps.db, id);
    if (agent?.project_id === task.project_id) return true;
  }
  const project = await projectById(deps.db, task.project_id);
  return project?.owner_id === id;
}

const noAuthority = () => new ApiError(403, 'task_authority_required', 'you have no authority over this task');

/** The task, once the caller's authority over it is established: 404 before 403, both before any other check. */
async function governed(deps: Pick<OrchDeps, 'db'>, principal: SignedIn, id: string): Promise<TaskRow> {
  const task = await taskOf(deps, id);
  if (!(await hasAuthority(deps, principal, task))) throw noAuthority();
  return task;
}

export async function updateTask(
  deps: Deps,
  principal: SignedIn,
  id: string,
  changes: Partial<TaskEditable> & { status?: TaskStatus },
  context: CommandContext,
): Promise<TaskRow> {
  const task = await governed(deps, principal, id);
  if (changes.parent_task_id) {
    if (changes.parent_task_id === task.id || !(await taskById(deps.db, changes.parent_task_id)))
      throw badReference('parent_task_id', 'task');
  }
  const dependency_statuses = changes.status === 'in_progress' ? await taskStatuses(deps.db, task.depends_on) : {};
  await deps.commands.run(
    taskStream(task.id),
    taskDecider,
    { type: 'UpdateTask', changes, dependency_statuses, at: deps.clock.now().toISOString() },
    context,
  );
  return (await taskById(deps.db, task.id))!;
}

export async function assignTask(
  deps: Deps,
  principal: SignedIn,
  id: string,
  agentId: string,
  context: CommandContext,
): Promise<TaskRow> {
  const task = await governed(deps, principal, id);
  if (!(await agentById(deps.db, agentId))) throw badReference('agent_id', 'agent');
  await deps.commands.run(
    taskStream(task.id),
    taskDecider,
    { type: 'AssignTask', agent_id: agentId, at: deps.clock.now().toISOString() },
    context,
  );
  return (await taskById(deps.db, task.id))!;
}

export async function deleteTask(deps: Deps, principal: SignedIn, id: string, context: CommandContext): Promise<void> {
  const task = await governed(deps, principal, id);
  await deps.commands.run(
    taskStream(task.id),
    taskDecider,
    { type: 'DeleteTask', at: deps.clock.now().toISOString() },
    context,
  );
}
