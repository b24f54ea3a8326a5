// The projects, board and agents pages in a real browser against the real orchestration service,
// each journey checked through the API afterwards:
//
// - projects: create and edit through the dialog (a client-side error tied to its field);
// - the board: create, edit and assign a task through the dialogs; drag a card to another column
//   and see it move in a second browser context (a readonly account's, live over /ws, with no
//   write controls); move one by keyboard only (Space, arrows, Space; Escape cancels; announced
//   in the live region; no pointer event); a move refused by the server (another account's task:
//   403, no authority) rolls back with the server's message;
// - agents: spawn through the form with every field, the status live when the runner claims it,
//   stop and kill after a confirmation. No runner process runs here: the suite claims the agent
//   with the runner's key through the API, which is what moves it out of `queued`;
// - axe on every page and open dialog, screenshots, and the request recorder (allowed paths only,
//   a CSRF header on every write).

import type { Browser, Page } from 'playwright-core';
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { TaskEvent } from '../../domain/orchestration/tasks/events.ts';
import { taskStream } from '../../domain/orchestration/streams.ts';
import { toAppend } from '../../infra/commands.ts';
import { claimAgent, createProject, spawn, startAgentApps, type AgentKeys } from '../support/agents.ts';
import { createAccount, type Account } from '../support/principals.ts';
import { http, type TestServices } from '../support/services.ts';
import {
  axeClean,
  closeSuite,
  countPointerEvents,
  disallowed,
  focusOn,
  launchBrowser,
  screenshots,
  signedIn,
  tabTo,
  until,
  writesWithoutCsrf,
  type Recorded,
} from './support.ts';

interface Ctx {
  s: TestServices;
  keys: AgentKeys;
  browser: Browser;
  owner: Account;
  stranger: Account;
  reader: Account;
  project: string;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
}
const test = suite<Ctx>('projects, board and agents in the browser');

test.before(async (ctx) => {
  ({ s: ctx.s, keys: ctx.keys } = await startAgentApps('browser_board', {}, { sockets: true }));
  [ctx.owner, ctx.stranger, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ctx.keys.adminKey, 'user'),
    createAccount(ctx.s, ctx.keys.adminKey, 'user'),
    createAccount(ctx.s, ctx.keys.adminKey, 'readonly'),
  ]);
  ctx.project = await createProject(ctx.s, ctx.owner.apiKey, { name: 'Board project' });
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
});
test.after(closeSuite);

const key = (ctx: Ctx) => ({ 'X-API-Key': ctx.keys.adminKey });
const task = async (ctx: Ctx, id: string) =>
  (await http(`${ctx.s.orch}/api/v1/tasks/${id}`, { headers: key(ctx) })).body;
const agent = async (ctx: Ctx, id: string) =>
  (await http(`${ctx.s.orch}/api/v1/agents/${id}`, { headers: key(ctx) })).body;

async function openBoard(ctx: Ctx, account: Account) {
  const opened = await signedIn(ctx, account, { path: `/projects/${ctx.project}` });
  await opened.page.getByRole('heading', { level: 1, name: /^Board: / }).waitFor();
  await opened.page.getByText('Live: up to date').waitFor();
  return opened;
}

const column = (page: Page, status: string) => page.locator(`section[data-status="${status}"]`);
const card = (page: Page, id: string) => page.locator(`li[data-task-id="${id}"]`);
/** The column a card is shown in (waits for the card). */
async function columnOf(page: Page, id: string): Promise<string> {
  await card(page, id).waitFor();
  return card(page, id).evaluate(
    (el) => (el.closest('section') as unknown as { dataset: { status: string } }).dataset.status,
  );
}
const liveRegion = (page: Page) => page.locator('.toasts');

