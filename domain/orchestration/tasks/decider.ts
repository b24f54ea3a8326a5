// The task aggregate (`orch.task-<uuid>`). Every change is an event on the task's stream. References
// (project, parent task, creating agent, assignee) are checked by the use case against the read
// models before the command; the status rule of the spec ("Task status": `in_progress` is refused
// while a dependency is incomplete, naming the blockers) is decided here, from the dependencies'
// statuses the command carries.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { TaskStatus, TaskEditable, TaskCreatedData, TaskEvent } from './events.ts';

export const TITLE_MAX = 500;

export type TaskCommand =
  | { type: 'CreateTask'; data: Omit<TaskCreatedData, 'at'>; at: string }
  | {
      type: 'UpdateTask';
      changes: Partial<TaskEditable> & { status?: TaskStatus };
      /** Status of each of the task's dependencies now (a missing one counts as incomplete). */
      dependency_statuses: Record<string, TaskStatus>;
      at: string;
    }
  | { type: 'AssignTask'; agent_id: string; at: string }
  | { type: 'DeleteTask'; at: string };

export type TaskState =
  | { exists: false; deleted: boolean }
  | ({ exists: true; deleted: false } & Omit<TaskCreatedData, 'at'> & { assigned_agent_id: string | null });

const EDITABLE = [
  'title',
  'description',
  'priority',
  'directive_id',
  'parent_task_id',
  'branch_name',
  'metadata',
] as const;

function evolve(state: TaskState, event: TaskEvent): TaskState {
  switch (event.type) {
    case 'TaskCreated': {
      const { at: _at, ...data } = event.data;
      return { exists: true, deleted: false, ...data, assigned_agent_id: null };
    }
    case 'TaskUpdated': {
      if (!state.exists) return state;
      const { task_id: _id, at: _at, ...changes } = event.data;
      return { ...state, ...changes };
    }
    case 'TaskStatusChanged':
      return state.exists ? { ...state, status: event.data.to } : state;
    case 'TaskAssigned':
      return state.exists ? { ...state, assigned_agent_id: event.data.agent_id } : state;
    case 'TaskDeleted':
      return { exists: false, deleted: true };
  }
}

/** The one not-found of a task, here and in the slice's commands. */
export const taskNotFound = () => new DomainError('not_found', 'task_not_found', 'no such task');
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function decide(command: TaskCommand, state: TaskState): TaskEvent[] {
  if (command.type === 'CreateTask') {
    if (state.exists || state.deleted) throw new DomainError('conflict', 'task_exists', 'task already exists');
    return [{ type: 'TaskCreated', data: { ...command.data, at: command.at } }];
  }
  if (!state.exists) throw taskNotFound();
  switch (command.type) {
    case 'UpdateTask': {
      const { status, ...fields } = command.changes;
      const changed: Partial<TaskEditable> = {};
      for (const key of EDITABLE) {
        if (fields[key] !== undefined && !same(fields[key], state[key]))
          (changed as Record<string, unknown>)[key] = fields[key];
      }
      const events: TaskEvent[] = [];
      if (Object.keys(changed).length)
        events.push({ type: 'TaskUpdated', data: { task_id: state.task_id, ...changed, at: command.at } });
      if (status !== undefined && status !== state.status) {
        if (status === 'in_progress') {
          const blockers = state.depends_on.filter((id) => command.dependency_statuses[id] !== 'done');
          if (blockers.length) {
            throw new DomainError(
              'conflict',
              'dependencies_incomplete',
              `task has incomplete dependencies: ${blockers.join(', ')}`,
              { blockers },
            );
          }
        }
        events.push({
          type: 'TaskStatusChanged',
          data: {
            task_id: state.task_id,
            project_id: state.project_id,
            from: state.status,
            to: status,
            at: command.at,
          },
        });
      }
      return events;
    }
    case 'AssignTask':
      if (state.assigned_agent_id === command.agent_id) return [];
      return [{ type: 'TaskAssigned', data: { task_id: state.task_id, agent_id: command.agent_id, at: command.at } }];
    case 'DeleteTask':
      return [
        {
          type: 'TaskDeleted',
          data: { task_id: state.task_id, project_id: state.project_id, status: state.status, at: command.at },
        },
      ];
  }
}

export const taskDecider: Decider<TaskState, TaskCommand, TaskEvent> = {
  initialState: () => ({ exists: false, deleted: false }),
  evolve,
  decide,
};
