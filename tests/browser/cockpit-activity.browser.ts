// The cockpit and the Activity page in a real browser against the real orchestration service,
// seeded through the API (projects, tasks in every column, agents, a cost on two days, a chat turn):
//
// - cockpit: the tiles render while the chart chunk is held back (the charts are a lazy chunk);
//   then the three charts draw, each beside a table whose numbers are the API's (summary and the
//   daily cost); no CSP violation (uPlot styles through the CSSOM only);
// - live tiles (/ws/live): tasks created, an agent spawned and a chat turn taken through the API
//   change the tiles (each equal to what a keyed /ws/live socket says), and the task table
//   follows without a reload;
// - Activity (/ws through the console's one socket): events as a keyed /ws socket sees them, type
//   and stream filters, pause (events keep arriving and show on resume), and a dropped socket
//   (closed in the page while the browser is offline, events appended meanwhile) resumed with
//   `?from=`: every event once, in order;
// - a readonly account sees both pages (no write control there); axe light and dark on both
//   pages; screenshots; the request recorder (only /auth/*, /api/* mirrors, the sockets).

import type { Browser, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { claimAgent, createProject, spawn, startAgentApps, type AgentKeys } from '../support/agents.ts';
import { createAccount, type Account } from '../support/principals.ts';
import { http, type TestServices } from '../support/services.ts';
import { connectWs, type WsClient } from '../support/ws.ts';
import {
  axeClean,
  closeSuite,
  disallowed,
  h1,
  launchBrowser,
  nav,
  screenshots,
  setUp,
  signedIn,
  writesWithoutCsrf,
  type Opened,
  type Recorded,
} from './support.ts';
import { taskStream } from '../../domain/orchestration/streams.ts';

interface Ctx {
  s: TestServices;
  keys: AgentKeys;
  browser: Browser;
  admin: Account;
  owner: Account;
  reader: Account;
  alpha: string;
  beta: string;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
  /** The URL of every WebSocket the pages opened (the request recorder does not see upgrades). */
  sockets: string[];
}
const test = suite<Ctx>('console: cockpit and activity');

const DAY_MS = 86_400_000;

const key = (ctx: Ctx, account?: Account) => ({ 'X-API-Key': account?.apiKey ?? ctx.keys.adminKey });
const api = async (ctx: Ctx, path: string) => {
  const r = await http(`${ctx.s.orch}${path}`, { headers: key(ctx) });
  assert.is(r.status, 200, `${path}: ${r.text}`);
  return r.body;
};
async function createTask(ctx: Ctx, project: string, title: string, status = 'todo'): Promise<string> {
  const r = await http(`${ctx.s.orch}/api/v1/tasks`, {
    headers: key(ctx, ctx.owner),
    json: { project_id: project, title, priority: 'medium', status },
  });
  assert.is(r.status, 201, r.text);
  return r.body.id;
}
async function report(ctx: Ctx, agent: string, body: Record<string, unknown>): Promise<void> {
  const r = await http(`${ctx.s.orch}/api/v1/runner/agents/${agent}/report`, {
    headers: { 'X-API-Key': ctx.keys.runnerKey },
    json: body,
  });
  assert.is(r.status, 200, r.text);
}

test.before(setUp(seed));

async function seed(ctx: Ctx): Promise<void> {
  ({ s: ctx.s, keys: ctx.keys } = await startAgentApps('browser_cockpit', {}, { sockets: true }));
  [ctx.admin, ctx.owner, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ctx.keys.adminKey, 'admin'),
    createAccount(ctx.s, ctx.keys.adminKey, 'user'),
    createAccount(ctx.s, ctx.keys.adminKey, 'readonly'),
  ]);
  ctx.alpha = await createProject(ctx.s, ctx.owner.apiKey, { name: 'Alpha' });
  ctx.beta = await createProject(ctx.s, ctx.owner.apiKey, { name: 'Beta' });
  for (const status of ['backlog', 'todo', 'todo', 'in_progress', 'in_review', 'done', 'done', 'done'])
    await createTask(ctx, ctx.alpha, `Alpha ${status}`, status);
  for (const status of ['todo', 'in_progress']) await createTask(ctx, ctx.beta, `Beta ${status}`, status);
  // Two agents; one claimed and running, with a cost three days ago and one today.
  const busy = await spawn(ctx.s, ctx.keys.adminKey, ctx.alpha);
  await spawn(ctx.s, ctx.keys.adminKey, ctx.beta);
  await claimAgent(ctx.s, ctx.keys.runnerKey, busy.id);
  await report(ctx, busy.id, { event: 'running', runner_instance: 'test-runner' });
  ctx.s.clock.advance(-3 * DAY_MS);
  try {
    await report(ctx, busy.id, { event: 'cost', cost_usd: 1.25 });
  } finally {
    ctx.s.clock.advance(3 * DAY_MS);
  }
  await report(ctx, busy.id, { event: 'cost', cost_usd: 0.5 });
  // A profile for the chat turn (the local model answers: no provider is configured).
  const made = await http(`${ctx.s.orch}/api/v1/agent-chat/profiles`, {
    headers: key(ctx),
    json: { slug: 'cockpit-bot', name: 'Cockpit bot', security_tier: 3 },
  });
  assert.is(made.status, 201, made.text);
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
  ctx.sockets = [];
}
test.after(closeSuite);

