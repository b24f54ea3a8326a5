// /ws and the work of projects: every account reads projects, tasks and agents through the API,
// so its socket shows their events (a project's repo_path, which the API shows admins only,
// left out); an agent credential's socket shows its own project's events only, tasks created
// after it connected included.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventToAppend } from '../../../infra/eventstore/port.ts';
import { formatPosition } from '../../../infra/eventstore/position.ts';
import { agentWithKey, createProject, spawn, startAgentApps, type AgentKeys } from '../../support/agents.ts';
import { createAccount } from '../../support/principals.ts';
import { http, type TestServices } from '../../support/services.ts';
import { connectWs, type WsClient } from '../../support/ws.ts';
import { agentStream, projectStream, taskStream } from '../../../domain/orchestration/streams.ts';

const test = suite<{ s: TestServices; keys: AgentKeys }>('log: /ws and projects, tasks, agents');
test.before(async (ctx) => {
  Object.assign(ctx, await startAgentApps('log_ws_projects', {}, { sockets: true }));
});
test.after(async ({ s }) => s?.close());

const marker = (): EventToAppend => ({
  id: randomUUID(),
  type: 'ScriptEnded',
  data: {},
  metadata: { actor: { kind: 'system', id: null }, correlation_id: null, causation_id: null, schema: 1 },
});

async function framesUntil(ws: WsClient, stream: string): Promise<Record<string, any>[]> {
  await ws.next((f) => f.stream === stream, 10_000);
  return ws.frames.filter((f) => !f.control);
}

test('accounts see every project, task and agent (repo_path left out); an agent sees its own project only', async ({
  s,
  keys,
}) => {
  const alice = await createAccount(s, keys.adminKey, 'user');
  const mine = await createProject(s, keys.adminKey, { repo_path: '/srv/mine' });
  const other = await createProject(s, keys.adminKey);
  const agent = await agentWithKey(s, keys, mine);
  const from = formatPosition((await s.platform.store.headPosition())!);
  const admin = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': keys.adminKey });
  const account = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': alice.apiKey });
  const agentSocket = await connectWs(s.orch, `/ws?from=${from}`, { 'X-API-Key': agent.apiKey });

  // The script: a task in each project, an update of each (TaskUpdated names no project), the
  // project's repo_path changed, an agent spawned in the other project.
  const task = async (project: string) =>
    (
      await http(`${s.orch}/api/v1/tasks`, {
        headers: { 'X-API-Key': keys.adminKey },
        json: { project_id: project, title: 't', priority: 'low' },
      })
    ).body.id as string;
  const [inMine, inOther] = [await task(mine), await task(other)];
  for (const id of [inMine, inOther]) {
    assert.is(
      (
        await http(`${s.orch}/api/v1/tasks/${id}`, {
          method: 'PATCH',
          headers: { 'X-API-Key': keys.adminKey },
          json: { title: 'renamed' },
        })
      ).status,
      200,
    );
  }
  assert.is(
    (
      await http(`${s.orch}/api/v1/projects/${mine}`, {
        method: 'PATCH',
        headers: { 'X-API-Key': keys.adminKey },
        json: { repo_path: '/srv/moved' },
      })
    ).status,
    200,
  );
  const otherAgent = await spawn(s, keys.adminKey, other);
  const end = `ws_end-${randomUUID()}`;
  await s.platform.store.append(end, [marker()], { expected: 'no_stream' });

  const all = await framesUntil(admin, end);
  const work = all.filter((f) => /^orch\.(project|task|agent)-/.test(f.stream));
  assert.ok(
    work.some((f) => f.type === 'ProjectUpdated' && f.data.repo_path === '/srv/moved'),
    'admins see repo_path',
  );
  assert.ok(work.some((f) => f.stream === agentStream(otherAgent.id)));

  // The account: every work event, in the same order, without repo_path.
  const seen = (await framesUntil(account, taskStream(inOther))).filter((f) =>
    /^orch\.(project|task|agent)-/.test(f.stream),
  );
  await account.next((f) => f.stream === agentStream(otherAgent.id), 10_000);
  const accountWork = account.frames.filter((f) => !f.control && /^orch\.(project|task|agent)-/.test(f.stream));
  assert.ok(seen.length > 0);
  assert.equal(
    accountWork.map((f) => f.position),
    work.map((f) => f.position),
  );
  assert.ok(
    accountWork.every((f) => !('repo_path' in f.data)),
    'repo_path reaches admins only',
  );

  // The agent: its project's events only (the task created after it connected, and its update).
  await new Promise((r) => setTimeout(r, 500));
  const agentWork = agentSocket.frames.filter((f) => !f.control);
  const inMineStreams = new Set([projectStream(mine), taskStream(inMine), agentStream(agent.id)]);
  assert.equal(
    agentWork.map((f) => f.position),
    work.filter((f) => inMineStreams.has(f.stream)).map((f) => f.position),
  );
  assert.ok(
    agentWork.some((f) => f.type === 'TaskUpdated' && f.stream === taskStream(inMine)),
    'an update naming no project',
  );
  assert.ok(agentWork.some((f) => f.type === 'ProjectUpdated'));
  assert.not.ok(agentWork.some((f) => f.stream === taskStream(inOther) || f.stream === agentStream(otherAgent.id)));
  for (const ws of [admin, account, agentSocket]) ws.close();
});

test('/ws/live counts agents and tasks by status and the chat turns of the last minute', async ({ s, keys }) => {
  const project = await createProject(s, keys.adminKey);
  const agent = await spawn(s, keys.adminKey, project);
  assert.is(
    (
      await http(`${s.orch}/api/v1/agents/${agent.id}/kill`, {
        method: 'POST',
        headers: { 'X-API-Key': keys.adminKey },
      })
    ).status,
    200,
  );
  for (const status of ['todo', 'todo', 'done']) {
    const r = await http(`${s.orch}/api/v1/tasks`, {
      headers: { 'X-API-Key': keys.adminKey },
      json: { project_id: project, title: 't', priority: 'low', status },
    });
    assert.is(r.status, 201);
  }
  const slug = `live-${randomUUID().slice(0, 8)}`;
  assert.is(
    (
      await http(`${s.orch}/api/v1/agent-chat/profiles`, {
        headers: { 'X-API-Key': keys.adminKey },
        json: { slug, name: 'Live', security_tier: 1 },
      })
    ).status,
    201,
  );
  for (let i = 0; i < 2; i++)
    assert.is(
      (await http(`${s.orch}/api/v1/public/agents/chat/${slug}`, { json: { message: `hello ${i}` } })).status,
      200,
    );

  const live = await connectWs(s.orch, '/ws/live', { 'X-API-Key': keys.adminKey });
  const frame = await live.next((f) => f.type === 'status');
  live.close();
  // Counts over the whole history of this suite: at least what this test made.
  assert.ok(frame.agents_by_status.killed >= 1, JSON.stringify(frame.agents_by_status));
  assert.ok(frame.tasks_by_status.todo >= 2 && frame.tasks_by_status.done >= 1, JSON.stringify(frame.tasks_by_status));
  assert.is(frame.chat_turns_per_minute, 2);
  assert.not.ok(JSON.stringify(frame).includes('hello'));
});

test.run();
