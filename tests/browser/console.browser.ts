// The web console in a real browser against the real orchestration service: the sign-in page,
// password sign-in and sign-out (checked through the API afterwards), a keyboard-only sign-in
// (no pointer event), a readonly account's 403 page by URL, a 401 back to sign-in and to the page
// it was on (met by a navigation, or by an action in the middle of a page, never by way of
// /signed-out), axe on every page and screenshots;
// a recorder of every request finds only allowed paths and a CSRF header on every write; last,
// a wrong password and a locked account read the same and a 429 counts down.

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAccount, type Account } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import {
  axeClean,
  closeSuite,
  countPointerEvents,
  disallowed,
  launchBrowser,
  openPage,
  screenshots,
  submitSignIn,
  tabTo,
  writesWithoutCsrf,
  type Recorded,
} from './support.ts';

const ADMIN_KEY = 'orch_browser-admin-key-0000000000000000';

interface Ctx {
  s: TestServices;
  browser: Browser;
  admin: Account;
  reader: Account;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
}
const test = suite<Ctx>('console in the browser');

test.before(async (ctx) => {
  ctx.s = await startTestServices('browser_console', { ADMIN_API_KEY: ADMIN_KEY });
  [ctx.admin, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'admin'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
});
test.after(closeSuite);

const fresh = (ctx: Ctx) => openPage(ctx.browser, ctx.s.orch, ctx.recorded, ctx.settled);

const heading = (page: Page) => page.locator('h1').first();

async function signIn(page: Page, account: Account): Promise<void> {
  await page.goto('/');
  await page.waitForURL(/\/sign-in/);
  await submitSignIn(page, account);
}

async function sessionCookie(context: BrowserContext): Promise<string> {
  const cookies = await context.cookies();
  return cookies
    .filter((c) => c.name === 'orch_sess' || c.name === 'orch_csrf')
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}

test('anonymous: / returns to sign-in, remembering the page; the sign-in page is axe-clean', async (ctx) => {
  const { context, page } = await fresh(ctx);
  await page.goto('/admin');
  await page.waitForURL(/\/sign-in\?next=%2Fadmin$/);
  assert.is(await heading(page).textContent(), 'Sign in');
  assert.is(await page.title(), 'Sign in · Orchard');
  // Landmarks and the skip link.
  assert.is(await page.locator('header').count(), 1);
  assert.is(await page.locator('main#main').count(), 1);
  assert.is(await page.getByRole('link', { name: 'Skip to content' }).count(), 1);
  await axeClean(page, 'sign-in');
  await screenshots(page, 'sign-in');
  await context.close();
});

test('password sign-in, the cockpit, sign-out: checked through the API afterwards', async (ctx) => {
  const { s, admin } = ctx;
  const project = await http(`${s.orch}/api/v1/projects`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { name: 'Browser project' },
  });
  assert.is(project.status, 201, project.text);
  const { context, page } = await fresh(ctx);
  await signIn(page, admin);
  const cookie = await sessionCookie(context);
  const during = await http(`${s.orch}/auth/session`, { headers: { cookie } });
  assert.equal([during.body.authenticated, during.body.user?.username], [true, admin.username]);
  // The cockpit: tiles and the projects' table; admin navigation shows Administration.
  const tasks = page.getByRole('table', { name: 'Open, in progress and done tasks of each project' });
  await tasks.waitFor();
  assert.ok((await tasks.textContent())?.includes('Browser project'));
  assert.is(
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).count(),
    1,
  );
  await axeClean(page, 'cockpit');
  await screenshots(page, 'cockpit');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  await page.getByRole('table').waitFor();
  assert.ok((await page.getByRole('table').textContent())?.includes(admin.username));
  await axeClean(page, 'administration');
  await screenshots(page, 'administration');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Signed out' }).waitFor();
  await axeClean(page, 'signed-out');
  await screenshots(page, 'signed-out');
  const after = await http(`${s.orch}/auth/session`, { headers: { cookie } });
  assert.is(after.body.authenticated, false, 'the old session cookie no longer signs in');
  assert.is((await http(`${s.orch}/api/me`, { headers: { cookie } })).status, 401);
  await context.close();
});

