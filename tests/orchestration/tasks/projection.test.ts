// The projects, tasks, agents and MCP server read models: rebuilding them from the log gives
// exactly what the live projections built.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentsProjection } from '../../../projections/orchestration/agents.ts';
import { mcpServersProjection } from '../../../projections/orchestration/mcp-servers.ts';
import { projectsProjection } from '../../../projections/orchestration/projects.ts';
import { tasksProjection } from '../../../projections/orchestration/tasks.ts';
import { claimAgent, createProject, spawn, startAgentApps, type AgentKeys } from '../../support/agents.ts';
import { http, type TestServices } from '../../support/services.ts';

const SNAPSHOTS: Record<string, string> = {
  projects: 'SELECT * FROM projects ORDER BY id',
  tasks: 'SELECT * FROM tasks ORDER BY id',
  agents: 'SELECT * FROM agents ORDER BY id',
  mcp_servers: 'SELECT name, command, args, env_keys, description, position FROM mcp_servers ORDER BY position',
};

const test = suite<{ s: TestServices; keys: AgentKeys }>('projects, tasks and agents projections');
test.before(async (ctx) => {
  ({ s: ctx.s, keys: ctx.keys } = await startAgentApps('tasks_projection'));
});
test.after(async ({ s }) => s?.close());

test('rebuilding from the log reproduces the live read models', async ({ s, keys }) => {
  const admin = { 'X-API-Key': keys.adminKey };
  const runner = { 'X-API-Key': keys.runnerKey };
  const project = await createProject(s, keys.adminKey, { repo_path: '/srv/x' });
  await http(`${s.orch}/api/v1/projects/${project}`, {
    method: 'PATCH',
    headers: admin,
    json: { name: 'renamed', max_concurrent_agents: 7 },
  });
  const agent = await spawn(s, keys.adminKey, project, { initial_prompt: 'go', persistent: true });
  const tasks = [];
  for (let i = 0; i < 30; i++) {
    tasks.push(
      (
        await http(`${s.orch}/api/v1/tasks`, {
          headers: admin,
          json: { project_id: project, title: `t${i}`, priority: 'low', metadata: { i } },
        })
      ).body,
    );
  }
  await http(`${s.orch}/api/v1/tasks/${tasks[0].id}`, {
    method: 'PATCH',
    headers: admin,
    json: { status: 'done', title: 'first', metadata: { x: [1] } },
  });
  await http(`${s.orch}/api/v1/tasks/${tasks[1].id}/assign`, { headers: admin, json: { agent_id: agent.id } });
  await http(`${s.orch}/api/v1/tasks/${tasks[2].id}`, { method: 'DELETE', headers: admin });
  await claimAgent(s, keys.runnerKey, agent.id);
  const report = (body: Record<string, unknown>) =>
    http(`${s.orch}/api/v1/runner/agents/${agent.id}/report`, { headers: runner, json: body });
  await report({ event: 'running', runner_instance: 'test-runner' });
  await report({ event: 'cost', cost_usd: 0.125 });
  await report({ event: 'failed', runner_instance: 'test-runner', reason: 'why' });
  await http(`${s.orch}/api/v1/agents/mcp-servers`, {
    method: 'PUT',
    headers: admin,
    json: [{ name: 'm', command: 'c', env: { A: 'b' } }],
  });

  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(SNAPSHOTS).map(async ([t, q]) => [t, (await s.db.pool.query(q)).rows])),
    );
  const live = await snapshot();
  assert.is(live.tasks.length, 29);
  await s.platform.engine.stop();
  for (const projection of [projectsProjection, tasksProjection, agentsProjection, mcpServersProjection]) {
    assert.ok((await s.platform.engine.rebuild(projection.name)) > 0, projection.name);
  }
  assert.equal(await snapshot(), live);
});

test.run();
