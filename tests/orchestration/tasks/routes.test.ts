// Tasks through real HTTP (in-process): every field and default, each 400 naming a column, the
// filters and pagination, and authority over a task for each kind of caller: its creator account,
// the owner of its project, an agent of its project, the agent that created it, an agent of
// another project, an admin, and a stranger (who gets 403 and leaves the task unchanged); the web
// console's mirrors under /api/tasks (browser sessions only).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { agentWithKey, createProject, startAgentApps, type AgentKeys } from '../../support/agents.ts';
import { browser, createAccount, login, type Account } from '../../support/principals.ts';
import { http, type TestServices } from '../../support/services.ts';
import { taskStream } from '../../../domain/orchestration/streams.ts';

const key = (k: string) => ({ 'X-API-Key': k });
const MISSING = '00000000-0000-4000-8000-00000000dead';

interface Ctx {
  s: TestServices;
  keys: AgentKeys;
  owner: Account;
  creator: Account;
  stranger: Account;
  reader: Account;
  project: string;
  otherProject: string;
  agent: { id: string; apiKey: string };
  foreignAgent: { id: string; apiKey: string };
}
const test = suite<Ctx>('tasks routes');

test.before(async (ctx) => {
  ({ s: ctx.s, keys: ctx.keys } = await startAgentApps('tasks_routes'));
  const { s, keys } = ctx;
  [ctx.owner, ctx.creator, ctx.stranger, ctx.reader] = await Promise.all([
    createAccount(s, keys.adminKey, 'user'),
    createAccount(s, keys.adminKey, 'user'),
    createAccount(s, keys.adminKey, 'user'),
    createAccount(s, keys.adminKey, 'readonly'),
  ]);
  ctx.project = await createProject(s, ctx.owner.apiKey);
  ctx.otherProject = await createProject(s, ctx.stranger.apiKey);
  ctx.agent = await agentWithKey(s, keys, ctx.project);
  ctx.foreignAgent = await agentWithKey(s, keys, ctx.otherProject);
});
test.after(async ({ s }) => s?.close());

const create = (ctx: Ctx, who: string, body: Record<string, unknown>) =>
  http(`${ctx.s.orch}/api/v1/tasks`, {
    headers: key(who),
    json: { project_id: ctx.project, title: 'A task', priority: 'medium', ...body },
  });

test('create: defaults, every field, depends_on ignored, created_by_user the caller', async (ctx) => {
  const parent = await create(ctx, ctx.creator.apiKey, { title: 'Parent' });
  assert.is(parent.status, 201, parent.text);
  assert.is(parent.body.status, 'backlog');
  assert.is(parent.body.created_by, null);
  assert.is(parent.body.created_by_user, ctx.creator.id);
  assert.equal(parent.body.depends_on, []);
  const full = await create(ctx, ctx.creator.apiKey, {
    title: 'x'.repeat(500),
    description: 'd',
    priority: 'critical',
    status: 'todo',
    directive_id: MISSING,
    parent_task_id: parent.body.id,
    branch_name: 'feature/x',
    metadata: { a: [1] },
    depends_on: [parent.body.id],
    created_by: ctx.agent.id,
  });
  assert.is(full.status, 201, full.text);
  const t = full.body;
  assert.equal(
    [t.priority, t.status, t.directive_id, t.parent_task_id, t.branch_name, t.metadata, t.depends_on],
    ['critical', 'todo', MISSING, parent.body.id, 'feature/x', { a: [1] }, []],
  );
  assert.is(t.created_by, null, 'created_by from the body only for an admin');
  assert.equal(Object.keys(t).sort(), [
    'assigned_agent_id',
    'branch_name',
    'created_at',
    'created_by',
    'created_by_user',
    'depends_on',
    'description',
    'directive_id',
    'id',
    'metadata',
    'parent_task_id',
    'priority',
    'project_id',
    'status',
    'title',
    'updated_at',
  ]);
  assert.equal((await http(`${ctx.s.orch}/api/v1/tasks/${t.id}`, { headers: key(ctx.reader.apiKey) })).body, t);
});

test("create: created_by is the admin's to name, an agent's own, else null", async (ctx) => {
  const byAdmin = await create(ctx, ctx.keys.adminKey, { created_by: ctx.agent.id });
  assert.is(byAdmin.body.created_by, ctx.agent.id);
  const adminNone = await create(ctx, ctx.keys.adminKey, {});
  assert.is(adminNone.body.created_by, null);
  const byAgent = await create(ctx, ctx.agent.apiKey, { created_by: ctx.foreignAgent.id });
  assert.is(byAgent.status, 201, byAgent.text);
  assert.is(byAgent.body.created_by, ctx.agent.id);
  assert.is(byAgent.body.created_by_user, ctx.agent.id);
});