test('projects: create and edit through the dialog; a missing name is an error tied to its field; axe on the page and the dialog', async (ctx) => {
  const { page, close } = await signedIn(ctx, ctx.owner, { path: '/' });
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }).click();
  await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
  await page.getByRole('link', { name: 'Board project' }).waitFor();
  await axeClean(page, 'projects');
  await screenshots(page, 'projects');

  const opener = page.getByRole('button', { name: 'New project' });
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'New project' });
  await dialog.waitFor();
  assert.is(await focusOn(page, 'project-name'), 'project-name');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  const name = dialog.getByLabel('Name');
  assert.is(await name.getAttribute('aria-invalid'), 'true');
  assert.is(await name.getAttribute('aria-describedby'), 'project-name-error');
  assert.is(await page.locator('#project-name-error').textContent(), 'Give the project a name.');
  await axeClean(page, 'new project dialog with an error');
  await screenshots(page, 'projects-new-dialog');
  await name.fill('Website relaunch');
  await dialog.getByLabel('Agents running at once').fill('4');
  await dialog.getByRole('button', { name: 'Create project' }).click();
  await dialog.waitFor({ state: 'detached' });
  await until('focus back on the opener', () =>
    opener.evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement),
  );
  await page.getByRole('link', { name: 'Website relaunch' }).waitFor();
  const list = await http(`${ctx.s.orch}/api/v1/projects?limit=200`, { headers: key(ctx) });
  const made = list.body.projects.find((p: { name: string }) => p.name === 'Website relaunch');
  assert.equal([made?.max_concurrent_agents, made?.owner_id], [4, ctx.owner.id]);

  await page.getByRole('button', { name: 'Edit Website relaunch' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit project Website relaunch' });
  await edit.getByLabel('Name').fill('Website relaunch 2');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  // The dialog closes on the server's answer (the /ws event may reach the list before it).
  await edit.waitFor({ state: 'detached' });
  await page.getByRole('link', { name: 'Website relaunch 2' }).waitFor();
  assert.is(
    (await http(`${ctx.s.orch}/api/v1/projects/${made.id}`, { headers: key(ctx) })).body.name,
    'Website relaunch 2',
  );
  await close();
});

test('the board: create, edit and assign through the dialogs; a dragged card moves in a second browser, live', async (ctx) => {
  const a = await openBoard(ctx, ctx.owner);
  const b = await openBoard(ctx, ctx.reader);
  // The readonly account sees the board without write controls.
  assert.is(await b.page.getByRole('button', { name: 'New task' }).count(), 0);

  await a.page.getByRole('button', { name: 'New task' }).click();
  const dialog = a.page.getByRole('dialog', { name: 'New task' });
  await dialog.waitFor();
  await axeClean(a.page, 'new task dialog');
  await dialog.getByLabel('Title').fill('Write the launch notes');
  await dialog.getByLabel('Priority').selectOption('high');
  await dialog.getByRole('button', { name: 'Create task' }).click();
  await dialog.waitFor({ state: 'detached' });
  const listed = await http(`${ctx.s.orch}/api/v1/tasks?project_id=${ctx.project}`, { headers: key(ctx) });
  const id = listed.body.tasks.find((t: { title: string }) => t.title === 'Write the launch notes').id as string;
  assert.is(await columnOf(a.page, id), 'backlog');
  assert.is(await columnOf(b.page, id), 'backlog', 'the second browser sees the new card');
  assert.is(await card(b.page, id).getAttribute('draggable'), 'false');

  // Edit: only the title changes.
  await a.page.getByRole('button', { name: 'Write the launch notes', exact: true }).click();
  const edit = a.page.getByRole('dialog', { name: 'Edit task' });
  await edit.getByLabel('Title').fill('Write the release notes');
  await axeClean(a.page, 'edit task dialog');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await edit.waitFor({ state: 'detached' });
  await b.page.getByText('Write the release notes').waitFor();
  assert.equal([(await task(ctx, id)).title, (await task(ctx, id)).priority], ['Write the release notes', 'high']);

  // Assign to an agent of the project.
  const worker = await spawn(ctx.s, ctx.owner.apiKey, ctx.project, { name: 'notes-writer' });
  await card(a.page, id)
    .getByRole('button', { name: /^Assign/ })
    .click();
  const assign = a.page.getByRole('dialog', { name: 'Assign “Write the release notes”' });
  await assign.getByLabel('Agent').waitFor();
  await axeClean(a.page, 'assign dialog');
  await screenshots(a.page, 'board-assign-dialog');
  await assign.getByLabel('Agent').selectOption(worker.id);
  await assign.getByRole('button', { name: 'Assign' }).click();
  await assign.waitFor({ state: 'detached' });
  assert.is((await task(ctx, id)).assigned_agent_id, worker.id);

  // Drag it to In progress: the other browser sees it move.
  await card(a.page, id).locator('.card-meta').dragTo(column(a.page, 'in_progress'));
  await until('the card moved in the first browser', async () => (await columnOf(a.page, id)) === 'in_progress');
  await until('the card moved in the second browser', async () => (await columnOf(b.page, id)) === 'in_progress');
  await until('the server has it in progress', async () => (await task(ctx, id)).status === 'in_progress');
  await axeClean(a.page, 'board');
  await screenshots(a.page, 'board');
  await axeClean(b.page, 'board (readonly)');
  await screenshots(b.page, 'board-readonly');
  await a.close();
  await b.close();
});

