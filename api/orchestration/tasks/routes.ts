// Tasks (spec: "Task", "Task status", "Tasks, projects, agents"). Creating needs role user or
// higher; reading needs a key; changing, deleting and assigning need authority over the task
// (commands.ts) as well, and a refused request leaves the task unchanged. Every route but delete
// is mirrored under `/api/tasks...` for the web console's browser sessions (its board).

import { createRoute, z } from '@hono/zod-openapi';
import { listTasks } from '../../../projections/orchestration/tasks.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { actorOf, requireKey, requireRole, signedIn } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import {
  AssignTaskBody,
  CreateTaskBody,
  PatchTaskBody,
  Task,
  TaskIdParam,
  TaskListQuery,
  TaskPage,
} from './schemas.ts';
import { assignTask, createTask, deleteTask, taskOf, taskView, updateTask } from './commands.ts';

const tags = ['tasks'];
export const TASKS_PAGE = { defaultLimit: 50, maxLimit: 200 };
const WRITE_ERRORS = {
  ...AUTH_ERRORS,
  403: 'insufficient_role (readonly), or task_authority_required',
  404: 'task_not_found',
};

export function taskRoutes(deps: OrchDeps) {
  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/tasks',
      tags,
      summary: 'Create a task',
      description:
        "`created_by` is taken from the body only for an admin; otherwise it is the calling agent credential's agent, or null. A reference to nothing is 400 `invalid_reference` naming the column.",
      middleware: [requireRole('user')] as const,
      request: { body: jsonBody(CreateTaskBody) },
      responses: {
        201: ok(Task, 'the new task'),
        ...orchErrors({
          ...AUTH_ERRORS,
          400: 'validation_failed, or invalid_reference (project_id, parent_task_id, created_by)',
          403: 'insufficient_role (readonly)',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => c.json(taskView(await createTask(deps, signedIn(c), c.req.valid('json'), actorOf(c))), 201),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/tasks',
      tags,
      summary: 'Tasks, oldest first, optionally of one project and one status',
      middleware: [requireKey()] as const,
      request: { query: TaskListQuery.extend(pageQuery(TASKS_PAGE).shape) },
      responses: {
        200: ok(TaskPage, 'a page of tasks'),
        ...orchErrors({ ...AUTH_ERRORS, 400: 'validation_failed (an unknown status, a malformed project_id)' }),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const { rows, total } = await listTasks(
        deps.db,
        { project_id: query.project_id, status: query.status },
        query.limit,
        query.offset,
      );
      return c.json(page('tasks', rows.map(taskView), total, query), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/tasks/{id}',
      tags,
      summary: 'One task',
      middleware: [requireKey()] as const,
      request: { params: TaskIdParam },
      responses: { 200: ok(Task, 'the task'), ...orchErrors({ ...AUTH_ERRORS, 404: 'task_not_found' }) },
    }),
    async (c) => c.json(taskView(await taskOf(deps, c.req.valid('param').id)), 200),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'patch',
      path: '/api/v1/tasks/{id}',
      tags,
      summary: 'Change a task (only the fields sent)',
      description:
        'Status `in_progress` is refused with 409 `dependencies_incomplete` while a dependency is not done; the message names the blockers.',
      middleware: [requireRole('user')] as const,
      request: { params: TaskIdParam, body: jsonBody(PatchTaskBody) },
      responses: {
        200: ok(Task, 'the task as changed'),
        ...orchErrors({
          ...WRITE_ERRORS,
          400: 'validation_failed, or invalid_reference (parent_task_id)',
          409: 'dependencies_incomplete',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const task = await updateTask(deps, signedIn(c), c.req.valid('param').id, c.req.valid('json'), actorOf(c));
      return c.json(taskView(task), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/v1/tasks/{id}',
      tags,
      summary: 'Delete a task',
      middleware: [requireRole('user')] as const,
      request: { params: TaskIdParam },
      responses: { 204: { description: 'deleted' }, ...orchErrors(WRITE_ERRORS) },
    }),
    async (c) => {
      await deleteTask(deps, signedIn(c), c.req.valid('param').id, actorOf(c));
      return c.body(null, 204);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/tasks/{id}/assign',
      tags,
      summary: 'Assign a task to an agent',
      middleware: [requireRole('user')] as const,
      request: { params: TaskIdParam, body: jsonBody(AssignTaskBody) },
      responses: {
        200: ok(Task, 'the task with its assigned_agent_id'),
        ...orchErrors({
          ...WRITE_ERRORS,
          400: 'validation_failed, or invalid_reference (agent_id)',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const task = await assignTask(
        deps,
        signedIn(c),
        c.req.valid('param').id,
        c.req.valid('json').agent_id,
        actorOf(c),
      );
      return c.json(taskView(task), 200);
    },
  );

  return app;
}
