// Web console figures, against the real orchestration service on a loopback port and Debian's
// chromium (playwright-core, the browser tests' flags):
//
//   board_move_roundtrip_ms  ms (p95; p50 beside it)  a card dropped on a project's board in one
//       browser context until it shows in the new column in another context of another account:
//       the drop's optimistic PATCH /api/tasks/{id}, the append, the log's live delivery over /ws
//       to the second page and its render. Timed inside the pages (the drop event's time in the
//       first, a MutationObserver's in the second, on one clock): 30 moves after 3 unmeasured
//       ones. Target: 250 ms.
//   console_first_load_ms  ms (median of 20)  navigation to an interactive cockpit, signed in,
//       each time in a fresh browser context (cold cache): from the navigation's start to the
//       cockpit's tiles rendered from GET /api/cockpit/summary (the page answers input from then
//       on), measured by the page's own clock. Target: 400 ms on loopback.
//   console_js_gzip_kb  KiB  gzip size of the JS the first page loads, read from the build.
//
// The console build is brought up to date first when it is stale (as `serve` does). Without
// chromium only console_js_gzip_kb is reported.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONSOLE_DIR } from '../api/orchestration/console/build-stamp.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { currentConsoleDecision } from '../main/console.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { launchBrowser } from '../tests/browser/support.ts';
import { firstPageJsGzipKb } from '../web/console/build.ts';
import type { Figure } from './figure.ts';
import { percentile } from './http.ts';
import { BENCH_POOL_ENV } from './pools.ts';

const ADMIN_KEY = `orch_bench-console-${randomUUID()}`;
const MOVES = 30;
const WARMUP_MOVES = 3;
const LOADS = 20;
const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** Build the console when its build is missing or stale (as `serve` does); false when it cannot be built. */
export function ensureConsoleBuilt(progress: (m: string) => void): boolean {
  const decision = currentConsoleDecision();
  if (decision.action === 'serve') return true;
  if (decision.action !== 'rebuild') return false;
  progress(`console: build ${decision.reason}, building`);
  return (
    spawnSync(process.execPath, ['--import', 'tsx', path.join(CONSOLE_DIR, 'build.ts'), '--bundle'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    }).status === 0
  );
}

