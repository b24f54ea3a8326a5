// The projects read model: one row per project. Every signed-in caller reads every project
// (the API hides `repo_path` from non-admins).

import type { ProjectEvent } from '../../domain/orchestration/projects/events.ts';
import { ORCH_STREAMS, projectStream } from '../../domain/orchestration/streams.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const projectsProjection = defineProjection<ProjectEvent>({
  name: 'projects',
  handles: ['ProjectCreated', 'ProjectUpdated'],
  tables: ['projects'],
  async apply(event, tx) {
    if (event.type === 'ProjectCreated') {
      const d = event.data;
      await tx.query(
        `INSERT INTO projects (id, name, repo_path, max_concurrent_agents, owner_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
        [d.project_id, d.name, d.repo_path, d.max_concurrent_agents, d.owner_id, d.at],
      );
      return;
    }
    const { project_id, at, ...changes } = event.data;
    const columns = Object.keys(changes);
    await tx.query(
      `UPDATE projects SET ${columns.map((c, i) => `${c} = $${i + 3}`).join(', ')}${columns.length ? ', ' : ''}updated_at = $2 WHERE id = $1`,
      [project_id, at, ...columns.map((c) => (changes as Record<string, unknown>)[c])],
    );
  },
});

export interface ProjectRow {
  id: string;
  name: string;
  repo_path: string | null;
  max_concurrent_agents: number;
  owner_id: string;
  created_at: Date;
  updated_at: Date;
}

const SELECT = 'SELECT id, name, repo_path, max_concurrent_agents, owner_id, created_at, updated_at FROM projects';

export async function projectById(pool: Pool, id: string): Promise<ProjectRow | null> {
  const { rows } = await pool.query<ProjectRow>(`${SELECT} WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** The streams of a project: its own, its tasks' and its agents' (what its agents may watch on /ws). */
export async function projectStreams(pool: Pool, projectId: string): Promise<string[]> {
  const { rows } = await pool.query<{ stream: string }>(
    `SELECT $2 || id AS stream FROM tasks WHERE project_id = $1
     UNION ALL SELECT $3 || id FROM agents WHERE project_id = $1`,
    [projectId, ORCH_STREAMS.task.prefix, ORCH_STREAMS.agent.prefix],
  );
  return [projectStream(projectId), ...rows.map((r) => r.stream)];
}

export async function listProjects(
  pool: Pool,
  limit: number,
  offset: number,
): Promise<{ rows: ProjectRow[]; total: number }> {
  const [page, count] = await Promise.all([
    pool.query<ProjectRow>(`${SELECT} ORDER BY created_at, id LIMIT $1 OFFSET $2`, [limit, offset]),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM projects'),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}
