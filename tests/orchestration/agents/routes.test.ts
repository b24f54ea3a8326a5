// Agents through real HTTP (in-process): spawn and its record, list and read, stop and kill (the
// project's owner, the spawner or an admin), the credential (minted sealed, never returned by
// spawn, rotated by an admin session only, deactivated when the agent ends), the runner's
// protocol (claims within max_concurrent_agents, reports, recovery), MCP servers, chat with an
// agent through the pipeline against a local OpenAI-compatible server, the commander link, and
// the web console's mirrors (spawn, list, read, stop, kill; browser sessions only).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimAgent, createProject, spawn, startAgentApps, type AgentKeys } from '../../support/agents.ts';
import { completion, startOpenAiServer, type OpenAiServer } from '../../support/openai-server.ts';
import { browser, createAccount, login, type Account } from '../../support/principals.ts';
import { http, logText, type TestServices } from '../../support/services.ts';

const key = (k: string) => ({ 'X-API-Key': k });
const MISSING = '00000000-0000-4000-8000-00000000dead';

interface Ctx {
  s: TestServices;
  keys: AgentKeys;
  owner: Account;
  spawner: Account;
  stranger: Account;
  reader: Account;
  llm: OpenAiServer;
  overloaded: boolean;
}
const test = suite<Ctx>('agents routes');

test.before(async (ctx) => {
  ctx.overloaded = false;
  ctx.llm = await startOpenAiServer(() =>
    ctx.overloaded
      ? { status: 529, headers: { 'retry-after': '0' }, body: { error: { message: 'overloaded' } } }
      : { body: completion({ text: 'Agent reply.', usage: [10_000, 2_000] }) },
  );
  ({ s: ctx.s, keys: ctx.keys } = await startAgentApps('agents_routes', {
    ORCH_LLM_PROVIDER: 'openai',
    ORCH_LLM_BASE_URL: ctx.llm.url,
    ORCH_LLM_RETRY_MAX: '2',
    ORCH_LLM_RETRY_CEIL_MS: '1',
  }));
  [ctx.owner, ctx.spawner, ctx.stranger, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ctx.keys.adminKey, 'user'),
    createAccount(ctx.s, ctx.keys.adminKey, 'user'),
    createAccount(ctx.s, ctx.keys.adminKey, 'user'),
    createAccount(ctx.s, ctx.keys.adminKey, 'readonly'),
  ]);
});
test.after(async ({ s, llm }) => {
  await s?.close();
  await llm?.close();
});

test('spawn: 201 with the record, queued, defaults from the role; the credential is never returned', async ({
  s,
  owner,
  spawner,
}) => {
  const project = await createProject(s, owner.apiKey);
  const r = await http(`${s.orch}/api/v1/spawn`, {
    headers: key(spawner.apiKey),
    json: { name: 'Build_er-1', role: 'builder', project_id: project },
  });
  assert.is(r.status, 201, r.text);
  assert.equal(Object.keys(r.body).sort(), [
    'base_branch',
    'created_at',
    'created_by_user',
    'ended_at',
    'id',
    'model',
    'name',
    'persistent',
    'project_id',
    'role',
    'started_at',
    'status',
    'status_reason',
    'template',
    'total_cost_usd',
  ]);
  const a = r.body;
  assert.equal(
    [
      a.status,
      a.template,
      a.model,
      a.base_branch,
      a.persistent,
      a.total_cost_usd,
      a.created_by_user,
      a.started_at,
      a.ended_at,
    ],
    ['queued', 'builder', 'local', 'main', false, 0, spawner.id, null, null],
  );
  const coordinator = await spawn(s, spawner.apiKey, project, { role: 'coordinator' });
  assert.is(coordinator.template, 'coordinator');
  const custom = await spawn(s, spawner.apiKey, project, {
    role: 'custom',
    custom_agent_md: '# Be brief',
    model: 'gpt-4o-mini',
    base_branch: 'develop',
    persistent: true,
    initial_prompt: 'Go',
  });
  assert.equal(
    [custom.template, custom.model, custom.base_branch, custom.persistent],
    ['custom', 'gpt-4o-mini', 'develop', true],
  );
  // The credential: a keyed principal of kind agent with the agent's id, its key sealed in the log.
  const { rows } = await s.db.pool.query('SELECT principal_type, role, is_active FROM users WHERE id = $1', [a.id]);
  assert.equal(rows[0], { principal_type: 'agent', role: 'user', is_active: true });
  const claim = await claimAgent(s, s.env.ORCH_RUNNER_API_KEY!, a.id);
  assert.match(claim.credential, /^orch_/);
  assert.not.ok((await logText(s)).includes(claim.credential), 'the agent key is sealed in the log');
  const me = await http(`${s.orch}/api/v1/me`, { headers: key(claim.credential) });
  assert.is(me.body.id, a.id);
});