/** A signed-in page; CSP violations and console errors are collected in `problems`. */
function signedInWatched(ctx: Ctx, account: Account, problems: string[] = []): Promise<Opened> {
  return signedIn(ctx, account, {
    prepare: async ({ context, page }) => {
      // Runs before the page's scripts (DevTools-injected, not subject to the CSP): every CSP violation
      // is kept, and every WebSocket the page opens, so a test can drop one.
      await context.addInitScript(`window.cspViolations = [];
        document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));
        window.openedSockets = [];
        const NativeWebSocket = window.WebSocket;
        window.WebSocket = class extends NativeWebSocket {
          constructor(url, protocols) { super(url, protocols); window.openedSockets.push(this); }
        };`);
      page.on('websocket', (socket) => ctx.sockets.push(socket.url()));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
    },
  });
}

const cspViolations = async (page: Page) => (await page.evaluate('window.cspViolations')) as string[];
const usd4 = new Intl.NumberFormat('en', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check());) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function tableRows(page: Page, id: string): Promise<string[][]> {
  return page
    .locator(`#${id} tbody tr`)
    .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim())));
}
const taskRows = (summary: any): string[][] =>
  summary.projects.map((p: any) => [p.name, String(p.tasks.open), String(p.tasks.in_progress), String(p.tasks.done)]);

test("cockpit: tiles before the chart chunk; three charts, each with a table of the API's numbers; no CSP violation", async (ctx) => {
  const problems: string[] = [];
  const { context, page } = await signedInWatched(ctx, ctx.owner, problems);
  // Hold the chart chunk back: the tiles and tables must not wait for it.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let asked = false;
  await page.route(/\/assets\/cockpit-charts-[^/]+\.js$/, async (route) => {
    asked = true;
    await held;
    await route.continue();
  });
  await page.goto('/');
  await h1(page, 'Cockpit');
  await page.locator('.tiles').waitFor();
  await page.locator('#tasks-table').waitFor();
  await until('the chart chunk asked for', async () => asked);
  assert.is(await page.locator('.chart').count(), 0, 'no chart before its chunk');
  release();
  for (const name of ['tasks', 'agents', 'cost'])
    await page.locator(`.chart[data-chart="${name}"] canvas`).first().waitFor();

  const summary = await api(ctx, '/api/v1/cockpit/summary');
  assert.equal(
    taskRows(summary),
    [
      ['Alpha', '3', '2', '3'],
      ['Beta', '1', '1', '0'],
    ],
    'the seeded counts',
  );
  assert.equal(await tableRows(page, 'tasks-table'), taskRows(summary));
  assert.equal(await tableRows(page, 'agents-table'), [
    [summary.agents.configured, summary.agents.active, summary.agents.max_concurrent].map(String),
  ]);
  assert.equal([summary.agents.configured, summary.agents.active], [2, 1]);
  // The daily cost: a table inside a disclosure, every day of the window.
  const daily = await api(ctx, '/api/v1/cockpit/cost/daily?days=30');
  assert.is(daily.series.length, 30);
  assert.equal(
    daily.series.filter((d: any) => d.usd > 0).map((d: any) => d.usd),
    [1.25, 0.5],
  );
  await page.locator('.cost-details summary').click();
  assert.equal(
    await tableRows(page, 'cost-table'),
    daily.series.map((d: any) => [d.day, usd4.format(d.usd)]),
  );
  assert.ok((await page.locator('.cost-details summary').textContent())?.includes('$1.75 in all'));
  // The canvases are hidden from assistive technology; each figure says what it shows.
  assert.is(await page.locator('.chart[aria-hidden="true"]').count(), 3);
  assert.is(await page.locator('figure figcaption').count(), 3);

  await axeClean(page, 'cockpit with charts');
  await screenshots(page, 'cockpit-charts');
  assert.equal(await cspViolations(page), [], 'no CSP violation');
  assert.equal(
    problems.filter((p) => /Content Security Policy|Refused to/i.test(p)),
    [],
    'no CSP error in the console',
  );
  await context.close();
});

