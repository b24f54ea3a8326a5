// The tasks read model: one row per live task (a deleted task's row goes). Task creation is the
// busy write of this slice, so a batch of creations is one multi-row INSERT.

import type { TaskEvent, TaskStatus } from '../../domain/orchestration/tasks/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

type Created = Extract<Recorded<TaskEvent>, { type: 'TaskCreated' }>;

const CREATE_COLUMNS = [
  'id',
  'project_id',
  'title',
  'description',
  'priority',
  'status',
  'directive_id',
  'parent_task_id',
  'branch_name',
  'created_by',
  'created_by_user',
  'metadata',
  'depends_on',
  'created_at',
  'updated_at',
];

function createdValues(e: Created): unknown[] {
  const d = e.data;
  return [
    d.task_id,
    d.project_id,
    d.title,
    d.description,
    d.priority,
    d.status,
    d.directive_id,
    d.parent_task_id,
    d.branch_name,
    d.created_by,
    d.created_by_user,
    JSON.stringify(d.metadata ?? {}),
    JSON.stringify(d.depends_on ?? []),
    d.at,
    d.at,
  ];
}

async function insertCreated(events: Created[], tx: PoolClient): Promise<void> {
  const n = CREATE_COLUMNS.length;
  const values = events.flatMap(createdValues);
  const rows = events.map((_, r) => `(${CREATE_COLUMNS.map((_, c) => `$${r * n + c + 1}`).join(', ')})`);
  await tx.query(`INSERT INTO tasks (${CREATE_COLUMNS.join(', ')}) VALUES ${rows.join(', ')}`, values);
}

async function applyOne(event: Recorded<TaskEvent>, tx: PoolClient): Promise<void> {
  switch (event.type) {
    case 'TaskCreated':
      return insertCreated([event], tx);
    case 'TaskUpdated': {
      const { task_id, at, ...changes } = event.data;
      const columns = Object.keys(changes);
      const values = columns.map((c) =>
        c === 'metadata'
          ? JSON.stringify((changes as Record<string, unknown>)[c])
          : (changes as Record<string, unknown>)[c],
      );
      await tx.query(
        `UPDATE tasks SET ${columns.map((c, i) => `${c} = $${i + 3}, `).join('')}updated_at = $2 WHERE id = $1`,
        [task_id, at, ...values],
      );
      return;
    }
    case 'TaskStatusChanged':
      await tx.query('UPDATE tasks SET status = $2, updated_at = $3 WHERE id = $1', [
        event.data.task_id,
        event.data.to,
        event.data.at,
      ]);
      return;
    case 'TaskAssigned':
      await tx.query('UPDATE tasks SET assigned_agent_id = $2, updated_at = $3 WHERE id = $1', [
        event.data.task_id,
        event.data.agent_id,
        event.data.at,
      ]);
      return;
    case 'TaskDeleted':
      await tx.query('DELETE FROM tasks WHERE id = $1', [event.data.task_id]);
  }
}

export const tasksProjection = defineProjection<TaskEvent>({
  name: 'tasks',
  handles: ['TaskCreated', 'TaskUpdated', 'TaskStatusChanged', 'TaskAssigned', 'TaskDeleted'],
  tables: ['tasks'],
  apply: applyOne,
  async applyBatch(events, tx) {
    // Runs of creations become one INSERT each (at most 500 rows: the engine's batch size).
    let run: Created[] = [];
    const flush = async () => {
      if (run.length) await insertCreated(run, tx);
      run = [];
    };
    for (const event of events) {
      if (event.type === 'TaskCreated') {
        run.push(event);
        continue;
      }
      await flush();
      await applyOne(event, tx);
    }
    await flush();
  },
});

export interface TaskRow {
  id: string;
  project_id: string;
  title: string;
  description: string | null;
  priority: string;
  status: TaskStatus;
  directive_id: string | null;
  parent_task_id: string | null;
  branch_name: string | null;
  created_by: string | null;
  created_by_user: string | null;
  assigned_agent_id: string | null;
  metadata: Record<string, unknown>;
  depends_on: string[];
  created_at: Date;
  updated_at: Date;
}

const SELECT = `SELECT id, project_id, title, description, priority, status, directive_id, parent_task_id, branch_name, created_by,
  created_by_user, assigned_agent_id, metadata, depends_on, created_at, updated_at FROM tasks`;

export async function taskById(pool: Pool, id: string): Promise<TaskRow | null> {
  const { rows } = await pool.query<TaskRow>(`${SELECT} WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** Status of each of these tasks that exists. */
export async function taskStatuses(pool: Pool, ids: string[]): Promise<Record<string, TaskStatus>> {
  if (ids.length === 0) return {};
  const { rows } = await pool.query<{ id: string; status: TaskStatus }>(
    'SELECT id, status FROM tasks WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.id, r.status]));
}

export async function listTasks(
  pool: Pool,
  filter: { project_id?: string; status?: TaskStatus },
  limit: number,
  offset: number,
): Promise<{ rows: TaskRow[]; total: number }> {
  const where: string[] = [];
  const values: unknown[] = [];
  if (filter.project_id) where.push(`project_id = $${values.push(filter.project_id)}`);
  if (filter.status) where.push(`status = $${values.push(filter.status)}`);
  const clause = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const [page, count] = await Promise.all([
    pool.query<TaskRow>(
      `${SELECT}${clause} ORDER BY created_at, id LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
      [...values, limit, offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks${clause}`, values),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}

/** How many tasks are in each status (the /ws/live frame). */
export async function taskCountsByStatus(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM tasks GROUP BY status',
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