test('spawn: 400 for each invalid field and for a project that does not exist; readonly 403; a session may spawn', async ({
  s,
  owner,
  reader,
  spawner,
}) => {
  const project = await createProject(s, owner.apiKey);
  const base = { name: 'ok', role: 'builder', project_id: project };
  for (const body of [
    { ...base, name: 'has space' },
    { ...base, name: 'x'.repeat(65) },
    { ...base, name: '' },
    { ...base, role: 'Builder' },
    { ...base, role: 'manager' },
    { ...base, project_id: 'nope' },
    { name: 'ok', role: 'builder' },
    { ...base, template: 'planner' },
    { ...base, template: 'custom' },
    { ...base, custom_agent_md: '# only with custom' },
    { ...base, persistent: 'yes' },
    { ...base, base_branch: '../etc' },
  ]) {
    const r = await http(`${s.orch}/api/v1/spawn`, { headers: key(owner.apiKey), json: body });
    assert.is(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
  }
  const none = await http(`${s.orch}/api/v1/spawn`, {
    headers: key(owner.apiKey),
    json: { ...base, project_id: MISSING },
  });
  assert.equal([none.status, none.body.error, none.body.column], [400, 'invalid_reference', 'project_id']);
  const ro = await http(`${s.orch}/api/v1/spawn`, { headers: key(reader.apiKey), json: base });
  assert.equal([ro.status, ro.body.error], [403, 'insufficient_role']);
  assert.is((await http(`${s.orch}/api/v1/spawn`, { json: base })).status, 401);
  const session = await login(s, spawner);
  const viaSession = await http(`${s.orch}/api/v1/spawn`, { headers: browser(s, session), json: base });
  assert.is(viaSession.status, 201, viaSession.text);
});

test('list and read: any key; paginated, by project; 404 for no agent', async ({ s, owner, reader }) => {
  const project = await createProject(s, owner.apiKey);
  const a = await spawn(s, owner.apiKey, project);
  const b = await spawn(s, owner.apiKey, project);
  const list = await http(`${s.orch}/api/v1/agents?project_id=${project}`, { headers: key(reader.apiKey) });
  assert.equal(
    list.body.agents.map((x: { id: string }) => x.id),
    [a.id, b.id],
  );
  assert.is(list.body.total, 2);
  const paged = await http(`${s.orch}/api/v1/agents?limit=1`, { headers: key(reader.apiKey) });
  assert.equal([paged.body.agents.length, paged.body.limit], [1, 1]);
  assert.equal((await http(`${s.orch}/api/v1/agents/${a.id}`, { headers: key(reader.apiKey) })).body, a);
  assert.is(
    (await http(`${s.orch}/api/v1/agents/${MISSING}`, { headers: key(reader.apiKey) })).body.error,
    'agent_not_found',
  );
  assert.is((await http(`${s.orch}/api/v1/agents/nope`, { headers: key(reader.apiKey) })).status, 404);
  assert.is((await http(`${s.orch}/api/v1/agents`)).status, 401);
});

test('stop and kill: the project owner, the spawner or an admin; others 403; the credential stops working', async ({
  s,
  keys,
  owner,
  spawner,
  stranger,
}) => {
  const project = await createProject(s, owner.apiKey);
  const agents = [];
  for (let i = 0; i < 4; i++) agents.push(await spawn(s, spawner.apiKey, project));
  const act = (who: string, id: string, verb: 'stop' | 'kill') =>
    http(`${s.orch}/api/v1/agents/${id}/${verb}`, { method: 'POST', headers: key(who) });
  const refused = await act(stranger.apiKey, agents[0]!.id, 'kill');
  assert.equal([refused.status, refused.body.error], [403, 'agent_authority_required']);
  assert.is(
    (await http(`${s.orch}/api/v1/agents/${agents[0]!.id}`, { headers: key(owner.apiKey) })).body.status,
    'queued',
  );
  const claim = await claimAgent(s, keys.runnerKey, agents[0]!.id);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: key(claim.credential) })).status, 200);
  for (const [who, agent, verb, status] of [
    [owner.apiKey, agents[0]!, 'kill', 'killed'],
    [spawner.apiKey, agents[1]!, 'stop', 'stopped'],
    [keys.adminKey, agents[2]!, 'kill', 'killed'],
  ] as const) {
    const r = await act(who, agent.id, verb);
    assert.is(r.status, 200, r.text);
    assert.is(r.body.status, status);
    assert.type(r.body.ended_at, 'string');
  }
  assert.is(
    (await http(`${s.orch}/api/v1/me`, { headers: key(claim.credential) })).status,
    401,
    "a killed agent's key is refused",
  );
  assert.is((await act(owner.apiKey, agents[0]!.id, 'kill')).status, 200, 'repeating is harmless');
  const ended = await act(owner.apiKey, agents[0]!.id, 'stop');
  assert.equal([ended.status, ended.body.error], [409, 'agent_ended']);
  assert.is((await act(owner.apiKey, MISSING, 'stop')).status, 404);
  assert.is((await http(`${s.orch}/api/v1/agents/${agents[3]!.id}/stop`, { method: 'POST' })).status, 401);
});