/** The tile's value and its per-status counts as shown. */
async function tile(page: Page, name: string): Promise<{ value: string; counts: Record<string, string> }> {
  const el = page.locator(`[data-tile="${name}"]`);
  const value = (await el.locator('.tile-value').textContent())?.trim() ?? '';
  const items = await el
    .locator('.tile-counts li')
    .evaluateAll((lis) => lis.map((li) => [li.getAttribute('data-status') ?? '', (li.textContent ?? '').trim()]));
  return { value, counts: Object.fromEntries(items.map(([status, text]) => [status!, text!.split(' ').at(-1)!])) };
}

test('live tiles: tasks created, an agent spawned and a chat turn change them, as /ws/live says; the table follows', async (ctx) => {
  const { context, page } = await signedInWatched(ctx, ctx.owner);
  await page.locator('[data-tile="health"]').waitFor();
  const live: WsClient = await connectWs(ctx.s.orch, '/ws/live', key(ctx));
  try {
    const first = await live.next((f) => f.type === 'status', 20_000);
    assert.is((await tile(page, 'health')).value, 'OK');
    await until("the tasks tile shows the server's counts", async () => (await tile(page, 'tasks')).value === '10');
    assert.equal(
      (await tile(page, 'tasks')).counts,
      Object.fromEntries(Object.entries(first.tasks_by_status).map(([s, n]) => [s, String(n)])),
    );
    assert.ok(/^\d+ events?$/.test((await tile(page, 'lag')).value));

    await createTask(ctx, ctx.beta, 'Live one');
    await createTask(ctx, ctx.beta, 'Live two');
    await spawn(ctx.s, ctx.keys.adminKey, ctx.beta);
    const chat = await http(`${ctx.s.orch}/api/v1/agent-chat/chat/cockpit-bot`, {
      method: 'POST',
      headers: key(ctx, ctx.owner),
      json: { message: 'hello' },
    });
    assert.is(chat.status, 200, chat.text);

    const frame = await live.next(
      (f) =>
        f.type === 'status' &&
        f.chat_turns_per_minute >= 1 &&
        f.tasks_by_status.todo === first.tasks_by_status.todo + 2 &&
        f.agents_by_status.queued === (first.agents_by_status.queued ?? 0) + 1,
      20_000,
    );
    await until(
      'the tiles move',
      async () =>
        (await tile(page, 'tasks')).value === '12' &&
        (await tile(page, 'chat')).value !== '0' &&
        (await tile(page, 'agents')).value === '3',
    );
    assert.is((await tile(page, 'tasks')).counts.todo, String(frame.tasks_by_status.todo));
    assert.is((await tile(page, 'agents')).counts.queued, String(frame.agents_by_status.queued));
    assert.is((await tile(page, 'chat')).value, String(frame.chat_turns_per_minute));
    // The summary is read again: Beta's open count in the table, without a reload.
    await until('the task table follows', async () => (await tableRows(page, 'tasks-table'))[1]?.[1] === '3');
    assert.equal(await tableRows(page, 'tasks-table'), taskRows(await api(ctx, '/api/v1/cockpit/summary')));
  } finally {
    live.close();
  }
  // A changed value is highlighted, but not under reduced motion.
  const animation = `getComputedStyle(document.querySelector('[data-tile="tasks"] .tile-value')).animationName`;
  assert.is(await page.evaluate(animation), 'tile-changed');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  assert.is(await page.evaluate(animation), 'none');
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  // One /ws/live socket for the page.
  assert.is(
    await page.evaluate(`window.openedSockets.filter((s) => new URL(s.url).pathname === '/ws/live').length`),
    1,
  );
  await context.close();
});

/** The positions in the Activity table, oldest first (the page lists newest first). */
const shownPositions = async (page: Page) =>
  (
    await page
      .locator('#activity-table tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-position') ?? ''))
  ).reverse();

