// The runner end to end: `orchard serve runner` as a real separate process (no database in its
// environment) talking HTTP to a real orchestration server, the agents' models answered by the
// offline local model and by a local OpenAI-compatible server that asks for a tool call.
//
// spawn → the runner claims it → its model calls create_task → the task carries created_by =
// the agent → the agent ends completed, its cost in the cockpit; a git worktree on agent/<name>
// (removed, or kept when persistent); kill mid-run; the runner killed mid-run and restarted
// leaves the agent failed with a reason.

import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startOrchard, type RunningOrchard } from '../support/cli.ts';
import { completion, startOpenAiServer, type OpenAiServer } from '../support/openai-server.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import { until } from '../support/until.ts';

const ADMIN_KEY = `orch_e2e-runner-admin-${randomUUID()}`;
const RUNNER_KEY = `orch_e2e-runner-${randomUUID()}`;
const admin = { 'X-API-Key': ADMIN_KEY };

interface Ctx {
  dir: string;
  repo: string;
  workDir: string;
  s: TestServices;
  llm: OpenAiServer;
  runner?: RunningOrchard;
  project: string;
}

const test = suite<Ctx>('e2e: the runner process');

function startRunner(ctx: Ctx): RunningOrchard {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(DATABASE_URL|TEST_DATABASE_URL|EVENTSTORE_URL|ADMIN_API_KEY)/.test(k)) env[k] = v;
  Object.assign(env, {
    ORCH_RUNNER_SERVER_URL: ctx.s.orch,
    ORCH_RUNNER_API_KEY: RUNNER_KEY,
    ORCH_RUNNER_WORK_DIR: ctx.workDir,
    ORCH_RUNNER_POLL_MS: '100',
    ORCH_LLM_PROVIDER: 'openai',
    ORCH_LLM_BASE_URL: ctx.llm.url,
    ORCH_LLM_RETRY_MAX: '1',
    DATA_DIR: path.join(ctx.dir, 'runner-data'),
    LOG_LEVEL: 'info',
  });
  return startOrchard(['serve', 'runner'], { env });
}

/** What the runner printed, line by line (both streams, in the order they came). */
const linesOf = (runner: RunningOrchard) => runner.output().split('\n');

async function stopRunner(runner: RunningOrchard | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!runner || runner.child.exitCode !== null || runner.child.signalCode !== null) return;
  runner.child.kill(signal);
  await runner.exited;
}

/** A bounded wait (60 s) for another process, not a timing assertion; the runner's last lines in the failure. */
const eventually = <T>(what: string, check: () => Promise<T | null | undefined | false>, runner?: RunningOrchard) =>
  until(() => `${what}; runner said:\n${runner ? linesOf(runner).slice(-20).join('\n') : ''}`, check, 60_000, 100);

const agentOf = async (s: TestServices, id: string) =>
  (await http(`${s.orch}/api/v1/agents/${id}`, { headers: admin })).body;
const spawn = async (ctx: Ctx, body: Record<string, unknown>) => {
  const r = await http(`${ctx.s.orch}/api/v1/spawn`, {
    headers: admin,
    json: { role: 'builder', project_id: ctx.project, ...body },
  });
  assert.is(r.status, 201, r.text);
  return r.body;
};
const git = (repo: string, ...args: string[]) =>
  execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();

test.before(async (ctx) => {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-runner-e2e-'));
  ctx.repo = path.join(ctx.dir, 'repo');
  ctx.workDir = path.join(ctx.dir, 'work');
  execFileSync('git', ['init', '-q', '-b', 'main', ctx.repo]);
  await writeFile(path.join(ctx.repo, 'README.md'), '# project\n');
  git(ctx.repo, 'add', '.');
  git(ctx.repo, '-c', 'user.name=t', '-c', 'user.email=t@example.test', 'commit', '-q', '-m', 'init');
  // The model: the agent "toolsmith" asks for create_task, then answers; "hanger" never gets an answer.
  ctx.llm = await startOpenAiServer((body) => {
    const system: string = body.messages[0].content;
    const name = /agent "([^"]+)"/.exec(system)?.[1];
    if (name?.startsWith('hanger')) return 'hang';
    const answered = body.messages.some((m: { role: string }) => m.role === 'tool');
    if (name === 'toolsmith' && !answered) {
      return {
        body: completion({
          toolCalls: [
            { id: 'call_1', name: 'create_task', arguments: { title: 'Written by the agent', priority: 'high' } },
          ],
          usage: [20_000, 1_000],
        }),
      };
    }
    return { body: completion({ text: 'Done.', usage: [30_000, 500] }) };
  });
  const keyFile = path.join(ctx.dir, 'admin.key');
  await writeFile(keyFile, `${ADMIN_KEY}\n`, { mode: 0o600 });
  ctx.s = await startTestServices('e2e_runner', { ADMIN_API_KEY_FILE: keyFile, ORCH_RUNNER_API_KEY: RUNNER_KEY });
  const project = await http(`${ctx.s.orch}/api/v1/projects`, {
    headers: admin,
    json: { name: 'runner-e2e', repo_path: ctx.repo, max_concurrent_agents: 4 },
  });
  ctx.project = project.body.id;
  ctx.runner = startRunner(ctx);
});

test.after(async (ctx) => {
  await stopRunner(ctx.runner, 'SIGKILL');
  await ctx.s?.close();
  await ctx.llm?.close();
  if (ctx.dir) await rm(ctx.dir, { recursive: true, force: true });
});