test("credential rotation: an admin's interactive session only; the new key works once shown, the old one is refused", async ({
  s,
  keys,
  owner,
  spawner,
}) => {
  const project = await createProject(s, owner.apiKey);
  const agent = await spawn(s, owner.apiKey, project);
  const old = (await claimAgent(s, keys.runnerKey, agent.id)).credential;
  const url = `${s.orch}/api/v1/agents/${agent.id}/credential/rotate`;
  const keyed = await http(url, { method: 'POST', headers: key(keys.adminKey) });
  assert.equal([keyed.status, keyed.body.error], [403, 'api_key_rotation_requires_interactive_session']);
  const admin = await createAccount(s, keys.adminKey, 'admin');
  const adminSession = await login(s, admin);
  const userSession = await login(s, spawner);
  const notAdmin = await http(url, { method: 'POST', headers: browser(s, userSession) });
  assert.equal([notAdmin.status, notAdmin.body.error], [403, 'api_key_rotation_requires_admin']);
  const noCsrf = await http(url, { method: 'POST', headers: { ...browser(s, adminSession), 'x-csrf-token': 'wrong' } });
  assert.equal([noCsrf.status, noCsrf.body.error], [403, 'api_key_rotation_csrf']);
  const unknown = await http(`${s.orch}/api/v1/agents/${MISSING}/credential/rotate`, {
    method: 'POST',
    headers: browser(s, adminSession),
  });
  assert.equal([unknown.status, unknown.body.error], [404, 'api_key_rotation_not_found']);
  assert.is((await http(url, { method: 'POST' })).status, 401);
  const rotated = await http(url, { method: 'POST', headers: browser(s, adminSession) });
  assert.is(rotated.status, 200, rotated.text);
  assert.is(rotated.headers.get('cache-control'), 'no-store');
  assert.is(rotated.body.agent_id, agent.id);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: key(rotated.body.api_key) })).body.id, agent.id);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: key(old) })).status, 401);
  const { rows } = await s.db.pool.query(
    `SELECT outcome, reason FROM api_key_rotations WHERE target_user_id = $1 ORDER BY at, outcome`,
    [agent.id],
  );
  assert.ok(rows.some((r) => r.outcome === 'rotated'));
  assert.ok(rows.filter((r) => r.outcome === 'refused').length >= 3, 'refusals are recorded');
});

