// The cockpit summary (spec: "Cockpit"), kept ready to read: per-project task counts by the
// spec's buckets, one row of totals (agents configured and active, the sum of every project's
// max_concurrent_agents, the last task created and completed), and agent cost per UTC day, which
// the route sums over the 30-day window. Events that change a status carry the status they
// leave (`from`), so a count moves without reading another read model.

import type { AgentEvent, AgentStatus } from '../../domain/orchestration/agents/events.ts';
import { isEnded } from '../../domain/orchestration/agents/decider.ts';
import type { ProjectEvent } from '../../domain/orchestration/projects/events.ts';
import type { TaskEvent, TaskStatus } from '../../domain/orchestration/tasks/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

type CockpitEvent =
  | ProjectEvent
  | Extract<TaskEvent, { type: 'TaskCreated' | 'TaskStatusChanged' | 'TaskDeleted' }>
  | Extract<
      AgentEvent,
      {
        type:
          | 'AgentSpawned'
          | 'AgentStarted'
          | 'AgentCostRecorded'
          | 'AgentCompleted'
          | 'AgentFailed'
          | 'AgentStopped'
          | 'AgentKilled';
      }
    >;

/** The spec's buckets: open = backlog + todo, in_progress = in_progress + in_review, done; cancelled counts nowhere. */
const BUCKET: Record<TaskStatus, 'open' | 'in_progress' | 'done' | null> = {
  backlog: 'open',
  todo: 'open',
  in_progress: 'in_progress',
  in_review: 'in_progress',
  done: 'done',
  cancelled: null,
};

/** Accumulated changes of one batch, written in a few statements. */
class Delta {
  projects = new Map<string, { open: number; in_progress: number; done: number }>();
  configured = 0;
  active = 0;
  maxConcurrent = 0;
  lastCreated: string | null = null;
  lastCompleted: string | null = null;
  cost = new Map<string, number>();

  bucket(projectId: string, status: TaskStatus, by: number): void {
    const bucket = BUCKET[status];
    if (!bucket) return;
    const counts = this.projects.get(projectId) ?? { open: 0, in_progress: 0, done: 0 };
    counts[bucket] += by;
    this.projects.set(projectId, counts);
  }

  agentLeft(from: AgentStatus): void {
    if (!isEnded(from)) this.configured -= 1;
    if (from === 'running') this.active -= 1;
  }
}

const later = (a: string | null, b: string) => (a === null || b > a ? b : a);

async function flush(delta: Delta, tx: PoolClient): Promise<void> {
  for (const [id, c] of delta.projects) {
    await tx.query(
      'UPDATE cockpit_projects SET open = open + $2, in_progress = in_progress + $3, done = done + $4 WHERE project_id = $1',
      [id, c.open, c.in_progress, c.done],
    );
  }
  await tx.query(
    `INSERT INTO cockpit_totals (id, agents_configured, agents_active, max_concurrent, last_task_created, last_task_completed)
     VALUES (true, $1, $2, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET
       agents_configured = cockpit_totals.agents_configured + $1, agents_active = cockpit_totals.agents_active + $2,
       max_concurrent = cockpit_totals.max_concurrent + $3,
       last_task_created = GREATEST(cockpit_totals.last_task_created, $4), last_task_completed = GREATEST(cockpit_totals.last_task_completed, $5)`,
    [delta.configured, delta.active, delta.maxConcurrent, delta.lastCreated, delta.lastCompleted],
  );
  for (const [day, usd] of delta.cost) {
    await tx.query(
      'INSERT INTO cockpit_cost_daily (day, usd) VALUES ($1, $2) ON CONFLICT (day) DO UPDATE SET usd = cockpit_cost_daily.usd + $2',
      [day, usd],
    );
  }
}