/** What a keyed /ws socket (the admin's view, like the admin's page) saw, from its start. */
const seen = (ws: WsClient) =>
  ws.frames
    .filter((f) => f.position)
    .map((f) => ({ position: f.position as string, type: f.type as string, stream: f.stream as string }));

/** The page's list from the reference's first event on equals the reference, and nothing shows twice. */
async function sameAsReference(page: Page, ws: WsClient, what: string): Promise<void> {
  const reference = seen(ws).map((e) => e.position);
  let shown: string[] = [];
  await until(`${what}: the page shows what the socket saw`, async () => {
    shown = await shownPositions(page);
    return reference.every((p) => shown.includes(p));
  });
  assert.is(new Set(shown).size, shown.length, `${what}: no event twice`);
  const from = shown.indexOf(reference[0]!);
  assert.equal(shown.slice(from), reference, `${what}: the same events in the same order`);
}

test('activity: events as they happen, type and stream filters, pause keeps and resume shows', async (ctx) => {
  const { context, page } = await signedInWatched(ctx, ctx.admin);
  await nav(page).getByRole('link', { name: 'Activity' }).click();
  await h1(page, 'Activity');
  await page.getByText('Live: up to date').waitFor();
  if ((await page.locator('#activity-table').count()) === 0) {
    await page.getByText('No events yet. They appear here as they happen.').waitFor();
    await axeClean(page, 'activity (empty)');
  }
  const ws = await connectWs(ctx.s.orch, '/ws', key(ctx));
  try {
    await ws.next((f) => f.control === 'ready');
    const first = await createTask(ctx, ctx.alpha, 'Activity one');
    await createTask(ctx, ctx.alpha, 'Activity two');
    await spawn(ctx.s, ctx.keys.adminKey, ctx.alpha);
    await ws.next((f) => f.type === 'AgentSpawned', 20_000);
    await sameAsReference(page, ws, 'live');
    const rows = page.locator('#activity-table tbody tr');
    assert.ok((await rows.first().locator('.event-stream').textContent())?.startsWith('orch.agent-'), 'newest first');

    // Type filter: only that type.
    const taskType = seen(ws).find((e) => e.stream === taskStream(first))!.type;
    await page.getByLabel('Type').selectOption(taskType);
    await until('the type filter applies', async () =>
      (await rows.locator('.event-type').allTextContents()).every((t) => t === taskType),
    );
    const ofType = await shownPositions(page);
    for (const e of seen(ws).filter((x) => x.type === taskType))
      assert.ok(ofType.includes(e.position), `${e.position} shown under the type filter`);
    await page.getByText(new RegExp(`^${ofType.length} events? of \\d+ match the filters`)).waitFor();
    // Stream filter (with the type filter off): one task's stream.
    await page.getByLabel('Type').selectOption('');
    await page.getByLabel('Stream').fill(first.slice(0, 13));
    await until('the stream filter applies', async () =>
      (await rows.locator('.event-stream').allTextContents()).every((s) => s === taskStream(first)),
    );
    assert.is(await rows.count(), seen(ws).filter((e) => e.stream === taskStream(first)).length);
    await axeClean(page, 'activity (filtered)');
    await page.getByLabel('Stream').fill('');
    await sameAsReference(page, ws, 'filters off');
    await screenshots(page, 'activity');

    // Pause: the list stays still while events arrive; Resume shows them all.
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.locator('#activity-paused').waitFor();
    const before = await shownPositions(page);
    const had = seen(ws).length;
    await createTask(ctx, ctx.beta, 'While paused one');
    await createTask(ctx, ctx.beta, 'While paused two');
    await until('the socket saw both', async () => seen(ws).length >= had + 2);
    // What arrived after the list stopped: the socket's events not on screen, counted by the page.
    let arrived = 0;
    await until('the page counts what arrived while paused', async () => {
      arrived = seen(ws).filter((e) => !before.includes(e.position)).length;
      return (
        (await page.locator('#activity-paused').textContent())?.trim() ===
        `Paused: ${arrived} new events since, kept until you resume.`
      );
    });
    assert.ok(arrived >= 2);
    assert.equal(await shownPositions(page), before, 'nothing moves while paused');
    await axeClean(page, 'activity (paused)');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('.toasts').getByText(`Resumed: ${arrived} events added.`).waitFor({ state: 'attached' });
    assert.is(await page.locator('#activity-paused').count(), 0);
    await sameAsReference(page, ws, 'resumed');
  } finally {
    ws.close();
  }
  await context.close();
});