test('runner: claims respect max_concurrent_agents; reports move the agent; a report after a kill is 409', async ({
  s,
  keys,
  owner,
}) => {
  const runner = key(keys.runnerKey);
  // Leave nothing else queued.
  while (
    (await http(`${s.orch}/api/v1/runner/claim`, { headers: runner, json: { runner_instance: 'drain' } })).body.agent
  );
  const project = await createProject(s, owner.apiKey, { max_concurrent_agents: 1 });
  const first = await spawn(s, owner.apiKey, project);
  const second = await spawn(s, owner.apiKey, project);
  const claim = () => http(`${s.orch}/api/v1/runner/claim`, { headers: runner, json: { runner_instance: 'r1' } });
  const got = await claim();
  assert.is(got.body.agent.id, first.id);
  assert.is(got.headers.get('cache-control'), 'no-store');
  assert.is(got.body.agent.status, 'claimed');
  assert.match(got.body.system_prompt, /builder agent/);
  assert.is((await claim()).body.agent, null, "the project's one slot is taken");
  const report = (id: string, body: Record<string, unknown>) =>
    http(`${s.orch}/api/v1/runner/agents/${id}/report`, { headers: runner, json: body });
  assert.is((await report(first.id, { event: 'running', runner_instance: 'other' })).body.error, 'agent_not_held');
  const running = await report(first.id, { event: 'running', runner_instance: 'r1' });
  assert.equal([running.status, running.body.status], [200, 'running']);
  await report(first.id, { event: 'cost', cost_usd: 0.25 });
  await report(first.id, { event: 'cost', cost_usd: 0.5 });
  assert.is((await report(first.id, { event: 'cost', cost_usd: -1 })).status, 400);
  assert.is((await report(first.id, { event: 'finished', runner_instance: 'r1' })).status, 400);
  const done = await report(first.id, { event: 'completed', runner_instance: 'r1' });
  assert.is(done.body.status, 'completed');
  const record = (await http(`${s.orch}/api/v1/agents/${first.id}`, { headers: runner })).body;
  assert.equal([record.status, record.total_cost_usd], ['completed', 0.75]);
  assert.type(record.started_at, 'string');
  // The slot is free again.
  assert.is((await claim()).body.agent.id, second.id);
  await http(`${s.orch}/api/v1/agents/${second.id}/kill`, { method: 'POST', headers: key(owner.apiKey) });
  const late = await report(second.id, { event: 'completed', runner_instance: 'r1' });
  assert.equal([late.status, late.body.error, late.body.status], [409, 'agent_ended', 'killed']);
  assert.is((await http(`${s.orch}/api/v1/agents/${second.id}`, { headers: runner })).body.status, 'killed');
  assert.is((await report(MISSING, { event: 'cost', cost_usd: 1 })).status, 404);
});

test('runner: recover fails what a runner held, with a reason; queued agents stay queued', async ({
  s,
  keys,
  owner,
}) => {
  const runner = key(keys.runnerKey);
  while (
    (await http(`${s.orch}/api/v1/runner/claim`, { headers: runner, json: { runner_instance: 'drain' } })).body.agent
  );
  const project = await createProject(s, owner.apiKey, { max_concurrent_agents: 2 });
  const [a, b, c] = [
    await spawn(s, owner.apiKey, project),
    await spawn(s, owner.apiKey, project),
    await spawn(s, owner.apiKey, project),
  ];
  await claimAgent(s, keys.runnerKey, a!.id, 'crashed');
  await claimAgent(s, keys.runnerKey, b!.id, 'crashed');
  await http(`${s.orch}/api/v1/runner/agents/${b!.id}/report`, {
    headers: runner,
    json: { event: 'running', runner_instance: 'crashed' },
  });
  const r = await http(`${s.orch}/api/v1/runner/recover`, { headers: runner, json: { runner_instance: 'restarted' } });
  assert.is(r.status, 200);
  assert.ok(r.body.failed.includes(a!.id) && r.body.failed.includes(b!.id), 'both held agents are failed');
  assert.not.ok(r.body.failed.includes(c!.id));
  for (const id of [a!.id, b!.id]) {
    const agent = (await http(`${s.orch}/api/v1/agents/${id}`, { headers: runner })).body;
    assert.is(agent.status, 'failed');
    assert.match(agent.status_reason, /^runner_restarted/);
  }
  assert.is((await http(`${s.orch}/api/v1/agents/${c!.id}`, { headers: runner })).body.status, 'queued');
});

test('runner routes serve the runner only', async ({ s, keys, owner }) => {
  for (const who of [owner.apiKey, keys.adminKey]) {
    for (const path of ['/api/v1/runner/claim', '/api/v1/runner/recover']) {
      const r = await http(`${s.orch}${path}`, { headers: key(who), json: { runner_instance: 'x' } });
      assert.equal([r.status, r.body.error], [403, 'runner_only']);
    }
  }
  assert.is((await http(`${s.orch}/api/v1/runner/claim`, { json: { runner_instance: 'x' } })).status, 401);
});