test('create: 400 for each invalid value, and for each reference to nothing naming its column', async (ctx) => {
  for (const [body, fragment] of [
    [{ priority: 'urgent' }, 'priority'],
    [{ status: 'open' }, 'status'],
    [{ title: '' }, 'title'],
    [{ title: 'x'.repeat(501) }, 'title'],
    [{ priority: undefined }, 'priority'],
    [{ project_id: 'nope' }, 'project_id'],
    [{ parent_task_id: 'nope' }, 'parent_task_id'],
  ] as const) {
    const r = await create(ctx, ctx.creator.apiKey, body);
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error, 'validation_failed');
    assert.match(r.body.message, fragment);
  }
  const noTitle = await http(`${ctx.s.orch}/api/v1/tasks`, {
    headers: key(ctx.creator.apiKey),
    json: { project_id: ctx.project, priority: 'low' },
  });
  assert.is(noTitle.status, 400);
  for (const [body, column, message] of [
    [{ project_id: MISSING }, 'project_id', 'project_id must reference an existing project'],
    [{ parent_task_id: MISSING }, 'parent_task_id', 'parent_task_id must reference an existing task'],
  ] as const) {
    const r = await create(ctx, ctx.creator.apiKey, body);
    assert.is(r.status, 400);
    assert.equal([r.body.error, r.body.column, r.body.message], ['invalid_reference', column, message]);
  }
  const agentRef = await create(ctx, ctx.keys.adminKey, { created_by: MISSING });
  assert.equal(
    [agentRef.status, agentRef.body.column, agentRef.body.message],
    [400, 'created_by', 'created_by must reference an existing agent'],
  );
  const ro = await create(ctx, ctx.reader.apiKey, {});
  assert.equal([ro.status, ro.body.error], [403, 'insufficient_role']);
  assert.is((await http(`${ctx.s.orch}/api/v1/tasks`, { json: {} })).status, 401);
});

test('list: filters by project and status, paginated; an unknown status is 400', async (ctx) => {
  const other = await create(ctx, ctx.stranger.apiKey, {
    project_id: ctx.otherProject,
    status: 'in_review',
    title: 'Elsewhere',
  });
  assert.is(other.status, 201);
  const url = `${ctx.s.orch}/api/v1/tasks`;
  const byProject = await http(`${url}?project_id=${ctx.otherProject}`, { headers: key(ctx.reader.apiKey) });
  assert.equal(
    byProject.body.tasks.map((t: { id: string }) => t.id),
    [other.body.id],
  );
  const byStatus = await http(`${url}?status=in_review`, { headers: key(ctx.reader.apiKey) });
  assert.ok(byStatus.body.tasks.every((t: { status: string }) => t.status === 'in_review'));
  const both = await http(`${url}?project_id=${ctx.project}&status=in_review`, { headers: key(ctx.reader.apiKey) });
  assert.is(both.body.total, 0);
  const paged = await http(`${url}?limit=2&offset=1`, { headers: key(ctx.reader.apiKey) });
  assert.equal([paged.body.tasks.length, paged.body.limit, paged.body.offset], [2, 2, 1]);
  assert.ok(paged.body.total >= 5);
  assert.is((await http(`${url}?status=urgent`, { headers: key(ctx.reader.apiKey) })).status, 400);
  assert.is((await http(`${url}?project_id=nope`, { headers: key(ctx.reader.apiKey) })).status, 400);
  assert.is(
    (await http(`${url}?unknown=1`, { headers: key(ctx.reader.apiKey) })).status,
    200,
    'unknown query parameters are dropped',
  );
  assert.is((await http(`${url}/${MISSING}`, { headers: key(ctx.reader.apiKey) })).body.error, 'task_not_found');
});