async function json(
  base: string,
  pathname: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
) {
  const r = await fetch(`${base}${pathname}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: r.status, headers: r.headers, body: (await r.json().catch(() => null)) as any };
}

/** An account with a password, and its session cookies (orch_sess, orch_csrf) from POST /auth/login. */
async function sessionOf(base: string, role: 'user' | 'readonly'): Promise<{ name: string; value: string }[]> {
  const name = `bench-${role}-${randomUUID().slice(0, 8)}`;
  const password = `pw-${randomUUID()}`;
  const made = await json(base, '/api/v1/admin/users', {
    headers: { 'X-API-Key': ADMIN_KEY },
    body: { username: name, email: `${name}@example.test`, role, password },
  });
  if (made.status !== 201) throw new Error(`create account: ${made.status}`);
  const login = await fetch(`${base}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `${name}@example.test`, password }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status}`);
  return login.headers.getSetCookie().map((line) => {
    const [pair] = line.split(';');
    const [cookieName, ...rest] = pair!.split('=');
    return { name: cookieName!.trim(), value: rest.join('=') };
  });
}

async function contextWith(
  browser: Browser,
  base: string,
  cookies: { name: string; value: string }[],
): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 800 } });
  await context.addCookies(cookies.map((c) => ({ ...c, url: base, sameSite: 'Strict' as const })));
  return context;
}

async function openBoard(context: BrowserContext, project: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`/projects/${project}`);
  await page.getByText('Live: up to date').waitFor();
  return page;
}

async function boardRoundtrips(browser: Browser, base: string, progress: (m: string) => void): Promise<number[]> {
  const owner = await sessionOf(base, 'user');
  const watcher = await sessionOf(base, 'readonly');
  const ownerContext = await contextWith(browser, base, owner);
  const csrf = owner.find((c) => c.name === 'orch_csrf')!.value;
  const cookie = owner.map((c) => `${c.name}=${c.value}`).join('; ');
  const headers = { cookie, 'x-csrf-token': csrf, origin: base, 'sec-fetch-site': 'same-origin' };
  const project = await json(base, '/api/projects', { headers, body: { name: 'bench board' } });
  const task = await json(base, '/api/tasks', {
    headers,
    body: { project_id: project.body.id, title: 'Bench card', priority: 'medium', status: 'todo' },
  });
  const id = task.body.id as string;
  const a = await openBoard(ownerContext, project.body.id);
  const watcherContext = await contextWith(browser, base, watcher);
  const b = await openBoard(watcherContext, project.body.id);
  await a.locator(`li[data-task-id="${id}"]`).waitFor();
  await b.locator(`li[data-task-id="${id}"]`).waitFor();
  // The pages' clocks: performance.timeOrigin + now() is wall-clock time at sub-millisecond resolution.
  await a.evaluate(
    `document.addEventListener('drop', () => { window.droppedAt = performance.timeOrigin + performance.now(); }, true)`,
  );
  const samples: number[] = [];
  for (let i = 0; i < WARMUP_MOVES + MOVES; i++) {
    const to = i % 2 === 0 ? 'in_progress' : 'todo';
    await b.evaluate(`window.movedAt = null; new MutationObserver((_, observer) => {
        if (document.querySelector('section[data-status="${to}"] li[data-task-id="${id}"]')) {
          window.movedAt = performance.timeOrigin + performance.now();
          observer.disconnect();
        }
      }).observe(document.querySelector('.board'), { childList: true, subtree: true })`);
    const answered = a.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes(`/api/tasks/${id}`));
    await a.locator(`li[data-task-id="${id}"] .card-meta`).dragTo(a.locator(`section[data-status="${to}"]`));
    await b.locator(`section[data-status="${to}"] li[data-task-id="${id}"]`).waitFor();
    const response = await answered;
    if (response.status() !== 200) throw new Error(`PATCH /api/tasks/${id}: ${response.status()}`);
    const moved = Number(await b.evaluate('window.movedAt'));
    const dropped = Number(await a.evaluate('window.droppedAt'));
    if (i >= WARMUP_MOVES) samples.push(moved - dropped);
  }
  progress(`console: ${samples.length} board moves`);
  await ownerContext.close();
  await watcherContext.close();
  return samples;
}

async function firstLoads(browser: Browser, base: string, progress: (m: string) => void): Promise<number[]> {
  const cookies = await sessionOf(base, 'readonly');
  const samples: number[] = [];
  for (let i = 0; i < LOADS + 1; i++) {
    const context = await contextWith(browser, base, cookies);
    // Runs before the page's own scripts (a DevTools-injected script, not subject to the page's CSP).
    await context.addInitScript(`new MutationObserver((_, observer) => {
        if (document.querySelector('.tiles')) {
          window.interactiveAt = performance.now();
          observer.disconnect();
        }
      }).observe(document, { childList: true, subtree: true })`);
    const page = await context.newPage();
    await page.goto('/');
    await page.locator('.tiles').waitFor();
    const ms = Number(await page.evaluate('window.interactiveAt'));
    if (i > 0) samples.push(ms); // the first load warms the server (its first query plans)
    await context.close();
  }
  progress(`console: ${samples.length} first loads`);
  return samples;
}

export async function consoleFigures(databaseUrl: string, progress: (m: string) => void = () => {}): Promise<Figure[]> {
  if (!ensureConsoleBuilt(progress))
    throw new Error('the console is not built and cannot be (npm install, then npm run build:console)');
  const figures: Figure[] = [{ name: 'console_js_gzip_kb', value: await firstPageJsGzipKb(), unit: 'KiB' }];
  const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (!existsSync(chromium)) {
    progress(`console: no chromium at ${chromium}; browser figures skipped`);
    return figures;
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-console-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c5'.repeat(32),
    ORCH_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    ADMIN_API_KEY: ADMIN_KEY,
  });
  const platform = await openPlatform(
    config,
    createLogger({ level: 'error', sink: (line) => progress(`engine: ${line}`) }),
  );
  const [orch] = await startServices(platform, ['orch']);
  const base = orch!.url;
  const browser = await launchBrowser();
  try {
    const moves = await boardRoundtrips(browser, base, progress);
    figures.push({ name: 'board_move_roundtrip_ms', value: round(percentile(moves, 95)), unit: 'ms' });
    figures.push({ name: 'board_move_roundtrip_ms_p50', value: round(percentile(moves, 50)), unit: 'ms' });
    const loads = await firstLoads(browser, base, progress);
    figures.push({ name: 'console_first_load_ms', value: round(percentile(loads, 50)), unit: 'ms' });
  } finally {
    await browser.close();
    await orch!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}
