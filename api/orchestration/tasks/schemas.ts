// Request and response schemas of the tasks slice (spec: "Task"). Unknown body fields are
// dropped, as the spec has them rejected only on profile creation and template instantiation;
// `depends_on` is accepted and ignored (it cannot be set through the API).

import { z } from '@hono/zod-openapi';
import { TITLE_MAX } from '../../../domain/orchestration/tasks/decider.ts';
import { TASK_PRIORITIES, TASK_STATUSES } from '../../../domain/orchestration/tasks/events.ts';
import { pageFields } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';

const status = z
  .enum(TASK_STATUSES)
  .openapi({ description: 'backlog (default), todo, in_progress, in_review, done, cancelled' });
const priority = z.enum(TASK_PRIORITIES).openapi({ description: 'low, medium, high, critical' });
const title = z
  .string()
  .min(1)
  .max(TITLE_MAX)
  .openapi({ description: `1-${TITLE_MAX} characters` });
const optionalUuid = z.uuid().nullable().optional();
const metadata = z.record(z.string(), z.unknown()).openapi({ description: 'freeform JSON object' });

export const CreateTaskBody = z
  .object({
    project_id: z.uuid(),
    title,
    priority,
    status: status.optional(),
    description: z.string().max(100_000).nullable().optional(),
    directive_id: optionalUuid,
    parent_task_id: optionalUuid,
    branch_name: z.string().min(1).max(255).nullable().optional(),
    created_by: optionalUuid.openapi({ description: 'the creating agent: taken from the body only for an admin' }),
    metadata: metadata.optional(),
    depends_on: z.unknown().optional().openapi({ description: 'ignored: dependencies cannot be set through the API' }),
  })
  .openapi('CreateTaskRequest');

export const PatchTaskBody = z
  .object({
    title: title.optional(),
    priority: priority.optional(),
    status: status.optional(),
    description: z.string().max(100_000).nullable().optional(),
    directive_id: optionalUuid,
    parent_task_id: optionalUuid,
    branch_name: z.string().min(1).max(255).nullable().optional(),
    metadata: metadata.optional(),
  })
  .openapi('PatchTaskRequest');

export const AssignTaskBody = z.object({ agent_id: z.uuid() }).openapi('AssignTaskRequest');

export const TaskListQuery = z.object({
  project_id: z.uuid().optional(),
  status: status.optional(),
});

export const Task = z
  .object({
    id: z.uuid(),
    project_id: z.uuid(),
    title: z.string(),
    description: z.string().nullable(),
    priority,
    status,
    directive_id: z.uuid().nullable(),
    parent_task_id: z.uuid().nullable(),
    branch_name: z.string().nullable(),
    created_by: z.uuid().nullable().openapi({ description: 'the agent that created it' }),
    created_by_user: z.uuid().nullable().openapi({ description: 'the account (or credential) that made the request' }),
    assigned_agent_id: z.uuid().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    depends_on: z.array(z.uuid()),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Task');

export const TaskPage = z.object({ tasks: z.array(Task), ...pageFields }).openapi('TaskPage');

export const TaskIdParam = uuidParams('id');