test('authority: creator, project owner, agent of the project, creating agent and admin may change; others 403, task unchanged', async (ctx) => {
  const { s } = ctx;
  const task = (await create(ctx, ctx.creator.apiKey, { title: 'Governed' })).body;
  const byForeign = (
    await create(ctx, ctx.keys.adminKey, { title: 'Made by the foreign agent', created_by: ctx.foreignAgent.id })
  ).body;
  const patch = (who: string, id: string, body: Record<string, unknown>) =>
    http(`${s.orch}/api/v1/tasks/${id}`, { method: 'PATCH', headers: key(who), json: body });
  const allowed: [string, string, string][] = [
    ['creator', ctx.creator.apiKey, task.id],
    ['project owner', ctx.owner.apiKey, task.id],
    ['agent of the project', ctx.agent.apiKey, task.id],
    ['admin', ctx.keys.adminKey, task.id],
    ['creating agent (of another project)', ctx.foreignAgent.apiKey, byForeign.id],
  ];
  for (const [who, k, id] of allowed) {
    const r = await patch(k, id, { title: `by ${who}` });
    assert.is(r.status, 200, `${who}: ${r.text}`);
    assert.is(r.body.title, `by ${who}`);
  }
  for (const [who, k] of [
    ['stranger', ctx.stranger.apiKey],
    ['agent of another project', ctx.foreignAgent.apiKey],
    ['runner', ctx.keys.runnerKey],
  ] as const) {
    for (const [method, suffix, body] of [
      ['PATCH', '', { title: 'stolen', status: 'done' }],
      ['DELETE', '', undefined],
      ['POST', '/assign', { agent_id: ctx.agent.id }],
    ] as const) {
      const r = await http(`${s.orch}/api/v1/tasks/${task.id}${suffix}`, {
        method,
        headers: key(k),
        ...(body ? { json: body } : {}),
      });
      assert.is(r.status, 403, `${who} ${method}${suffix}: ${r.text}`);
      assert.is(r.body.error, 'task_authority_required');
    }
  }
  const after = await http(`${s.orch}/api/v1/tasks/${task.id}`, { headers: key(ctx.reader.apiKey) });
  assert.equal(
    [after.body.title, after.body.status, after.body.assigned_agent_id],
    ['by admin', 'backlog', null],
    'refused requests changed nothing',
  );
  const ro = await patch(ctx.reader.apiKey, task.id, { title: 'ro' });
  assert.equal([ro.status, ro.body.error], [403, 'insufficient_role']);
});

test('patch: partial, statuses, parent reference; 404 for no task', async (ctx) => {
  const { s } = ctx;
  const task = (await create(ctx, ctx.creator.apiKey, {})).body;
  const url = `${s.orch}/api/v1/tasks/${task.id}`;
  const patch = (body: Record<string, unknown>) =>
    http(url, { method: 'PATCH', headers: key(ctx.creator.apiKey), json: body });
  for (const status of ['todo', 'in_progress', 'in_review', 'done', 'cancelled', 'backlog']) {
    const r = await patch({ status });
    assert.is(r.body.status, status, r.text);
  }
  const r = await patch({ description: null, branch_name: 'b', metadata: { k: 'v' }, priority: 'low' });
  assert.equal(
    [r.body.description, r.body.branch_name, r.body.metadata, r.body.priority, r.body.title],
    [null, 'b', { k: 'v' }, 'low', 'A task'],
  );
  assert.is((await patch({ status: 'urgent' })).status, 400);
  assert.is((await patch({ priority: 'urgent' })).status, 400);
  const self = await patch({ parent_task_id: task.id });
  assert.equal([self.status, self.body.column], [400, 'parent_task_id']);
  const none = await patch({ parent_task_id: MISSING });
  assert.equal([none.status, none.body.column], [400, 'parent_task_id']);
  assert.is(
    (
      await http(`${s.orch}/api/v1/tasks/${MISSING}`, {
        method: 'PATCH',
        headers: key(ctx.keys.adminKey),
        json: { title: 'x' },
      })
    ).status,
    404,
  );
  for (const method of ['GET', 'PATCH', 'DELETE']) {
    const malformed = await http(`${s.orch}/api/v1/tasks/not-a-uuid`, {
      method,
      headers: key(ctx.keys.adminKey),
      ...(method === 'PATCH' ? { json: { title: 'x' } } : {}),
    });
    assert.equal([malformed.status, malformed.body.error], [404, 'task_not_found'], method);
  }
});

test('assign: the agent must exist (400 naming agent_id); sets assigned_agent_id', async (ctx) => {
  const { s } = ctx;
  const task = (await create(ctx, ctx.owner.apiKey, {})).body;
  const assign = (agent_id: string) =>
    http(`${s.orch}/api/v1/tasks/${task.id}/assign`, { headers: key(ctx.owner.apiKey), json: { agent_id } });
  const missing = await assign(MISSING);
  assert.equal(
    [missing.status, missing.body.error, missing.body.column, missing.body.message],
    [400, 'invalid_reference', 'agent_id', 'agent_id must reference an existing agent'],
  );
  assert.is((await assign('nope')).status, 400);
  const ok = await assign(ctx.agent.id);
  assert.is(ok.status, 200, ok.text);
  assert.is(ok.body.assigned_agent_id, ctx.agent.id);
});