test('activity: a dropped socket resumes from the last position: every event once, in order', async (ctx) => {
  const { context, page } = await signedInWatched(ctx, ctx.admin);
  await page.goto('/activity');
  await h1(page, 'Activity');
  await page.getByText('Live: up to date').waitFor();
  const ws = await connectWs(ctx.s.orch, '/ws', key(ctx));
  let lastBefore = '';
  try {
    await ws.next((f) => f.control === 'ready');
    await createTask(ctx, ctx.alpha, 'Before the drop');
    await sameAsReference(page, ws, 'before the drop');
    lastBefore = (await shownPositions(page)).at(-1)!;

    // Offline, so the reconnects fail for a while; then the page's socket is dropped.
    await context.setOffline(true);
    await page.evaluate(
      `window.openedSockets.filter((s) => new URL(s.url).pathname === '/ws' && s.readyState === 1).forEach((s) => s.close())`,
    );
    await page.getByText('Live: connecting…').waitFor();
    const had = seen(ws).length;
    const made = [await createTask(ctx, ctx.alpha, 'Gap one'), await createTask(ctx, ctx.beta, 'Gap two')];
    const patched = await http(`${ctx.s.orch}/api/v1/tasks/${made[0]}`, {
      method: 'PATCH',
      headers: key(ctx, ctx.owner),
      json: { status: 'in_progress' },
    });
    assert.is(patched.status, 200, patched.text);
    await until('the socket saw the gap', async () => seen(ws).length >= had + 3);
    // Still offline a moment: the page has not reconnected.
    await new Promise((r) => setTimeout(r, 1500));
    assert.is(await page.getByText('Live: connecting…').count(), 1, 'still reconnecting while offline');
    assert.ok(!(await shownPositions(page)).includes(seen(ws).at(-1)!.position));

    await context.setOffline(false);
    await page.getByText('Live: up to date').waitFor({ timeout: 20_000 });
    await sameAsReference(page, ws, 'after the reconnect');
    // Then live again.
    await createTask(ctx, ctx.beta, 'After the drop');
    await sameAsReference(page, ws, 'after the reconnect, new events');
  } finally {
    ws.close();
  }
  const reconnects = ctx.sockets
    .map((u) => new URL(u))
    .filter((u) => u.pathname === '/ws' && u.searchParams.has('from'));
  assert.ok(
    reconnects.length > 0 && reconnects.every((u) => u.searchParams.get('from') === lastBefore),
    `reconnects from ${lastBefore}: ${reconnects.join(', ')}`,
  );
  await context.close();
});

test('a readonly account: the cockpit with its charts and live tiles, Activity in the navigation; no write control', async (ctx) => {
  const { context, page } = await signedInWatched(ctx, ctx.reader);
  await page.locator('.chart[data-chart="tasks"] canvas').first().waitFor();
  await page.locator('[data-tile="tasks"]').waitFor();
  assert.is(await page.locator('main button').count(), 0, 'no button on the cockpit');
  await nav(page).getByRole('link', { name: 'Activity' }).click();
  await h1(page, 'Activity');
  await page.getByText('Live: up to date').waitFor();
  await createTask(ctx, ctx.beta, 'Seen by the reader');
  await page.locator('#activity-table tbody tr').first().waitFor();
  assert.equal(await page.locator('main button').allTextContents(), ['Pause'], 'only Pause');
  await axeClean(page, 'activity (readonly)');
  assert.equal(await cspViolations(page), [], 'no CSP violation');
  await context.close();
});

test('the pages asked only for /auth/*, the /api/* mirrors and the sockets, writes with CSRF', async (ctx) => {
  for (const settle of ctx.settled) await settle();
  assert.ok(ctx.recorded.some((r) => r.path.startsWith('/api/cockpit/cost/daily?days=30')));
  const sockets = ctx.sockets.map((u) => new URL(u));
  assert.ok(sockets.some((u) => u.pathname === '/ws/live') && sockets.some((u) => u.pathname === '/ws'));
  assert.ok(
    sockets.every((u) => u.origin === ctx.s.orch.replace(/^http/, 'ws')),
    'same origin',
  );
  assert.equal(
    disallowed([
      ...ctx.recorded,
      ...sockets.map((u) => ({
        method: 'GET',
        path: u.pathname + u.search,
        kind: 'websocket',
        csrf: undefined,
        cookie: undefined,
      })),
    ]),
    [],
  );
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test.run();