test('keyboard only: Space lifts, arrows move, Space drops, Escape cancels, each announced; no pointer event; a second browser sees it', async (ctx) => {
  const made = await http(`${ctx.s.orch}/api/v1/tasks`, {
    headers: { 'X-API-Key': ctx.owner.apiKey },
    json: { project_id: ctx.project, title: 'Keyboard task', priority: 'low', status: 'todo' },
  });
  const id = made.body.id as string;
  const a = await openBoard(ctx, ctx.owner);
  const b = await openBoard(ctx, ctx.reader);
  await countPointerEvents(a.page, ['dragstart']);
  await tabTo(a.page, `#card-${id}`, 60);
  // Lift, carry one column right, cancel: it stays.
  await a.page.keyboard.press('Space');
  await until('lift announced', async () =>
    (await liveRegion(a.page).textContent())!.includes('Lifted “Keyboard task” in To do'),
  );
  await a.page.keyboard.press('ArrowRight');
  await until('the move announced', async () =>
    (await liveRegion(a.page).textContent())!.includes('In progress, column 3 of 6'),
  );
  assert.is(await columnOf(a.page, id), 'in_progress');
  await a.page.keyboard.press('Escape');
  await until('cancel announced', async () =>
    (await liveRegion(a.page).textContent())!.includes('Move cancelled; “Keyboard task” stays in To do'),
  );
  assert.is(await columnOf(a.page, id), 'todo');
  // Lift, two columns right, drop.
  await a.page.keyboard.press('Space');
  await a.page.keyboard.press('ArrowRight');
  await a.page.keyboard.press('ArrowRight');
  assert.is(await focusOn(a.page, `card-${id}`), `card-${id}`, 'focus stays on the carried card');
  await a.page.keyboard.press('Space');
  await until('the drop announced', async () =>
    (await liveRegion(a.page).textContent())!.includes('Moved “Keyboard task” to In review'),
  );
  await until('the second browser sees it in review', async () => (await columnOf(b.page, id)) === 'in_review');
  await until('the server has it in review', async () => (await task(ctx, id)).status === 'in_review');
  assert.is(await a.page.getByRole('dialog').count(), 0, 'Space did not open the edit dialog');
  assert.is(await a.page.evaluate('window.pointerEvents'), 0);
  await a.close();
  await b.close();
});

test('a refused move (no authority over another account\'s task) rolls back with the server\'s message; the "Move to" menu', async (ctx) => {
  const made = await http(`${ctx.s.orch}/api/v1/tasks`, {
    headers: { 'X-API-Key': ctx.owner.apiKey },
    json: { project_id: ctx.project, title: 'Not yours', priority: 'medium' },
  });
  const id = made.body.id as string;
  const { page, close } = await openBoard(ctx, ctx.stranger);
  await card(page, id).getByLabel('Move “Not yours” to').selectOption('done');
  await page.getByText('Could not move “Not yours” to Done: you have no authority over this task').waitFor();
  await until('rolled back to Backlog', async () => (await columnOf(page, id)) === 'backlog');
  assert.is((await task(ctx, id)).status, 'backlog');
  // By drag, the same.
  await card(page, id).locator('.card-meta').dragTo(column(page, 'in_review'));
  await page.getByText('Could not move “Not yours” to In review: you have no authority over this task').waitFor();
  await until('rolled back again', async () => (await columnOf(page, id)) === 'backlog');
  await axeClean(page, 'board with an error toast');
  await screenshots(page, 'board-refused');
  assert.is((await task(ctx, id)).status, 'backlog');
  await close();
});