test("delete: 204, then 404; the events are on the task's stream", async (ctx) => {
  const { s } = ctx;
  const task = (await create(ctx, ctx.creator.apiKey, {})).body;
  await http(`${s.orch}/api/v1/tasks/${task.id}`, {
    method: 'PATCH',
    headers: key(ctx.creator.apiKey),
    json: { status: 'todo', title: 'Renamed' },
  });
  await http(`${s.orch}/api/v1/tasks/${task.id}/assign`, {
    headers: key(ctx.creator.apiKey),
    json: { agent_id: ctx.agent.id },
  });
  const del = await http(`${s.orch}/api/v1/tasks/${task.id}`, { method: 'DELETE', headers: key(ctx.creator.apiKey) });
  assert.is(del.status, 204);
  assert.is((await http(`${s.orch}/api/v1/tasks/${task.id}`, { headers: key(ctx.creator.apiKey) })).status, 404);
  assert.is(
    (await http(`${s.orch}/api/v1/tasks/${task.id}`, { method: 'DELETE', headers: key(ctx.creator.apiKey) })).status,
    404,
  );
  const stream = await s.platform.store.readStream(taskStream(task.id));
  assert.equal(
    stream.map((e) => e.type),
    ['TaskCreated', 'TaskUpdated', 'TaskStatusChanged', 'TaskAssigned', 'TaskDeleted'],
  );
});

test("the web console's mirrors /api/tasks...: a session creates, lists, moves and assigns; authority and CSRF hold; a key gets 403 session_required", async (ctx) => {
  const { s } = ctx;
  const owner = browser(s, await login(s, ctx.owner));
  const made = await http(`${s.orch}/api/tasks`, {
    headers: owner,
    json: { project_id: ctx.project, title: 'On the board', priority: 'high' },
  });
  assert.is(made.status, 201, made.text);
  assert.is(made.body.created_by_user, ctx.owner.id);
  const id = made.body.id as string;
  const listed = await http(`${s.orch}/api/tasks?project_id=${ctx.project}&limit=200`, { headers: owner });
  assert.ok(listed.body.tasks.some((t: { id: string }) => t.id === id));
  const moved = await http(`${s.orch}/api/tasks/${id}`, {
    method: 'PATCH',
    headers: owner,
    json: { status: 'in_progress' },
  });
  assert.equal([moved.status, moved.body.status], [200, 'in_progress']);
  const assigned = await http(`${s.orch}/api/tasks/${id}/assign`, { headers: owner, json: { agent_id: ctx.agent.id } });
  assert.equal([assigned.status, assigned.body.assigned_agent_id], [200, ctx.agent.id]);
  const read = await http(`${s.orch}/api/tasks/${id}`, { headers: owner });
  assert.equal(read.body, (await http(`${s.orch}/api/v1/tasks/${id}`, { headers: key(ctx.owner.apiKey) })).body);
  // A stranger's session has no authority: 403 with the server's message, the task unchanged.
  const refused = await http(`${s.orch}/api/tasks/${id}`, {
    method: 'PATCH',
    headers: browser(s, await login(s, ctx.stranger)),
    json: { status: 'done' },
  });
  assert.equal(
    [refused.status, refused.body.error, refused.body.message],
    [403, 'task_authority_required', 'you have no authority over this task'],
  );
  const session = await login(s, ctx.owner);
  const noCsrf = await http(`${s.orch}/api/tasks/${id}`, {
    method: 'PATCH',
    headers: { cookie: session.cookie },
    json: { status: 'done' },
  });
  assert.equal([noCsrf.status, noCsrf.body.error], [403, 'csrf_failed']);
  assert.is((await http(`${s.orch}/api/tasks/${id}`, { headers: owner })).body.status, 'in_progress');
  for (const [method, path] of [
    ['GET', '/api/tasks'],
    ['GET', `/api/tasks/${id}`],
    ['POST', '/api/tasks'],
    ['PATCH', `/api/tasks/${id}`],
    ['POST', `/api/tasks/${id}/assign`],
  ] as const) {
    const keyed = await http(`${s.orch}${path}`, {
      method,
      headers: key(ctx.owner.apiKey),
      ...(method === 'GET' ? {} : { json: {} }),
    });
    assert.equal([keyed.status, keyed.body.error], [403, 'session_required'], `${method} ${path}`);
  }
  // Deleting stays on /api/v1/ (the console does not delete tasks).
  assert.is((await http(`${s.orch}/api/tasks/${id}`, { method: 'DELETE', headers: owner })).status, 404);
});

test.run();
