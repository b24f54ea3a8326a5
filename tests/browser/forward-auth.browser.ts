// Forward-auth in a real browser: a reverse proxy started by the test (tests/support/
// forward-auth-proxy.ts) in front of an orchestration service configured for forward auth adds
// the identity headers to every request, the /ws upgrade included. The browser opens the proxy's
// address and is signed in by its first request (no sign-in form); pages work, a write passes the
// CSRF check through the proxy, the /ws socket connects through it ("Live: up to date"), and
// sign-out ends the local session and links to ORCH_FORWARD_AUTH_LOGOUT_URL. Each step is checked
// through the API afterwards. The service trusts the proxy's own loopback address only: the same
// browser going to the service directly is not signed in.

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startForwardAuthProxy, type ForwardAuthProxy } from '../support/forward-auth-proxy.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import {
  axeClean,
  disallowed,
  launchBrowser,
  recordRequests,
  screenshots,
  writesWithoutCsrf,
  type Recorded,
} from './support.ts';

const ADMIN_KEY = 'orch_forward-auth-browser-admin-key-0000';
const LOGOUT_URL = 'https://sso.example.test/logout?return=orchard';
const WHO = { username: 'sso-dana', email: 'sso-dana@corp.example', groups: ['staff', 'orch-admin'] };

interface Ctx {
  s: TestServices;
  proxy: ForwardAuthProxy;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  recorded: Recorded[];
  settle: () => Promise<void>;
  sockets: string[];
}
const test = suite<Ctx>('forward-auth through a reverse proxy, in the browser');

test.before(async (ctx) => {
  ctx.s = await startTestServices('browser_forward_auth', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_FORWARD_AUTH: 'true',
    ORCH_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.3/32',
    ORCH_FORWARD_AUTH_LOGOUT_URL: LOGOUT_URL,
  });
  const project = await http(`${ctx.s.orch}/api/v1/projects`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { name: 'Behind the proxy' },
  });
  assert.is(project.status, 201, project.text);
  ctx.proxy = await startForwardAuthProxy(ctx.s.orch, WHO);
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.context = await ctx.browser.newContext({ baseURL: ctx.proxy.url, viewport: { width: 1280, height: 800 } });
  ctx.settle = recordRequests(ctx.context, ctx.recorded);
  ctx.page = await ctx.context.newPage();
  ctx.sockets = [];
  ctx.page.on('websocket', (ws) => ctx.sockets.push(ws.url()));
  ctx.page.on('pageerror', (error) => console.error(`page error: ${error.message}`));
});
test.after(async ({ s, browser, proxy }) => {
  await browser?.close();
  await proxy?.close();
  await s?.close();
});

const user = async (ctx: Ctx) => {
  const list = await http(`${ctx.s.orch}/api/v1/admin/users?limit=200`, { headers: { 'X-API-Key': ADMIN_KEY } });
  return list.body.users.find((u: { username: string }) => u.username === WHO.username);
};
const sessionCookie = async (ctx: Ctx) =>
  (await ctx.context.cookies())
    .filter((c) => c.name === 'orch_sess' || c.name === 'orch_csrf')
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');

test("the proxy's first request signs in: the cockpit, no sign-in form; the account provisioned with the groups' role", async (ctx) => {
  const { page } = ctx;
  await page.goto('/');
  await page.getByRole('heading', { level: 1, name: 'Cockpit' }).waitFor();
  assert.ok((await page.getByRole('banner').textContent())?.includes(WHO.username));
  assert.not.ok(
    ctx.recorded.some((r) => r.path.startsWith('/sign-in') || r.path === '/auth/login'),
    'no sign-in form, no password sign-in',
  );
  const account = await user(ctx);
  assert.equal(
    [account.role, account.auth_source, account.email, account.is_active],
    ['admin', 'forward_auth', WHO.email, true],
  );
  // Checked against the service directly: the cookie the proxy's answer set is a session of that account.
  const state = await http(`${ctx.s.orch}/auth/session`, { headers: { cookie: await sessionCookie(ctx) } });
  assert.equal(
    [state.body.authenticated, state.body.user?.username, state.body.login, state.body.logout_url],
    [true, WHO.username, 'forward_auth', LOGOUT_URL],
  );
});