test('a tool call creates a task whose created_by is the agent; the agent completes, its cost in the cockpit', async (ctx) => {
  const { s } = ctx;
  const agent = await spawn(ctx, { name: 'toolsmith', model: 'gpt-4o-mini', initial_prompt: 'Plan the work.' });
  const done = await eventually(
    'toolsmith to complete',
    async () => {
      const a = await agentOf(s, agent.id);
      return a.status === 'completed' || a.status === 'failed' ? a : null;
    },
    ctx.runner,
  );
  assert.is(done.status, 'completed', JSON.stringify(done));
  const tasks = (await http(`${s.orch}/api/v1/tasks?project_id=${ctx.project}`, { headers: admin })).body.tasks;
  const made = tasks.find((t: { title: string }) => t.title === 'Written by the agent');
  assert.ok(made, 'the tool call created the task');
  assert.is(made.created_by, agent.id);
  assert.is(made.created_by_user, agent.id);
  assert.is(made.priority, 'high');
  // Two model calls at gpt-4o-mini prices (15 and 60 cents per million tokens).
  const expected = (20_000 * 15 + 1_000 * 60 + (30_000 * 15 + 500 * 60)) / 1e6 / 100;
  assert.ok(Math.abs(done.total_cost_usd - expected) < 1e-9, `${done.total_cost_usd} vs ${expected}`);
  const cockpit = (await http(`${s.orch}/api/v1/cockpit/summary`, { headers: admin })).body;
  assert.ok(Math.abs(cockpit.cost.usd - expected) < 1e-9, JSON.stringify(cockpit.cost));
  // The model saw the template prompt, the initial prompt and the tools; then the tool's answer.
  const first = ctx.llm.requests.find((r) => /agent "toolsmith"/.test(r.messages[0].content))!;
  assert.match(first.messages[0].content, /builder agent/);
  assert.equal(first.messages[1], { role: 'user', content: 'Plan the work.' });
  assert.equal(
    first.tools.map((t: { function: { name: string } }) => t.function.name),
    ['list_tasks', 'create_task', 'update_task'],
  );
  // Its worktree on agent/toolsmith from main was removed (not persistent); the branch stays.
  assert.is(git(ctx.repo, 'rev-parse', 'agent/toolsmith'), git(ctx.repo, 'rev-parse', 'main'));
  await eventually('the worktree to go', async () => !existsSync(path.join(ctx.workDir, ctx.project, 'toolsmith')));
});

test('the local model: an agent completes offline; a persistent agent keeps its worktree', async (ctx) => {
  const agent = await spawn(ctx, { name: 'keeper', model: 'local', persistent: true });
  const done = await eventually(
    'keeper to end',
    async () => {
      const a = await agentOf(ctx.s, agent.id);
      return a.status === 'completed' || a.status === 'failed' ? a : null;
    },
    ctx.runner,
  );
  assert.is(done.status, 'completed', JSON.stringify(done));
  assert.is(done.total_cost_usd, 0);
  const kept = path.join(ctx.workDir, ctx.project, 'keeper');
  await eventually(
    'the runner to finish with keeper',
    async () => linesOf(ctx.runner!).some((l) => l.includes('agent_ended') && l.includes(agent.id)),
    ctx.runner,
  );
  assert.ok(existsSync(path.join(kept, 'README.md')), 'the persistent worktree is kept');
  assert.is(git(kept, 'rev-parse', '--abbrev-ref', 'HEAD'), 'agent/keeper');
});

test('kill mid-run: the agent stays killed, the runner abandons it and removes its worktree', async (ctx) => {
  const agent = await spawn(ctx, { name: 'hanger-1', model: 'gpt-4o-mini' });
  await eventually('hanger-1 to run', async () => (await agentOf(ctx.s, agent.id)).status === 'running', ctx.runner);
  const killed = await http(`${ctx.s.orch}/api/v1/agents/${agent.id}/kill`, { method: 'POST', headers: admin });
  assert.is(killed.body.status, 'killed');
  await eventually(
    'the runner to abandon hanger-1',
    async () => linesOf(ctx.runner!).some((l) => l.includes('agent_ended') && l.includes(agent.id)),
    ctx.runner,
  );
  assert.is((await agentOf(ctx.s, agent.id)).status, 'killed');
  assert.not.ok(existsSync(path.join(ctx.workDir, ctx.project, 'hanger-1')));
});

test('the runner killed mid-run: on restart the agent is failed with a reason, never left running', async (ctx) => {
  const agent = await spawn(ctx, { name: 'hanger-2', model: 'gpt-4o-mini' });
  await eventually('hanger-2 to run', async () => (await agentOf(ctx.s, agent.id)).status === 'running', ctx.runner);
  await stopRunner(ctx.runner, 'SIGKILL');
  assert.is((await agentOf(ctx.s, agent.id)).status, 'running', 'nobody has told the server yet');
  ctx.runner = startRunner(ctx);
  const failed = await eventually(
    'hanger-2 to be failed',
    async () => {
      const a = await agentOf(ctx.s, agent.id);
      return a.status === 'failed' ? a : null;
    },
    ctx.runner,
  );
  assert.match(failed.status_reason, /^runner_restarted/);
  // The restarted runner works: a new agent completes.
  const next = await spawn(ctx, { name: 'after-restart', model: 'local' });
  await eventually(
    'after-restart to complete',
    async () => (await agentOf(ctx.s, next.id)).status === 'completed',
    ctx.runner,
  );
  // A graceful stop exits 0.
  ctx.runner!.child.kill('SIGTERM');
  assert.is(await ctx.runner!.exited, 0);
});

test.run();