test('keyboard only: sign-in by Tab, typing and Enter, no pointer event', async (ctx) => {
  const { context, page } = await fresh(ctx);
  await page.goto('/sign-in');
  await countPointerEvents(page);
  // The skip link comes first and moves focus to the main content.
  await page.keyboard.press('Tab');
  assert.is(await page.evaluate('document.activeElement?.textContent'), 'Skip to content');
  await tabTo(page, '#email');
  await page.keyboard.type(ctx.admin.email);
  await page.keyboard.press('Tab');
  assert.is(await page.evaluate('document.activeElement?.id'), 'password');
  await page.keyboard.type(ctx.admin.password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Cockpit' }).waitFor();
  assert.is(await page.evaluate('window.pointerEvents'), 0);
  const me = await http(`${ctx.s.orch}/auth/session`, { headers: { cookie: await sessionCookie(context) } });
  assert.is(me.body.user?.email, ctx.admin.email);
  await context.close();
});

test('a readonly account: no Administration in the navigation, the "needs admin" page by URL', async (ctx) => {
  const { context, page } = await fresh(ctx);
  await signIn(page, ctx.reader);
  assert.is(
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).count(),
    0,
  );
  await page.goto('/admin');
  await page.getByRole('heading', { level: 1, name: 'Needs admin' }).waitFor();
  assert.ok((await page.getByRole('alert').textContent())?.includes('admin role required'));
  await axeClean(page, 'needs-admin');
  await screenshots(page, 'needs-admin');
  await context.close();
});

test("a session ended elsewhere: the next call's 401 returns to sign-in, remembering the page", async (ctx) => {
  const { context, page } = await fresh(ctx);
  await signIn(page, ctx.admin);
  // From a page that calls nothing in the background: on the cockpit, a refresh of its own could
  // meet the 401 first and return to sign-in remembering the cockpit instead.
  await page.goto('/account');
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  const cookie = await sessionCookie(context);
  assert.is((await http(`${ctx.s.orch}/auth/logout`, { method: 'POST', headers: { cookie } })).status, 204);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
  await page.waitForURL(/\/sign-in\?next=%2Fadmin$/);
  await page.getByLabel('Email').fill(ctx.admin.email);
  await page.getByLabel('Password').fill(ctx.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  await context.close();
});

test('a 401 in the middle of a page (an action, not a navigation) returns to sign-in, then to that page', async (ctx) => {
  const { context, page } = await fresh(ctx);
  const visited: string[] = [];
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) visited.push(new URL(frame.url()).pathname);
  });
  await signIn(page, ctx.admin);
  await page.goto('/account');
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  const cookie = await sessionCookie(context);
  assert.is((await http(`${ctx.s.orch}/auth/logout`, { method: 'POST', headers: { cookie } })).status, 204);
  await page.getByRole('button', { name: 'Rotate my API key' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Rotate my key' }).click();
  await page.waitForURL(/\/sign-in\?next=%2Faccount$/);
  await page.getByLabel('Email').fill(ctx.admin.email);
  await page.getByLabel('Password').fill(ctx.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  assert.is(new URL(page.url()).pathname, '/account');
  assert.not.ok(visited.includes('/signed-out'), `went through /signed-out: ${visited.join(' → ')}`);
  await context.close();
});

test("the request recorder: only allowed paths, never /api/v1/; every write carries the session's CSRF token", async (ctx) => {
  for (const settle of ctx.settled) await settle();
  assert.ok(ctx.recorded.some((r) => r.path === '/auth/session'));
  assert.ok(ctx.recorded.some((r) => r.path === '/api/cockpit/summary'));
  assert.ok(ctx.recorded.some((r) => r.method === 'POST' && r.path === '/auth/logout'));
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test('a wrong password and a locked account read the same; a 429 counts down retry_after', async (ctx) => {
  const { context, page } = await fresh(ctx);
  await page.goto('/sign-in');
  const attempt = async (email: string, password: string) => {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#sign-in-error p').waitFor();
    return (await page.locator('#sign-in-error p').textContent())!;
  };
  const wrong = await attempt(ctx.reader.email, 'not-the-password');
  // Lock the account (5 failures in the window), then its right password reads like a wrong one.
  for (let i = 0; i < 5; i++)
    await http(`${ctx.s.orch}/auth/login`, { json: { email: ctx.reader.email, password: 'nope' } });
  const locked = await attempt(ctx.reader.email, ctx.reader.password);
  assert.is(locked, wrong);
  await axeClean(page, 'sign-in with an error');
  // The address limit (20 failures): 429, and the button counts down.
  for (let i = 0; i < 20; i++)
    await http(`${ctx.s.orch}/auth/login`, { json: { email: 'nobody@example.test', password: 'nope' } });
  const limited = await attempt(ctx.admin.email, ctx.admin.password);
  assert.match(limited, /Too many failed sign-ins/);
  const button = page.getByRole('button', { name: /Wait \d+ s/ });
  assert.ok(await button.isDisabled());
  const first = Number(/\d+/.exec((await button.textContent())!)![0]);
  // Polled from here: the page's CSP (no eval) refuses waitForFunction's string predicates.
  const seconds = async () => Number(/\d+/.exec((await page.locator('form button').textContent()) ?? '')?.[0]);
  for (const deadline = Date.now() + 5000; (await seconds()) >= first;) {
    assert.ok(Date.now() < deadline, 'the countdown did not move');
    await new Promise((r) => setTimeout(r, 200));
  }
  await screenshots(page, 'sign-in-rate-limited');
  await context.close();
});

test.run();