test('pages work through the proxy; the /ws socket connects through it ("Live: up to date")', async (ctx) => {
  const { page } = ctx;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }).click();
  await page.getByRole('link', { name: 'Behind the proxy' }).click();
  await page.getByRole('heading', { level: 1, name: 'Board: Behind the proxy' }).waitFor();
  await page.getByText('Live: up to date').waitFor();
  assert.ok(
    ctx.proxy.upgrades.some((u) => u.path.startsWith('/ws') && u.status === 101),
    `upgrades through the proxy: ${JSON.stringify(ctx.proxy.upgrades)}`,
  );
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
  await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
  await page.getByText('Live: up to date').waitFor();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
  await page.locator(`tr[data-account="${WHO.username}"]`).waitFor();
});

test('a write through the proxy passes the CSRF check: rotate my key on the account page; the new key works', async (ctx) => {
  const { page } = ctx;
  await page
    .getByRole('banner')
    .getByRole('link', { name: new RegExp(WHO.username) })
    .click();
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  assert.ok((await page.locator('dl').textContent())?.includes('single sign-on'));
  await page.getByRole('button', { name: 'Rotate my API key' }).click();
  await page
    .getByRole('dialog', { name: 'Rotate your API key?' })
    .getByRole('button', { name: 'Rotate my key' })
    .click();
  const once = page.getByRole('dialog', { name: 'Your new API key' });
  await once.waitFor();
  const key = await page.locator('#once-key').inputValue();
  await once.getByRole('button', { name: 'Done' }).click();
  await once.waitFor({ state: 'detached' });
  const me = await http(`${ctx.s.orch}/api/v1/me`, { headers: { 'X-API-Key': key } });
  assert.equal([me.status, me.body.username], [200, WHO.username]);
});

test('sign-out ends the local session and links to ORCH_FORWARD_AUTH_LOGOUT_URL', async (ctx) => {
  const { page } = ctx;
  const cookie = await sessionCookie(ctx);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Signed out' }).waitFor();
  const link = page.getByRole('link', { name: 'sign out of single sign-on' });
  assert.is(await link.getAttribute('href'), LOGOUT_URL);
  await axeClean(page, 'signed out under forward-auth');
  await screenshots(page, 'signed-out-forward-auth');
  // The ended session no longer signs in at the service (without the proxy's headers).
  const after = await http(`${ctx.s.orch}/auth/session`, { headers: { cookie } });
  assert.is(after.body.authenticated, false);
  assert.is((await http(`${ctx.s.orch}/api/me`, { headers: { cookie } })).status, 401);
});

test("the service trusts the proxy's address only: the browser going to it directly is not signed in", async (ctx) => {
  const context = await ctx.browser.newContext({ baseURL: ctx.s.orch, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.setExtraHTTPHeaders({ 'X-Idp-Username': 'mallory', 'X-Idp-Groups': 'orch-admin' });
  await page.goto('/');
  await page.waitForURL(/\/sign-in/);
  await context.close();
  assert.is(
    (await http(`${ctx.s.orch}/api/v1/admin/users?limit=200`, { headers: { 'X-API-Key': ADMIN_KEY } })).body.users.some(
      (u: { username: string }) => u.username === 'mallory',
    ),
    false,
  );
});

test("the request recorder: only allowed paths through the proxy; every write carries the session's CSRF token", async (ctx) => {
  await ctx.settle();
  // The page's socket went to the proxy's address (and the proxy forwarded its upgrade, above).
  assert.ok(
    ctx.sockets.some((url) => url.startsWith(`${ctx.proxy.url.replace('http:', 'ws:')}/ws`)),
    ctx.sockets.join(' '),
  );
  assert.ok(ctx.recorded.some((r) => r.method === 'POST' && r.path === '/api/me/api-key/rotate'));
  assert.ok(ctx.recorded.some((r) => r.method === 'POST' && r.path === '/auth/logout'));
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
  await ctx.context.close();
});

test.run();
