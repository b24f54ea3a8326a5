// The task, project, agent and MCP server deciders, given/when/then. The dependency rule of
// "Task status" lives here: the API cannot set dependencies today, so only a history can.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentDecider } from '../../../domain/orchestration/agents/decider.ts';
import type { AgentEvent, AgentSpec } from '../../../domain/orchestration/agents/events.ts';
import { mcpServersDecider } from '../../../domain/orchestration/mcp-servers/decider.ts';
import { projectDecider } from '../../../domain/orchestration/projects/decider.ts';
import type { ProjectEvent } from '../../../domain/orchestration/projects/events.ts';
import { taskDecider } from '../../../domain/orchestration/tasks/decider.ts';
import type { TaskCreatedData, TaskEvent } from '../../../domain/orchestration/tasks/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const test = suite('domain: projects, tasks, agents, MCP servers');

const created = (overrides: Partial<TaskCreatedData> = {}): TaskEvent => ({
  type: 'TaskCreated',
  data: {
    task_id: 't1',
    project_id: 'p1',
    title: 'T',
    description: null,
    priority: 'low',
    status: 'todo',
    directive_id: null,
    parent_task_id: null,
    branch_name: null,
    created_by: null,
    created_by_user: 'u1',
    metadata: {},
    depends_on: [],
    at,
    ...overrides,
  },
});
const task = spec(taskDecider);

test('task status in_progress is refused while a dependency is incomplete, naming the blockers', () => {
  const history = [created({ depends_on: ['d1', 'd2', 'd3'] })];
  const update = (dependency_statuses: Record<string, 'done' | 'todo'>) => ({
    type: 'UpdateTask' as const,
    changes: { status: 'in_progress' as const },
    dependency_statuses,
    at,
  });
  task(history)
    .when(update({ d1: 'done', d2: 'todo' }))
    .thenError('dependencies_incomplete');
  try {
    taskDecider.decide(
      update({ d1: 'done', d2: 'todo' }),
      history.reduce(taskDecider.evolve, taskDecider.initialState()),
    );
  } catch (error) {
    assert.is((error as Error).message, 'task has incomplete dependencies: d2, d3');
  }
  task(history)
    .when(update({ d1: 'done', d2: 'done', d3: 'done' }))
    .then([
      { type: 'TaskStatusChanged', data: { task_id: 't1', project_id: 'p1', from: 'todo', to: 'in_progress', at } },
    ]);
  // Other statuses are not gated; no dependencies, no gate.
  task(history)
    .when({ type: 'UpdateTask', changes: { status: 'done' }, dependency_statuses: {}, at })
    .then((events) => assert.is(events.length, 1));
  task([created()])
    .when(update({}))
    .then((events) => assert.is(events[0]!.type, 'TaskStatusChanged'));
});

test('task updates record only what changed; assign and delete; nothing after delete', () => {
  task([created()])
    .when({ type: 'UpdateTask', changes: { title: 'T', priority: 'high', metadata: {} }, dependency_statuses: {}, at })
    .then([{ type: 'TaskUpdated', data: { task_id: 't1', priority: 'high', at } }]);
  task([created()])
    .when({ type: 'UpdateTask', changes: { status: 'todo' }, dependency_statuses: {}, at })
    .then([]);
  task([created()])
    .when({ type: 'AssignTask', agent_id: 'a1', at })
    .then([{ type: 'TaskAssigned', data: { task_id: 't1', agent_id: 'a1', at } }]);
  task([created(), { type: 'TaskAssigned', data: { task_id: 't1', agent_id: 'a1', at } }])
    .when({ type: 'AssignTask', agent_id: 'a1', at })
    .then([]);
  const deleted: TaskEvent = { type: 'TaskDeleted', data: { task_id: 't1', project_id: 'p1', status: 'todo', at } };
  task([created()]).when({ type: 'DeleteTask', at }).then([deleted]);
  task([created(), deleted]).when({ type: 'DeleteTask', at }).thenError('task_not_found');
  task([created(), deleted])
    .when({ type: 'CreateTask', data: created().data as never, at })
    .thenError('task_exists');
  task([]).when({ type: 'AssignTask', agent_id: 'a1', at }).thenError('task_not_found');
});

test('projects: created once; updates record only changes', () => {
  const project = spec(projectDecider);
  const made: ProjectEvent = {
    type: 'ProjectCreated',
    data: { project_id: 'p1', owner_id: 'u1', name: 'n', repo_path: null, max_concurrent_agents: 3, at },
  };
  project([])
    .when({
      type: 'CreateProject',
      project_id: 'p1',
      owner_id: 'u1',
      fields: { name: 'n', repo_path: null, max_concurrent_agents: 3 },
      at,
    })
    .then([made]);
  project([made])
    .when({
      type: 'CreateProject',
      project_id: 'p1',
      owner_id: 'u1',
      fields: { name: 'n', repo_path: null, max_concurrent_agents: 3 },
      at,
    })
    .thenError('project_exists');
  project([made])
    .when({ type: 'UpdateProject', changes: { name: 'n', max_concurrent_agents: 4 }, at })
    .then([{ type: 'ProjectUpdated', data: { project_id: 'p1', max_concurrent_agents: 4, at } }]);
  project([made])
    .when({ type: 'UpdateProject', changes: { name: 'n' }, at })
    .then([]);
  project([])
    .when({ type: 'UpdateProject', changes: { name: 'x' }, at })
    .thenError('project_not_found');
});