test('MCP servers: admin only; the set is replaced; env redacted on read, sealed in the log, in full for the runner', async ({
  s,
  keys,
  owner,
}) => {
  const url = `${s.orch}/api/v1/agents/mcp-servers`;
  const admin = key(keys.adminKey);
  const set = [
    {
      name: 'files',
      command: 'npx',
      args: ['-y', '@mcp/files'],
      env: { TOKEN: 'mcp-secret-value-123' },
      description: 'files',
    },
    { name: 'git', command: 'mcp-git' },
  ];
  const put = await http(url, { method: 'PUT', headers: admin, json: set });
  assert.is(put.status, 200, put.text);
  assert.equal(put.body, [
    { name: 'files', command: 'npx', args: ['-y', '@mcp/files'], env: { TOKEN: '[redacted]' }, description: 'files' },
    { name: 'git', command: 'mcp-git', args: [], env: {}, description: null },
  ]);
  assert.equal((await http(url, { headers: admin })).body, put.body);
  assert.not.ok((await logText(s)).includes('mcp-secret-value-123'), 'env values are sealed in the log');
  const project = await createProject(s, owner.apiKey);
  const agent = await spawn(s, owner.apiKey, project);
  const claim = await claimAgent(s, keys.runnerKey, agent.id);
  assert.equal(claim.mcp_servers[0].env, { TOKEN: 'mcp-secret-value-123' });
  for (const bad of [
    [
      { name: 'a', command: 'x' },
      { name: 'a', command: 'y' },
    ],
    [{ name: 'a', command: '' }],
    [{ name: '', command: 'x' }],
    [{ name: 'a', command: 'x', args: [1] }],
    [{ name: 'a', command: 'x', env: { K: 1 } }],
    [{ command: 'x' }],
    { name: 'a', command: 'x' },
  ]) {
    const r = await http(url, { method: 'PUT', headers: admin, json: bad });
    assert.is(r.status, 400, JSON.stringify(bad));
  }
  assert.equal((await http(url, { headers: admin })).body.length, 2, 'a refused PUT changes nothing');
  for (const who of [owner.apiKey, keys.runnerKey]) {
    assert.is((await http(url, { headers: key(who) })).status, 403);
    assert.is((await http(url, { method: 'PUT', headers: key(who), json: [] })).status, 403);
  }
  assert.equal((await http(url, { method: 'PUT', headers: admin, json: [] })).body, []);
  assert.equal((await http(url, { headers: admin })).body, []);
});

test('chat with an agent: through the pipeline with its template prompt; the cost goes on the agent; overloaded is 503', async (ctx) => {
  const { s, owner, reader } = ctx;
  const project = await createProject(s, owner.apiKey);
  const agent = await spawn(s, owner.apiKey, project, { name: 'talker', model: 'gpt-4o-mini' });
  const url = `${s.orch}/api/v1/agents/${agent.id}/chat`;
  const r = await http(url, { headers: key(reader.apiKey), json: { message: 'How is it going?' } });
  assert.is(r.status, 200, r.text);
  assert.is(r.body.message, 'Agent reply.');
  assert.equal(r.body.tokens, { input: 10_000, output: 2_000, cache_read: 0 });
  // gpt-4o-mini: 15 cents per million input, 60 per million output.
  assert.ok(Math.abs(r.body.cost_cents - (10_000 * 15 + 2_000 * 60) / 1e6) < 1e-9, String(r.body.cost_cents));
  const system = ctx.llm.requests.at(-1)!.messages[0];
  assert.is(system.role, 'system');
  assert.match(system.content, /builder agent/);
  assert.match(system.content, /"talker"/);
  const after = (await http(`${s.orch}/api/v1/agents/${agent.id}`, { headers: key(reader.apiKey) })).body;
  assert.ok(Math.abs(after.total_cost_usd - r.body.cost_cents / 100) < 1e-9);
  assert.is((await http(url, { headers: key(reader.apiKey), json: {} })).status, 400);
  assert.is(
    (await http(`${s.orch}/api/v1/agents/${MISSING}/chat`, { headers: key(reader.apiKey), json: { message: 'hi' } }))
      .status,
    404,
  );
  assert.is((await http(url, { json: { message: 'hi' } })).status, 401);
  ctx.overloaded = true;
  const busy = await http(url, { headers: key(reader.apiKey), json: { message: 'Again?' } });
  ctx.overloaded = false;
  assert.is(busy.status, 503);
  assert.is(busy.body.error, 'model_overloaded');
});

