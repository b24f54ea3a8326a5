// The tasks slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export const TASK_STATUSES = ['backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled'] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TASK_PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;

export type TaskPriority = (typeof TASK_PRIORITIES)[number];

/** The fields a partial update may change (status apart: it has its own event). */
export type TaskEditable = {
  title: string;
  description: string | null;
  priority: TaskPriority;
  directive_id: string | null;
  parent_task_id: string | null;
  branch_name: string | null;
  metadata: Record<string, unknown>;
};

export type TaskCreatedData = TaskEditable & {
  task_id: string;
  project_id: string;
  status: TaskStatus;
  created_by: string | null;
  created_by_user: string | null;
  depends_on: string[];
  at: string;
};

export type TaskEvent =
  | DomainEvent<'TaskCreated', TaskCreatedData>
  | DomainEvent<'TaskUpdated', Partial<TaskEditable> & { task_id: string; at: string }>
  /** `from` lets read models that count by status (the cockpit) move one count to another. */
  | DomainEvent<
      'TaskStatusChanged',
      { task_id: string; project_id: string; from: TaskStatus; to: TaskStatus; at: string }
    >
  | DomainEvent<'TaskAssigned', { task_id: string; agent_id: string; at: string }>
  | DomainEvent<'TaskDeleted', { task_id: string; project_id: string; status: TaskStatus; at: string }>;

export const TASK_EVENT_TYPES = eventTypes<TaskEvent>()([
  'TaskCreated',
  'TaskUpdated',
  'TaskStatusChanged',
  'TaskAssigned',
  'TaskDeleted',
]);
