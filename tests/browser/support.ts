// The browser side of the console suites: Debian's chromium through playwright-core, axe-core
// (WCAG 2.2 AA tags) on a page, screenshots at two sizes in light and dark, and a recorder of
// every request a page makes.

import { AxeBuilder } from '@axe-core/playwright';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page, type Request } from 'playwright-core';
import * as assert from 'uvu/assert';
import { until as poll } from '../support/until.ts';

export const SCREENSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test-results/screenshots');

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_FLAGS,
  });
}

const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** axe on the page as it is, in light and in dark: no violation. */
export async function axeClean(page: Page, label: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await new AxeBuilder({ page }).withTags(WCAG_TAGS).analyze();
    const found = results.violations.map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}; ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
    assert.equal(found, [], `axe on ${label} (${colorScheme})`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Screenshots of the page at 1280×800 and 390×844, light and dark, to test-results/screenshots/. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize();
  for (const [width, height] of [
    [1280, 800],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height });
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
      await page.screenshot({
        path: path.join(SCREENSHOTS, `${name}-${width}x${height}-${colorScheme}.png`),
        fullPage: true,
      });
    }
  }
  if (original) await page.setViewportSize(original);
  await page.emulateMedia({ colorScheme: 'light' });
}

export interface Recorded {
  method: string;
  path: string;
  kind: string;
  csrf: string | undefined;
  cookie: string | undefined;
}

/**
 * Every request of every page of a context, with what a review needs: path, kind, CSRF header,
 * cookies (all headers, as sent). Await the returned function before reading `into`.
 */
export function recordRequests(context: BrowserContext, into: Recorded[]): () => Promise<void> {
  const pending: Promise<void>[] = [];
  context.on('request', (request: Request) => {
    const url = new URL(request.url());
    pending.push(
      request.allHeaders().then(
        (headers) => {
          into.push({
            method: request.method(),
            path: url.pathname + url.search,
            kind: request.resourceType(),
            csrf: headers['x-csrf-token'],
            cookie: headers.cookie,
          });
        },
        () => {
          into.push({
            method: request.method(),
            path: url.pathname + url.search,
            kind: request.resourceType(),
            csrf: undefined,
            cookie: undefined,
          });
        },
      ),
    );
  });
  return async () => {
    await Promise.all(pending);
  };
}

/** What the console may ask for: its pages and assets, /auth/*, the /api/* session mirrors (never /api/v1/*), the sockets. */
export function disallowed(recorded: Recorded[]): string[] {
  const bad: string[] = [];
  for (const r of recorded) {
    const p = r.path.split('?')[0]!;
    const ok =
      r.kind === 'document'
        ? !p.startsWith('/api/')
        : p.startsWith('/assets/') ||
          p === '/favicon.svg' ||
          p.startsWith('/auth/') ||
          p === '/ws' ||
          p === '/ws/live' ||
          (p.startsWith('/api/') && !p.startsWith('/api/v1/'));
    if (!ok) bad.push(`${r.method} ${r.path} (${r.kind})`);
  }
  return bad;
}

/** Writes made with a session that lack the session's CSRF token (sign-in itself starts the session). */
export function writesWithoutCsrf(recorded: Recorded[]): string[] {
  return recorded
    .filter((r) => !['GET', 'HEAD', 'OPTIONS'].includes(r.method) && r.path !== '/auth/login')
    .filter((r) => {
      const csrf = /(?:^|;\s*)orch_csrf=([^;]+)/.exec(r.cookie ?? '')?.[1];
      return !csrf || r.csrf !== decodeURIComponent(csrf);
    })
    .map((r) => `${r.method} ${r.path}`);
}