test('commander link: every request without a valid signature is 401 signature_required, whatever key it carries', async ({
  s,
  keys,
}) => {
  for (const [method, path, headers] of [
    ['GET', '/api/v1/commander-link/status', {}],
    ['POST', '/api/v1/commander-link/tasks', key(keys.adminKey)],
    ['GET', '/api/v1/commander-link', key(keys.adminKey)],
    ['PUT', '/api/v1/commander-link/a/b', { 'x-signature': 'forged' }],
  ] as const) {
    const r = await http(`${s.orch}${path}`, { method, headers, ...(method === 'GET' ? {} : { json: {} }) });
    assert.equal([r.status, r.body.error], [401, 'signature_required'], `${method} ${path}`);
  }
});

test("the web console's mirrors: a session spawns with every field, lists, reads, stops and kills; authority and CSRF hold; a key gets 403 session_required", async ({
  s,
  owner,
  spawner,
  stranger,
}) => {
  const project = await createProject(s, owner.apiKey);
  const headers = browser(s, await login(s, spawner));
  const body = {
    name: 'console-agent',
    role: 'custom',
    project_id: project,
    initial_prompt: 'Start here',
    template: 'custom',
    custom_agent_md: '# Do the thing',
    model: 'local',
    base_branch: 'develop',
    persistent: true,
  };
  const spawned = await http(`${s.orch}/api/spawn`, { headers, json: body });
  assert.is(spawned.status, 201, spawned.text);
  assert.equal(
    [
      spawned.body.status,
      spawned.body.template,
      spawned.body.base_branch,
      spawned.body.persistent,
      spawned.body.created_by_user,
    ],
    ['queued', 'custom', 'develop', true, spawner.id],
  );
  const id = spawned.body.id as string;
  const listed = await http(`${s.orch}/api/agents?project_id=${project}`, { headers });
  assert.equal(
    listed.body.agents.map((a: { id: string }) => a.id),
    [id],
  );
  assert.equal(
    (await http(`${s.orch}/api/agents/${id}`, { headers })).body,
    (await http(`${s.orch}/api/v1/agents/${id}`, { headers: key(owner.apiKey) })).body,
  );
  const refused = await http(`${s.orch}/api/agents/${id}/stop`, {
    method: 'POST',
    headers: browser(s, await login(s, stranger)),
  });
  assert.equal([refused.status, refused.body.error], [403, 'agent_authority_required']);
  const session = await login(s, spawner);
  const noCsrf = await http(`${s.orch}/api/agents/${id}/stop`, { method: 'POST', headers: { cookie: session.cookie } });
  assert.equal([noCsrf.status, noCsrf.body.error], [403, 'csrf_failed']);
  const stopped = await http(`${s.orch}/api/agents/${id}/stop`, { method: 'POST', headers });
  assert.equal([stopped.status, stopped.body.status], [200, 'stopped']);
  const other = await http(`${s.orch}/api/spawn`, {
    headers,
    json: { name: 'to-kill', role: 'tester', project_id: project },
  });
  const killed = await http(`${s.orch}/api/agents/${other.body.id}/kill`, { method: 'POST', headers });
  assert.equal([killed.status, killed.body.status], [200, 'killed']);
  for (const [method, path] of [
    ['POST', '/api/spawn'],
    ['GET', '/api/agents'],
    ['GET', `/api/agents/${id}`],
    ['POST', `/api/agents/${id}/stop`],
    ['POST', `/api/agents/${id}/kill`],
  ] as const) {
    const keyed = await http(`${s.orch}${path}`, {
      method,
      headers: key(owner.apiKey),
      ...(path === '/api/spawn' ? { json: body } : {}),
    });
    assert.equal([keyed.status, keyed.body.error], [403, 'session_required'], `${method} ${path}`);
  }
});

test.run();
