// The cockpit summary against a scripted history: every number the spec defines, checked after
// each step, the 30-day cost window moved with the clock, and the projection rebuilt from the
// log giving the same answer.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cockpitProjection } from '../../../projections/orchestration/cockpit.ts';
import { claimAgent, createProject, spawn, startAgentApps, type AgentKeys } from '../../support/agents.ts';
import { browser, createAccount, login } from '../../support/principals.ts';
import { http, type TestServices } from '../../support/services.ts';

const DAY = 86_400_000;
const key = (k: string) => ({ 'X-API-Key': k });

const test = suite<{ s: TestServices; keys: AgentKeys }>('cockpit summary');
test.before(async (ctx) => {
  ({ s: ctx.s, keys: ctx.keys } = await startAgentApps('cockpit_routes'));
});
test.after(async ({ s }) => s?.close());

// First: the last test stops the projection engine (a rebuild), after which writes wait in vain.
test("the web console's mirror /api/cockpit/summary: the same summary for a browser session, 403 session_required for a key", async ({
  s,
  keys,
}) => {
  const reader = await createAccount(s, keys.adminKey, 'readonly');
  const session = await login(s, reader);
  const mirrored = await http(`${s.orch}/api/cockpit/summary`, { headers: browser(s, session) });
  assert.is(mirrored.status, 200, mirrored.text);
  assert.equal(mirrored.body, (await http(`${s.orch}/api/v1/cockpit/summary`, { headers: key(keys.adminKey) })).body);
  const keyed = await http(`${s.orch}/api/cockpit/summary`, { headers: key(keys.adminKey) });
  assert.equal([keyed.status, keyed.body.error], [403, 'session_required']);
  assert.is((await http(`${s.orch}/api/cockpit/summary`)).status, 401);
  const daily = await http(`${s.orch}/api/cockpit/cost/daily`, { headers: browser(s, session) });
  assert.is(daily.status, 200, daily.text);
  assert.equal(daily.body, (await http(`${s.orch}/api/v1/cockpit/cost/daily`, { headers: key(keys.adminKey) })).body);
  assert.is(
    (await http(`${s.orch}/api/cockpit/cost/daily`, { headers: key(keys.adminKey) })).body.error,
    'session_required',
  );
  assert.is((await http(`${s.orch}/api/v1/cockpit/cost/daily`)).status, 401);
});

test('every field against a scripted history', async ({ s, keys }) => {
  const admin = key(keys.adminKey);
  const runner = key(keys.runnerKey);
  const summary = async () => {
    const r = await http(`${s.orch}/api/v1/cockpit/summary`, { headers: admin });
    assert.is(r.status, 200, r.text);
    return r.body;
  };
  const empty = await summary();
  assert.equal(empty, {
    version: (await http(`${s.orch}/api/v1/health`)).body.version,
    projects: [],
    agents: { configured: 0, active: 0, max_concurrent: 0 },
    activity: { last_task_created: null, last_task_completed: null },
    cost: { window: '30d', usd: 0 },
  });

  const alpha = await createProject(s, keys.adminKey, { name: 'alpha', max_concurrent_agents: 2 });
  const beta = await createProject(s, keys.adminKey, { name: 'beta', max_concurrent_agents: 5 });
  const task = async (project: string, status: string) => {
    const r = await http(`${s.orch}/api/v1/tasks`, {
      headers: admin,
      json: { project_id: project, title: status, priority: 'low', status },
    });
    assert.is(r.status, 201, r.text);
    return r.body;
  };
  for (const status of ['backlog', 'todo', 'in_progress', 'in_review', 'cancelled']) await task(alpha, status);
  const b1 = await task(beta, 'backlog');
  const b2 = await task(beta, 'todo');
  const b3 = await task(beta, 'in_progress');
  let s1 = await summary();
  assert.equal(s1.projects, [
    { name: 'alpha', tasks: { open: 2, in_progress: 2, done: 0 } },
    { name: 'beta', tasks: { open: 2, in_progress: 1, done: 0 } },
  ]);
  assert.is(s1.agents.max_concurrent, 7);
  assert.is(s1.activity.last_task_created, b3.created_at);
  assert.is(s1.activity.last_task_completed, null);

  // Moves between buckets, a deletion, a task created done, a rename and a new limit.
  s.clock.advance(60_000);
  const doneNow = await http(`${s.orch}/api/v1/tasks/${b1.id}`, {
    method: 'PATCH',
    headers: admin,
    json: { status: 'done' },
  });
  await http(`${s.orch}/api/v1/tasks/${b2.id}`, { method: 'DELETE', headers: admin });
  await http(`${s.orch}/api/v1/tasks/${b3.id}`, { method: 'PATCH', headers: admin, json: { status: 'cancelled' } });
  const createdDone = await task(alpha, 'done');
  await http(`${s.orch}/api/v1/projects/${beta}`, {
    method: 'PATCH',
    headers: admin,
    json: { name: 'beta-2', max_concurrent_agents: 1 },
  });
  s1 = await summary();
  assert.equal(s1.projects, [
    { name: 'alpha', tasks: { open: 2, in_progress: 2, done: 1 } },
    { name: 'beta-2', tasks: { open: 0, in_progress: 0, done: 1 } },
  ]);
  assert.is(s1.agents.max_concurrent, 3);
  assert.is(s1.activity.last_task_created, createdDone.created_at);
  assert.is(s1.activity.last_task_completed, createdDone.created_at, 'a task created done counts as completed');
  assert.ok(doneNow.body.updated_at <= createdDone.created_at);

  // Agents: configured = not ended, active = running.
  const queued = await spawn(s, keys.adminKey, alpha);
  const running = await spawn(s, keys.adminKey, alpha);
  const claimedOnly = await spawn(s, keys.adminKey, beta);
  const killed = await spawn(s, keys.adminKey, beta);
  for (const a of [running, claimedOnly]) await claimAgent(s, keys.runnerKey, a.id);
  await http(`${s.orch}/api/v1/runner/agents/${running.id}/report`, {
    headers: runner,
    json: { event: 'running', runner_instance: 'test-runner' },
  });
  await http(`${s.orch}/api/v1/agents/${killed.id}/kill`, { method: 'POST', headers: admin });
  assert.equal((await summary()).agents, { configured: 3, active: 1, max_concurrent: 3 });

  // Cost over the last 30 UTC days: spent now, then 29 and 30 days later.
  const cost = (id: string, usd: number) =>
    http(`${s.orch}/api/v1/runner/agents/${id}/report`, { headers: runner, json: { event: 'cost', cost_usd: usd } });
  await cost(running.id, 1.5);
  await cost(claimedOnly.id, 0.25);
  assert.equal((await summary()).cost, { window: '30d', usd: 1.75 });
  s.clock.advance(29 * DAY);
  await cost(running.id, 2);
  assert.is((await summary()).cost.usd, 3.75, 'day 0 is still inside the window on day 29');
  s.clock.advance(DAY);
  assert.is((await summary()).cost.usd, 2, 'day 0 has left the window on day 30');
  await http(`${s.orch}/api/v1/runner/agents/${running.id}/report`, {
    headers: runner,
    json: { event: 'completed', runner_instance: 'test-runner' },
  });
  assert.equal((await summary()).agents, { configured: 2, active: 0, max_concurrent: 3 });
  assert.equal(queued.status, 'queued');

  // The read model rebuilt from the log gives the same answer.
  const live = await summary();
  await s.platform.engine.stop();
  await s.platform.engine.rebuild(cockpitProjection.name);
  assert.equal(await summary(), live);
});