/** Press Tab until `selector` has focus (keyboard only), failing after `max` presses. */
export async function tabTo(page: Page, selector: string, max = 25): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${selector} not reached by Tab within ${max} presses`);
}

/**
 * Count pointer-made events in the page from now on, in `window.pointerEvents` (a keyboard Enter's
 * synthetic click has detail 0 and is not counted): pointerdown, mousedown, click and `also`.
 * Written as a string: these files are type-checked without the DOM library.
 */
export async function countPointerEvents(page: Page, also: string[] = []): Promise<void> {
  await page.evaluate(`window.pointerEvents = 0;
    for (const type of ${JSON.stringify(['pointerdown', 'mousedown', 'click', ...also])}) {
      document.addEventListener(type, (e) => { if (type !== 'click' || e.detail > 0) window.pointerEvents++; }, true);
    }`);
}

/**
 * What has focus (its id, text or aria-label), polled until it is `want` or a second has passed:
 * a page moves focus in the animation frame after a render, so a read right after a click can be
 * early. (Polled here: the page's CSP refuses waitForFunction's string predicates.)
 */
export async function focusOn(page: Page, want: string, of: 'id' | 'text' | 'label' = 'id'): Promise<string> {
  const read = {
    id: 'document.activeElement?.id',
    text: 'document.activeElement?.textContent',
    label: 'document.activeElement?.getAttribute("aria-label")',
  }[of];
  let got = '';
  for (let i = 0; i < 20 && got !== want; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    got = String((await page.evaluate(read)) ?? '');
  }
  return got;
}

/** A new context and its page; `close` closes the context once the recorder has its requests' headers. */
export interface Opened {
  context: BrowserContext;
  page: Page;
  close: () => Promise<void>;
}

/** A new browser context on `baseURL` (1280×800) whose requests go to the recorder, and its page (page errors printed). */
export async function openPage(
  browser: Browser,
  baseURL: string,
  recorded: Recorded[],
  settled: (() => Promise<void>)[],
): Promise<Opened> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 } });
  const settle = recordRequests(context, recorded);
  settled.push(settle);
  const page = await context.newPage();
  page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
  // The recorder reads each request's headers as sent: let it finish before the context goes.
  const close = async () => {
    await settle();
    await context.close();
  };
  return { context, page, close };
}

/** Fill and send the sign-in form the page shows. */
async function sendSignIn(page: Page, account: { email: string; password: string }): Promise<void> {
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Fill and send the sign-in form the page shows, then wait for the cockpit. */
export async function submitSignIn(page: Page, account: { email: string; password: string }): Promise<void> {
  await sendSignIn(page, account);
  await page.getByRole('heading', { level: 1, name: 'Cockpit' }).waitFor();
}

/** What a browser suite's context holds for its pages: the services (the console's address), the browser, the recorder. */
export interface BrowserSuite {
  s: { orch: string };
  browser: Browser;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
}

export interface SignInOptions {
  /**
   * The page to ask for first: the console sends the browser to sign-in and, once signed in, back
   * here. Without it: /sign-in, then the cockpit.
   */
  path?: string;
  /** Runs on the new context and its page before anything loads (permissions, init scripts, listeners). */
  prepare?: (opened: Opened) => Promise<void>;
}

/** A new context (openPage) signed in as `account` through the sign-in form. */
export async function signedIn(
  ctx: BrowserSuite,
  account: { email: string; password: string },
  options: SignInOptions = {},
): Promise<Opened> {
  const opened = await openPage(ctx.browser, ctx.s.orch, ctx.recorded, ctx.settled);
  await options.prepare?.(opened);
  const { page } = opened;
  const path = options.path;
  if (path === undefined) {
    await page.goto('/sign-in');
    await submitSignIn(page, account);
  } else {
    await page.goto(path);
    await page.waitForURL(/\/sign-in/);
    await sendSignIn(page, account);
    await page.waitForURL((url) => url.pathname === path);
  }
  return opened;
}

/** The console's main navigation. */
export const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
/** Wait for the page's heading `name`. */
export const h1 = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor();

/**
 * A suite's `before` hook that runs `seed` and prints its failure before passing it on: uvu's
 * report of a failed `before` hook has no message.
 */
export function setUp<T>(seed: (ctx: T) => Promise<void>): (ctx: T) => Promise<void> {
  return async (ctx) => {
    try {
      await seed(ctx);
    } catch (error) {
      console.error(error);
      throw error;
    }
  };
}

/** A suite's `after` hook: the browser, the services, then the suite's temporary directory (each only if the set-up got that far). */
export async function closeSuite({
  s,
  browser,
  dir,
}: {
  s?: { close(): Promise<void> };
  browser?: Browser;
  dir?: string;
}): Promise<void> {
  await browser?.close();
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** Wait until `check` holds, polling every 50 ms: for what settles a frame or two later. */
export const until = (what: string, check: () => Promise<boolean>, ms = 5000) => poll(what, check, ms, 50);