test("a move refused for a dependency blocker (409) rolls back with the server's message naming the blocker", async (ctx) => {
  // depends_on cannot be set through the API: the blocked task is written to the log directly,
  // as the task decider would write it, and the read model waited for.
  const blocker = await http(`${ctx.s.orch}/api/v1/tasks`, {
    headers: { 'X-API-Key': ctx.owner.apiKey },
    json: { project_id: ctx.project, title: 'Blocker', priority: 'low' },
  });
  const id = randomUUID();
  const event: TaskEvent = {
    type: 'TaskCreated',
    data: {
      task_id: id,
      project_id: ctx.project,
      title: 'Blocked task',
      description: null,
      priority: 'high',
      status: 'todo',
      directive_id: null,
      parent_task_id: null,
      branch_name: null,
      created_by: null,
      created_by_user: ctx.owner.id,
      metadata: {},
      depends_on: [blocker.body.id],
      at: new Date().toISOString(),
    },
  };
  const { position } = await ctx.s.platform.store.append(
    taskStream(id),
    [toAppend(event, { actor: { kind: 'system', id: 'test' }, correlationId: null })],
    { expected: 'no_stream' },
  );
  await ctx.s.platform.engine.waitFor(position, ['TaskCreated'], 10_000);
  const { page, close } = await openBoard(ctx, ctx.owner);
  await card(page, id).locator('.card-meta').dragTo(column(page, 'in_progress'));
  await page
    .getByText(`Could not move “Blocked task” to In progress: task has incomplete dependencies: ${blocker.body.id}`)
    .waitFor();
  await until('rolled back to To do', async () => (await columnOf(page, id)) === 'todo');
  assert.is((await task(ctx, id)).status, 'todo');
  await close();
});