// After the scripted history (the clock is 30 days on; 1.75 USD on day 0, 2 on day 29), read only.
test('cost per UTC day: every day of the window, oldest first, today included; `days` defaults to 30 and is clamped to 1-366', async ({
  s,
  keys,
}) => {
  const daily = async (query = '') => {
    const r = await http(`${s.orch}/api/v1/cockpit/cost/daily${query}`, { headers: key(keys.adminKey) });
    assert.is(r.status, 200, r.text);
    return r.body as { days: number; days_clamped: boolean; series: { day: string; usd: number }[] };
  };
  const today = s.clock.now().toISOString().slice(0, 10);
  const dayOf = (daysAgo: number) => new Date(s.clock.now().getTime() - daysAgo * DAY).toISOString().slice(0, 10);
  const wide = await daily('?days=31');
  assert.equal([wide.days, wide.days_clamped, wide.series.length], [31, false, 31]);
  assert.equal(
    wide.series.map((d) => d.day),
    Array.from({ length: 31 }, (_, i) => dayOf(30 - i)),
  );
  assert.equal(
    wide.series.map((d) => d.usd),
    Array.from({ length: 31 }, (_, i) => (i === 0 ? 1.75 : i === 29 ? 2 : 0)),
  );
  const standard = await daily();
  assert.equal([standard.days, standard.series.length, standard.series.at(-1)!.day], [30, 30, today]);
  assert.is(
    standard.series.reduce((sum, d) => sum + d.usd, 0),
    (await http(`${s.orch}/api/v1/cockpit/summary`, { headers: key(keys.adminKey) })).body.cost.usd,
    "the 30-day series adds up to the summary's cost",
  );
  assert.equal([(await daily('?days=0')).days, (await daily('?days=0')).days_clamped], [1, true]);
  assert.equal((await daily('?days=1')).series, [{ day: today, usd: 0 }]);
  assert.equal(
    [
      (await daily('?days=5000')).days,
      (await daily('?days=5000')).series.length,
      (await daily('?days=5000')).days_clamped,
    ],
    [366, 366, true],
  );
  assert.equal([(await daily('?days=abc')).days, (await daily('?days=abc')).days_clamped], [30, false]);
});

test('needs a key', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/cockpit/summary`);
  assert.equal([r.status, r.body.message], [401, 'missing X-API-Key header']);
});

test.run();