async function applyBatch(events: Recorded<CockpitEvent>[], tx: PoolClient): Promise<void> {
  const delta = new Delta();
  for (const event of events) {
    switch (event.type) {
      case 'ProjectCreated': {
        const d = event.data;
        // Counts of this batch for the project go after its row exists.
        await flush(delta, tx);
        Object.assign(delta, new Delta());
        await tx.query(
          'INSERT INTO cockpit_projects (project_id, name, max_concurrent, created_at) VALUES ($1, $2, $3, $4)',
          [d.project_id, d.name, d.max_concurrent_agents, d.at],
        );
        delta.maxConcurrent += d.max_concurrent_agents;
        break;
      }
      case 'ProjectUpdated': {
        const d = event.data;
        if (d.name !== undefined)
          await tx.query('UPDATE cockpit_projects SET name = $2 WHERE project_id = $1', [d.project_id, d.name]);
        if (d.max_concurrent_agents !== undefined) {
          const { rows } = await tx.query<{ old: number }>(
            `UPDATE cockpit_projects p SET max_concurrent = $2 FROM (SELECT max_concurrent AS old FROM cockpit_projects WHERE project_id = $1) o
             WHERE p.project_id = $1 RETURNING o.old`,
            [d.project_id, d.max_concurrent_agents],
          );
          delta.maxConcurrent += d.max_concurrent_agents - (rows[0]?.old ?? 0);
        }
        break;
      }
      case 'TaskCreated': {
        const d = event.data;
        delta.bucket(d.project_id, d.status, 1);
        delta.lastCreated = later(delta.lastCreated, d.at);
        if (d.status === 'done') delta.lastCompleted = later(delta.lastCompleted, d.at);
        break;
      }
      case 'TaskStatusChanged': {
        const d = event.data;
        delta.bucket(d.project_id, d.from, -1);
        delta.bucket(d.project_id, d.to, 1);
        if (d.to === 'done') delta.lastCompleted = later(delta.lastCompleted, d.at);
        break;
      }
      case 'TaskDeleted':
        delta.bucket(event.data.project_id, event.data.status, -1);
        break;
      case 'AgentSpawned':
        delta.configured += 1;
        break;
      case 'AgentStarted':
        delta.active += 1;
        break;
      case 'AgentCostRecorded': {
        const day = event.data.at.slice(0, 10);
        delta.cost.set(day, (delta.cost.get(day) ?? 0) + event.data.cost_usd);
        break;
      }
      case 'AgentCompleted':
      case 'AgentFailed':
      case 'AgentStopped':
      case 'AgentKilled':
        delta.agentLeft(event.data.from);
        break;
    }
  }
  await flush(delta, tx);
}

export const cockpitProjection = defineProjection<CockpitEvent>({
  name: 'cockpit',
  handles: [
    'ProjectCreated',
    'ProjectUpdated',
    'TaskCreated',
    'TaskStatusChanged',
    'TaskDeleted',
    'AgentSpawned',
    'AgentStarted',
    'AgentCostRecorded',
    'AgentCompleted',
    'AgentFailed',
    'AgentStopped',
    'AgentKilled',
  ],
  tables: ['cockpit_projects', 'cockpit_totals', 'cockpit_cost_daily'],
  apply: (event, tx) => applyBatch([event], tx),
  applyBatch,
});

export interface CockpitRead {
  projects: { name: string; open: number; in_progress: number; done: number }[];
  agents_configured: number;
  agents_active: number;
  max_concurrent: number;
  last_task_created: Date | null;
  last_task_completed: Date | null;
  cost_usd: number;
}

/** The summary in one round trip: project rows, the totals row, and the window's cost. `since` is the window's first UTC day. */
export async function readCockpit(pool: Pool, since: string): Promise<CockpitRead> {
  const { rows } = await pool.query<{
    projects: CockpitRead['projects'] | null;
    t: Record<string, unknown> | null;
    usd: number | null;
  }>(
    `SELECT
       (SELECT json_agg(json_build_object('name', name, 'open', open, 'in_progress', in_progress, 'done', done) ORDER BY created_at, project_id)
          FROM cockpit_projects) AS projects,
       (SELECT row_to_json(t) FROM cockpit_totals t) AS t,
       (SELECT sum(usd)::float8 FROM cockpit_cost_daily WHERE day >= $1::date) AS usd`,
    [since],
  );
  const row = rows[0]!;
  const t = row.t ?? {};
  const time = (v: unknown) => (v ? new Date(v as string) : null);
  return {
    projects: row.projects ?? [],
    agents_configured: (t.agents_configured as number) ?? 0,
    agents_active: (t.agents_active as number) ?? 0,
    max_concurrent: (t.max_concurrent as number) ?? 0,
    last_task_created: time(t.last_task_created),
    last_task_completed: time(t.last_task_completed),
    cost_usd: row.usd ?? 0,
  };
}

/** Agent cost per UTC day from `since` to `until` (inclusive, `YYYY-MM-DD`), oldest first, a day without cost as 0. */
export async function readDailyCost(pool: Pool, since: string, until: string): Promise<{ day: string; usd: number }[]> {
  const { rows } = await pool.query<{ day: string; usd: number }>(
    `SELECT to_char(d, 'YYYY-MM-DD') AS day, coalesce(c.usd, 0)::float8 AS usd
     FROM generate_series($1::date, $2::date, interval '1 day') AS d
     LEFT JOIN cockpit_cost_daily c ON c.day = d::date
     ORDER BY d`,
    [since, until],
  );
  return rows;
}