test('agents: spawn with every field, status live, stop and kill after a confirmation; axe on the page and the dialog', async (ctx) => {
  const { page, close } = await signedIn(ctx, ctx.owner, { path: '/agents' });
  await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
  await page.getByText('Live: up to date').waitFor();
  await page.getByLabel('Name (required)', { exact: true }).fill('docs-bot');
  await page.getByLabel('Role').selectOption('custom');
  await page.getByLabel('Project').selectOption(ctx.project);
  await page.getByLabel('Initial prompt (optional)').fill('Start with the README');
  await page.getByRole('button', { name: 'Spawn agent' }).click();
  // The custom template needs its instructions: the error is tied to the field.
  const md = page.getByLabel('Custom instructions');
  assert.is(await md.getAttribute('aria-describedby'), 'spawn-custom_agent_md-hint spawn-custom_agent_md-error');
  await md.fill('# Docs bot\nKeep the docs current.');
  await page.getByLabel('Template').selectOption('custom');
  await page.getByLabel('Model (optional)').fill('local');
  await page.getByLabel('Base branch (optional)').fill('develop');
  await page.getByLabel('Persistent').check();
  await page.getByRole('button', { name: 'Spawn agent' }).click();
  const row = page.locator('tr', { has: page.getByRole('rowheader', { name: 'docs-bot' }) });
  await row.waitFor();
  // (The row may come from the /ws event, ahead of the server's read model: ask until it has it.)
  let spawned: Record<string, any> | undefined;
  await until('the server lists docs-bot', async () => {
    const listed = await http(`${ctx.s.orch}/api/v1/agents?project_id=${ctx.project}`, { headers: key(ctx) });
    spawned = listed.body.agents.find((a: { name: string }) => a.name === 'docs-bot');
    return spawned !== undefined;
  });
  if (!spawned) return;
  assert.equal(
    [
      spawned.role,
      spawned.template,
      spawned.model,
      spawned.base_branch,
      spawned.persistent,
      spawned.status,
      spawned.created_by_user,
    ],
    ['custom', 'custom', 'local', 'develop', true, 'queued', ctx.owner.id],
  );
  await until('queued shown', async () => (await row.locator('.agent-status').textContent()) === 'queued');
  // The runner claims it (through the API, as a runner would): the page follows, live.
  await claimAgent(ctx.s, ctx.keys.runnerKey, spawned.id as string);
  await until('claimed shown live', async () => (await row.locator('.agent-status').textContent()) === 'claimed');
  await axeClean(page, 'agents');
  await screenshots(page, 'agents');

  // Stop, confirmed.
  const stopButton = row.getByRole('button', { name: 'Stop docs-bot' });
  await stopButton.click();
  const confirm = page.getByRole('dialog', { name: 'Stop docs-bot?' });
  await confirm.waitFor();
  assert.is(await focusOn(page, 'Cancel', 'text'), 'Cancel', 'the safe answer has focus');
  // Tab stays inside the dialog: Cancel, Stop agent, the heading's Close, then Cancel again.
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'Stop agent', 'text'), 'Stop agent');
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'Close', 'label'), 'Close');
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'Cancel', 'text'), 'Cancel', 'focus is trapped in the dialog');
  await axeClean(page, 'stop confirmation');
  await screenshots(page, 'agents-stop-dialog');
  await confirm.getByRole('button', { name: 'Stop agent' }).click();
  await until('stopped shown', async () => (await row.locator('.agent-status').textContent()) === 'stopped');
  await until('the server has it stopped', async () => (await agent(ctx, spawned!.id)).status === 'stopped');

  // Kill: an agent spawned elsewhere appears live; Escape cancels (focus back on Kill), then kill.
  const other = await spawn(ctx.s, ctx.owner.apiKey, ctx.project, { name: 'short-lived' });
  const otherRow = page.locator('tr', { has: page.getByRole('rowheader', { name: 'short-lived' }) });
  await otherRow.waitFor();
  const kill = otherRow.getByRole('button', { name: 'Kill short-lived' });
  await kill.click();
  await page.getByRole('dialog', { name: 'Kill short-lived?' }).waitFor();
  await page.keyboard.press('Escape');
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  await until(
    'focus back on the opener',
    async () => (await page.evaluate('document.activeElement?.textContent')) === 'Kill short-lived',
  );
  assert.is((await agent(ctx, other.id)).status, 'queued');
  await kill.click();
  await page.getByRole('dialog', { name: 'Kill short-lived?' }).getByRole('button', { name: 'Kill agent' }).click();
  await until('killed shown', async () => (await otherRow.locator('.agent-status').textContent()) === 'killed');
  await until('the server has it killed', async () => (await agent(ctx, other.id)).status === 'killed');
  await close();
});

test('a readonly account: the agents page without the spawn form or stop and kill', async (ctx) => {
  const { page, close } = await signedIn(ctx, ctx.reader, { path: '/agents' });
  await page.getByRole('rowheader', { name: 'docs-bot' }).waitFor();
  assert.is(await page.getByRole('button', { name: 'Spawn agent' }).count(), 0);
  assert.is(await page.getByRole('button', { name: /^(Stop|Kill) / }).count(), 0);
  await close();
});

test("the request recorder: only allowed paths, never /api/v1/; every write carries the session's CSRF token", async (ctx) => {
  for (const settle of ctx.settled) await settle();
  // (Sockets are not requests to the recorder; the pages' live state shows /ws at work.)
  for (const path of ['/api/projects', '/api/tasks', '/api/agents'])
    assert.ok(
      ctx.recorded.some((r) => r.path.split('?')[0] === path || r.path.startsWith(`${path}?`)),
      path,
    );
  assert.ok(ctx.recorded.some((r) => r.method === 'PATCH' && r.path.startsWith('/api/tasks/')));
  assert.ok(ctx.recorded.some((r) => r.method === 'POST' && r.path === '/api/spawn'));
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test.run();