test('agents: queued → claimed → running → completed or failed; stop and kill from any live state; recovery fails held agents', () => {
  const agent = spec(agentDecider);
  const specOf: AgentSpec = {
    name: 'a',
    role: 'builder',
    project_id: 'p1',
    template: 'builder',
    custom_agent_md: null,
    initial_prompt: null,
    model: 'local',
    base_branch: 'main',
    persistent: false,
  };
  const spawned: AgentEvent = { type: 'AgentSpawned', data: { agent_id: 'a1', ...specOf, created_by_user: 'u1', at } };
  const claimed: AgentEvent = { type: 'AgentClaimed', data: { agent_id: 'a1', runner_instance: 'r1', at } };
  const started: AgentEvent = { type: 'AgentStarted', data: { agent_id: 'a1', at } };
  const killed: AgentEvent = { type: 'AgentKilled', data: { agent_id: 'a1', from: 'running', by: 'u1', at } };
  agent([]).when({ type: 'SpawnAgent', agent_id: 'a1', spec: specOf, created_by_user: 'u1', at }).then([spawned]);
  agent([spawned])
    .when({ type: 'SpawnAgent', agent_id: 'a1', spec: specOf, created_by_user: 'u1', at })
    .thenError('agent_exists');
  agent([]).when({ type: 'ClaimAgent', runner_instance: 'r1', at }).thenError('agent_not_found');
  agent([spawned]).when({ type: 'ClaimAgent', runner_instance: 'r1', at }).then([claimed]);
  agent([spawned, claimed]).when({ type: 'ClaimAgent', runner_instance: 'r2', at }).thenError('agent_not_queued');
  agent([spawned]).when({ type: 'StartAgent', runner_instance: 'r1', at }).thenError('agent_not_held');
  agent([spawned, claimed]).when({ type: 'StartAgent', runner_instance: 'r2', at }).thenError('agent_not_held');
  agent([spawned, claimed]).when({ type: 'StartAgent', runner_instance: 'r1', at }).then([started]);
  agent([spawned, claimed, started])
    .when({ type: 'FinishAgent', runner_instance: 'r1', outcome: 'completed', reason: null, at })
    .then([{ type: 'AgentCompleted', data: { agent_id: 'a1', from: 'running', at } }]);
  agent([spawned, claimed, started])
    .when({ type: 'FinishAgent', runner_instance: 'r1', outcome: 'failed', reason: 'boom', at })
    .then([{ type: 'AgentFailed', data: { agent_id: 'a1', from: 'running', reason: 'boom', at } }]);
  agent([spawned, claimed, started]).when({ type: 'KillAgent', by: 'u1', at }).then([killed]);
  agent([spawned, claimed, started, killed])
    .when({ type: 'FinishAgent', runner_instance: 'r1', outcome: 'completed', reason: null, at })
    .thenError('agent_ended');
  agent([spawned, claimed, started, killed]).when({ type: 'KillAgent', by: 'u1', at }).then([]);
  agent([spawned, claimed, started, killed]).when({ type: 'StopAgent', by: 'u1', at }).thenError('agent_ended');
  agent([spawned, claimed, started, killed])
    .when({ type: 'RecordCost', cost_usd: 0.1, at })
    .then((e) => assert.is(e[0]!.type, 'AgentCostRecorded'));
  agent([spawned])
    .when({ type: 'StopAgent', by: null, at })
    .then([{ type: 'AgentStopped', data: { agent_id: 'a1', from: 'queued', by: null, at } }]);
  agent([spawned, claimed, started])
    .when({ type: 'FailOrphaned', reason: 'r', at })
    .then([{ type: 'AgentFailed', data: { agent_id: 'a1', from: 'running', reason: 'r', at } }]);
  agent([spawned]).when({ type: 'FailOrphaned', reason: 'r', at }).then([]);
  agent([]).when({ type: 'StopAgent', by: null, at }).thenError('agent_not_found');
});

test('MCP servers: names unique in a set; [] on an empty set changes nothing', () => {
  const mcp = spec(mcpServersDecider);
  const server = { name: 'a', command: 'x', args: [], env_keys: [], env_sealed: 's', description: null };
  mcp([])
    .when({ type: 'ReplaceMcpServers', servers: [server, server], at })
    .thenError('validation_failed');
  mcp([]).when({ type: 'ReplaceMcpServers', servers: [], at }).then([]);
  mcp([{ type: 'McpServersReplaced', data: { servers: [server], at } }])
    .when({ type: 'ReplaceMcpServers', servers: [], at })
    .then([{ type: 'McpServersReplaced', data: { servers: [], at } }]);
});

test.run();
