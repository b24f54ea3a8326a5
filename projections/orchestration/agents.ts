// The spawned agents read model: one row per agent with its status, the runner instance holding
// it, and its running cost.

import type { AgentEvent, AgentSpec, AgentStatus } from '../../domain/orchestration/agents/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const agentsProjection = defineProjection<AgentEvent>({
  name: 'agents',
  handles: [
    'AgentSpawned',
    'AgentClaimed',
    'AgentStarted',
    'AgentCostRecorded',
    'AgentCompleted',
    'AgentFailed',
    'AgentStopped',
    'AgentKilled',
  ],
  tables: ['agents'],
  async apply(event, tx) {
    const d = event.data;
    const set = (sql: string, values: unknown[]) =>
      tx.query(`UPDATE agents SET ${sql}, updated_at = $2 WHERE id = $1`, [d.agent_id, d.at, ...values]);
    switch (event.type) {
      case 'AgentSpawned': {
        const s = event.data;
        await tx.query(
          `INSERT INTO agents (id, name, role, project_id, template, custom_agent_md, initial_prompt, model, base_branch, persistent, status,
             total_cost_usd, created_by_user, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued', 0, $11, $12, $12)`,
          [
            s.agent_id,
            s.name,
            s.role,
            s.project_id,
            s.template,
            s.custom_agent_md,
            s.initial_prompt,
            s.model,
            s.base_branch,
            s.persistent,
            s.created_by_user,
            s.at,
          ],
        );
        return;
      }
      case 'AgentClaimed':
        await set(`status = 'claimed', runner_instance = $3, claimed_at = $2`, [event.data.runner_instance]);
        return;
      case 'AgentStarted':
        await set(`status = 'running', started_at = $2`, []);
        return;
      case 'AgentCostRecorded':
        await set('total_cost_usd = total_cost_usd + $3', [event.data.cost_usd]);
        return;
      case 'AgentCompleted':
        await ended(tx, d.agent_id, 'completed', null, d.at);
        return;
      case 'AgentFailed':
        await ended(tx, d.agent_id, 'failed', event.data.reason, d.at);
        return;
      case 'AgentStopped':
        await ended(tx, d.agent_id, 'stopped', null, d.at);
        return;
      case 'AgentKilled':
        await ended(tx, d.agent_id, 'killed', null, d.at);
    }
  },
});

async function ended(
  tx: PoolClient,
  id: string,
  status: AgentStatus,
  reason: string | null,
  at: string,
): Promise<void> {
  await tx.query('UPDATE agents SET status = $2, status_reason = $3, ended_at = $4, updated_at = $4 WHERE id = $1', [
    id,
    status,
    reason,
    at,
  ]);
}

/** An agent's row: the spawn's fields, then its life. */
export type AgentRow = AgentSpec & {
  id: string;
  status: AgentStatus;
  status_reason: string | null;
  total_cost_usd: number;
  created_by_user: string | null;
  runner_instance: string | null;
  created_at: Date;
  claimed_at: Date | null;
  started_at: Date | null;
  ended_at: Date | null;
};

const SELECT = `SELECT id, name, role, project_id, template, custom_agent_md, initial_prompt, model, base_branch, persistent, status, status_reason,
  total_cost_usd::float8 AS total_cost_usd, created_by_user, runner_instance, created_at, claimed_at, started_at, ended_at FROM agents`;

export async function agentById(pool: Pool, id: string): Promise<AgentRow | null> {
  const { rows } = await pool.query<AgentRow>(`${SELECT} WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function listAgents(
  pool: Pool,
  filter: { project_id?: string },
  limit: number,
  offset: number,
): Promise<{ rows: AgentRow[]; total: number }> {
  const clause = filter.project_id ? ' WHERE project_id = $1' : '';
  const values = filter.project_id ? [filter.project_id] : [];
  const [page, count] = await Promise.all([
    pool.query<AgentRow>(
      `${SELECT}${clause} ORDER BY created_at, id LIMIT $${values.length + 1} OFFSET $${values.length + 2}`,
      [...values, limit, offset],
    ),
    pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM agents${clause}`, values),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}

/**
 * Queued agents, oldest first, whose project has a free slot (fewer claimed or running agents
 * than its max_concurrent_agents): the runner's next claims.
 */
export async function claimableAgents(pool: Pool, limit: number): Promise<AgentRow[]> {
  const { rows } = await pool.query<AgentRow>(
    `${SELECT.replace('FROM agents', 'FROM agents a')} WHERE a.status = 'queued'
       AND (SELECT count(*) FROM agents b WHERE b.project_id = a.project_id AND b.status IN ('claimed', 'running'))
           < (SELECT p.max_concurrent_agents FROM projects p WHERE p.id = a.project_id)
     ORDER BY a.created_at, a.id LIMIT $1`,
    [limit],
  );
  return rows;
}

/** Agents a runner holds (claimed or running). */
export async function heldAgentIds(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM agents WHERE status IN ('claimed', 'running') ORDER BY created_at, id`,
  );
  return rows.map((r) => r.id);
}

/** How many agents are in each status (the /ws/live frame). */
export async function agentCountsByStatus(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM agents GROUP BY status',
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
