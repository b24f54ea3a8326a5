// What the projects, board and agents pages share: the task statuses in board order with their
// labels and reading every page of a list (error bodies: ui/errors.ts).

import type { Schemas } from '../api/client.ts';

export type Task = Schemas['Task'];
export type TaskStatus = Task['status'];
export type Project = Schemas['Project'];
export type Agent = Schemas['Agent'];

export const COLUMNS: { status: TaskStatus; label: string }[] = [
  { status: 'backlog', label: 'Backlog' },
  { status: 'todo', label: 'To do' },
  { status: 'in_progress', label: 'In progress' },
  { status: 'in_review', label: 'In review' },
  { status: 'done', label: 'Done' },
  { status: 'cancelled', label: 'Cancelled' },
];
export const statusLabel = (status: TaskStatus) => COLUMNS.find((c) => c.status === status)?.label ?? status;

export const PRIORITIES: Task['priority'][] = ['low', 'medium', 'high', 'critical'];

const PAGE = 200;

/** Every row of a paginated list: pages of 200 until `total`. */
export async function readAll<T>(
  page: (limit: number, offset: number) => Promise<{ rows: T[]; total: number } | { error: unknown }>,
): Promise<T[] | { error: unknown }> {
  const out: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const got = await page(PAGE, offset);
    if ('error' in got) return got;
    out.push(...got.rows);
    if (got.rows.length === 0 || out.length >= got.total) return out;
  }
}

export const ENDED: ReadonlySet<Agent['status']> = new Set(['completed', 'failed', 'stopped', 'killed']);
