// The Account and Administration pages in a real browser against the real orchestration service,
// each journey checked through the API afterwards: rotating one's own key by keyboard only (no
// pointer event; the old key 401 on the next request, the new one works; the key gone from the
// page once its dialog closes, and never in storage); an admin rotating another account's key;
// creating an account (its key, shown once, works), changing its role, deactivating it (its key
// 401, its sign-in refused); the server's cannot_demote_self in words; the accounts paged as the
// route pages them; the runner and an agent credential shown by type without controls; a readonly
// account without Administration and with the "needs admin" page by URL. axe on each page and
// open dialog, light and dark; screenshots; a recorder of every request (allowed paths only, a
// CSRF header on every write).

import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyMaterial } from '../../api/orchestration/users/keys.ts';
import { RUNNER_ID, userDecider } from '../../domain/orchestration/users/decider.ts';
import { userStream } from '../../domain/orchestration/streams.ts';
import { createAccount, type Account } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
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

const ADMIN_KEY = `orch_accounts-admin-${randomUUID()}`;
const RUNNER_KEY = `orch_accounts-runner-${randomUUID()}`;

interface Ctx {
  s: TestServices;
  dir: string;
  browser: Browser;
  admin: Account;
  user: Account;
  other: Account;
  reader: Account;
  agentId: string;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
}
const test = suite<Ctx>('account and administration in the browser');

test.before(async (ctx) => {
  // The admin key from a file and a runner key: the runner's service principal is listed too.
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-accounts-'));
  await writeFile(path.join(ctx.dir, 'admin.key'), `${ADMIN_KEY}\n`, { mode: 0o600 });
  ctx.s = await startTestServices('browser_accounts', {
    ADMIN_API_KEY_FILE: path.join(ctx.dir, 'admin.key'),
    ORCH_RUNNER_API_KEY: RUNNER_KEY,
  });
  [ctx.admin, ctx.user, ctx.other, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'admin', 'acc-admin'),
    createAccount(ctx.s, ADMIN_KEY, 'user', 'acc-user'),
    createAccount(ctx.s, ADMIN_KEY, 'user', 'acc-other'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly', 'acc-reader'),
  ]);
  // An agent credential (agents come from spawns; made here through the domain, as the route suites do).
  ctx.agentId = randomUUID();
  await ctx.s.platform.commands.run(
    userStream(ctx.agentId),
    userDecider,
    {
      type: 'CreateUser',
      user_id: ctx.agentId,
      username: 'acc-agent',
      email: 'acc-agent@agents.invalid',
      role: 'user',
      auth_source: 'agent',
      principal_type: 'agent',
      key: keyMaterial(ctx.s.platform.sealKey, ctx.agentId, `orch_agent-${randomUUID()}`),
      password_hash: null,
      by: null,
      at: new Date().toISOString(),
    },
    { actor: { kind: 'system', id: 'test' }, correlationId: null },
  );
  // Enough accounts for a second page (key-only: nothing to hash).
  for (let i = 0; i < 20; i++) {
    const name = `filler-${String(i).padStart(2, '0')}`;
    const r = await http(`${ctx.s.orch}/api/v1/admin/users`, {
      headers: { 'X-API-Key': ADMIN_KEY },
      json: { username: name, email: `${name}@example.test`, role: 'readonly' },
    });
    assert.is(r.status, 201, r.text);
  }
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
});
test.after(closeSuite);

const me = (ctx: Ctx, key: string) => http(`${ctx.s.orch}/api/v1/me`, { headers: { 'X-API-Key': key } });
const accountOf = async (ctx: Ctx, id: string) => {
  const list = await http(`${ctx.s.orch}/api/v1/admin/users?limit=200`, { headers: { 'X-API-Key': ADMIN_KEY } });
  return list.body.users.find((u: { id: string }) => u.id === id);
};

/** A new context signed in as `account` (the sign-in form), on `path`, allowed the clipboard. */
const signedInOn = (ctx: Ctx, account: Account, path: string) =>
  signedIn(ctx, account, {
    path,
    prepare: ({ context }) => context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.s.orch }),
  });

/** The key is nowhere in the page (DOM, attributes, input values) nor in storage. */
async function keyGone(page: Page, key: string): Promise<void> {
  assert.not.ok((await page.content()).includes(key), 'the key is still in the DOM');
  const values = (await page.evaluate(
    '[...document.querySelectorAll("input, textarea")].map((el) => el.value).join("\\n")',
  )) as string;
  assert.not.ok(values.includes(key), 'the key is still in an input');
  const stored = (await page.evaluate(
    'JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])',
  )) as string;
  assert.not.ok(stored.includes(key), 'the key is in storage');
}

const row = (page: Page, username: string) => page.locator(`tr[data-account="${username}"]`);
/** The visible range line (the live region says it too). */
const range = (page: Page, text: string) => page.locator('#accounts-range', { hasText: text });

test('your account, keyboard only: rotate my key (confirm, shown once, copied, dropped on close); the old key 401 at once, the new one works', async (ctx) => {
  const { page, close } = await signedInOn(ctx, ctx.user, '/');
  // The banner's name links to the account page.
  await page
    .getByRole('banner')
    .getByRole('link', { name: /acc-user/ })
    .click();
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  assert.ok((await page.locator('dl').textContent())?.includes(ctx.user.email));
  await axeClean(page, 'account');
  await screenshots(page, 'account');

  // From here on: the keyboard only.
  await page.goto('/account');
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  await countPointerEvents(page);
  await tabTo(page, '#rotate-my-key');
  await page.keyboard.press('Enter');
  const confirm = page.getByRole('dialog', { name: 'Rotate your API key?' });
  await confirm.waitFor();
  assert.is(await focusOn(page, 'Cancel', 'text'), 'Cancel', 'the safe answer has focus');
  await axeClean(page, 'rotate-my-key confirmation');
  await screenshots(page, 'account-rotate-confirm');
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'Rotate my key', 'text'), 'Rotate my key');
  await page.keyboard.press('Enter');
  const once = page.getByRole('dialog', { name: 'Your new API key' });
  await once.waitFor();
  await confirm.waitFor({ state: 'detached' });
  assert.is(await focusOn(page, 'Copy key', 'text'), 'Copy key');
  const key = await page.locator('#once-key').inputValue();
  assert.match(key, /^orch_/);
  assert.ok((await once.textContent())?.includes('stopped working now'));
  assert.is(await page.locator('#once-key').getAttribute('readonly'), '');
  await page.keyboard.press('Enter');
  await once.getByText('Copied to the clipboard.').waitFor();
  assert.is(await page.evaluate('navigator.clipboard.readText()'), key);
  await axeClean(page, 'key shown once');
  await screenshots(page, 'account-key-once');
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'Done', 'text'), 'Done');
  await page.keyboard.press('Enter');
  await once.waitFor({ state: 'detached' });
  assert.is(await focusOn(page, 'rotate-my-key'), 'rotate-my-key', 'focus back on the opener');
  assert.is(await page.evaluate('window.pointerEvents'), 0);
  await keyGone(page, key);

  // Through the API: the old key is refused on the very next request, the new one is this account.
  const old = await me(ctx, ctx.user.apiKey);
  assert.equal([old.status, old.body.message], [401, 'invalid or inactive API key']);
  const fresh = await me(ctx, key);
  assert.equal([fresh.status, fresh.body.id], [200, ctx.user.id]);
  ctx.user.apiKey = key;
  await close();
});

test('administration: the accounts paged as the route pages them; the runner and an agent credential by type, without controls', async (ctx) => {
  const { page, close } = await signedInOn(ctx, ctx.admin, '/admin');
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  const total = (await http(`${ctx.s.orch}/api/v1/admin/users`, { headers: { 'X-API-Key': ADMIN_KEY } })).body
    .total as number;
  assert.ok(total > 20);
  await range(page, `Accounts 1 to 20 of ${total}.`).waitFor();
  assert.is(await page.locator('tbody tr').count(), 20);
  await axeClean(page, 'administration');
  await screenshots(page, 'administration');
  await page.getByRole('button', { name: 'Next accounts' }).click();
  await range(page, `Accounts 21 to ${total} of ${total}.`).waitFor();
  const second = (
    await http(`${ctx.s.orch}/api/v1/admin/users?limit=20&offset=20`, { headers: { 'X-API-Key': ADMIN_KEY } })
  ).body.users.map((u: { username: string }) => u.username);
  assert.equal(
    await page.locator('tbody th').allTextContents(),
    second.map((n: string) => (n === ctx.admin.username ? `${n} (you)` : n)),
  );
  await page.getByRole('button', { name: 'Previous accounts' }).click();
  await range(page, `Accounts 1 to 20 of ${total}.`).waitFor();
  // The runner (a service principal) and the agent credential: their type, no change or rotate control.
  for (const [id, type] of [
    [RUNNER_ID, 'service (the runner)'],
    [ctx.agentId, 'agent credential'],
  ] as const) {
    const username = (await accountOf(ctx, id)).username as string;
    const onPage = async () => (await row(page, username).count()) > 0;
    if (!(await onPage())) {
      await page.getByRole('button', { name: 'Next accounts' }).click();
      await range(page, `Accounts 21 to ${total} of ${total}.`).waitFor();
    }
    assert.ok(await onPage(), `${username} listed`);
    assert.ok((await row(page, username).textContent())?.includes(type));
    assert.is(await row(page, username).getByRole('button').count(), 0);
    if (await range(page, `Accounts 21 to ${total} of ${total}.`).count()) {
      await page.getByRole('button', { name: 'Previous accounts' }).click();
      await range(page, `Accounts 1 to 20 of ${total}.`).waitFor();
    }
  }
  await close();
});

test('administration: create an account (client errors, a taken username, the key shown once works), change its role, deactivate it', async (ctx) => {
  const { page, close } = await signedInOn(ctx, ctx.admin, '/admin');
  await page.getByRole('heading', { level: 1, name: 'Administration' }).waitFor();
  const opener = page.getByRole('button', { name: 'New account' });
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'New account' });
  await dialog.waitFor();
  assert.is(await focusOn(page, 'new-username'), 'new-username');
  await dialog.getByLabel('Username').fill('has space');
  await dialog.getByLabel('Email').fill('not-an-email');
  await dialog.getByLabel('Password').fill('short');
  await dialog.getByRole('button', { name: 'Create account' }).click();
  assert.is(await dialog.getByLabel('Username').getAttribute('aria-invalid'), 'true');
  assert.is(await page.locator('#new-username-error').textContent(), 'Letters, digits, dot, dash and underscore only.');
  assert.is(await page.locator('#new-email-error').count(), 1);
  assert.is(await page.locator('#new-password-error').textContent(), 'At least 12 characters, or leave it empty.');
  assert.is(await focusOn(page, 'new-username'), 'new-username', 'focus on the first field in error');
  await axeClean(page, 'new account dialog with errors');
  await screenshots(page, 'administration-new-account');
  // A username the server already has: its 409 lands on the field.
  await dialog.getByLabel('Username').fill(ctx.other.username);
  await dialog.getByLabel('Email').fill('someone-new@example.test');
  await dialog.getByLabel('Password').fill('');
  await dialog.getByRole('button', { name: 'Create account' }).click();
  await page
    .locator('#new-username-error')
    .getByText(/choose another username/)
    .waitFor();

  const password = `pw-${randomUUID()}`;
  await dialog.getByLabel('Username').fill('acc-made');
  await dialog.getByLabel('Email').fill('acc-made@example.test');
  await dialog.getByLabel('Role').selectOption('user');
  await dialog.getByLabel('Password').fill(password);
  await dialog.getByRole('button', { name: 'Create account' }).click();
  const once = page.getByRole('dialog', { name: 'Account acc-made created' });
  await once.waitFor();
  const key = await page.locator('#once-key').inputValue();
  assert.ok((await once.textContent())?.includes('shown only this once'));
  await axeClean(page, 'new account key shown once');
  await once.getByRole('button', { name: 'Done' }).click();
  await once.waitFor({ state: 'detached' });
  await until('focus back on New account', () =>
    opener.evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement),
  );
  await keyGone(page, key);
  const made = await me(ctx, key);
  assert.equal(
    [made.status, made.body.username, made.body.role, made.body.email],
    [200, 'acc-made', 'user', 'acc-made@example.test'],
  );
  assert.is(
    (await http(`${ctx.s.orch}/auth/login`, { json: { email: 'acc-made@example.test', password } })).status,
    200,
  );

  // Change its role (only the role is sent).
  const total = (await http(`${ctx.s.orch}/api/v1/admin/users`, { headers: { 'X-API-Key': ADMIN_KEY } })).body
    .total as number;
  await page.getByRole('button', { name: 'Next accounts' }).click();
  await range(page, `Accounts 21 to ${total} of ${total}.`).waitFor();
  await row(page, 'acc-made').getByRole('button', { name: 'Change acc-made' }).click();
  const change = page.getByRole('dialog', { name: 'Change acc-made' });
  await change.waitFor();
  await axeClean(page, 'change account dialog');
  await screenshots(page, 'administration-change');
  await change.getByLabel('Role').selectOption('readonly');
  const patch = page.waitForRequest((r) => r.method() === 'PATCH');
  await change.getByRole('button', { name: 'Save' }).click();
  assert.equal((await patch).postDataJSON(), { role: 'readonly' });
  await change.waitFor({ state: 'detached' });
  await row(page, 'acc-made').getByText('readonly', { exact: true }).waitFor();
  assert.is((await me(ctx, key)).body.role, 'readonly');

  // Deactivate it: its key and its sign-in are refused.
  await row(page, 'acc-made').getByRole('button', { name: 'Change acc-made' }).click();
  await change.waitFor();
  await change.getByLabel(/^Active/).uncheck();
  await change.getByRole('button', { name: 'Save' }).click();
  await change.waitFor({ state: 'detached' });
  await row(page, 'acc-made').getByText('no (deactivated)').waitFor();
  const refused = await me(ctx, key);
  assert.equal([refused.status, refused.body.message], [401, 'invalid or inactive API key']);
  assert.is(
    (await http(`${ctx.s.orch}/auth/login`, { json: { email: 'acc-made@example.test', password } })).status,
    401,
  );
  const id = made.body.id as string;
  assert.equal([(await accountOf(ctx, id)).is_active, (await accountOf(ctx, id)).role], [false, 'readonly']);
  await close();
});

test("administration: demoting oneself is refused, in words and with the server's message; nothing changes", async (ctx) => {
  const { page, close } = await signedInOn(ctx, ctx.admin, '/admin');
  await row(page, ctx.admin.username)
    .getByRole('button', { name: `Change ${ctx.admin.username}` })
    .click();
  const change = page.getByRole('dialog', { name: `Change ${ctx.admin.username} (you)` });
  await change.waitFor();
  await change.getByLabel('Role').selectOption('user');
  await change.getByRole('button', { name: 'Save' }).click();
  const error = page.locator('#change-account-error');
  await error.getByText(/You cannot demote or deactivate your own account/).waitFor();
  assert.ok((await error.textContent())?.includes('an admin cannot deactivate or demote their own account'));
  assert.is(await focusOn(page, 'change-account-error'), 'change-account-error');
  await axeClean(page, 'cannot demote self');
  await screenshots(page, 'administration-cannot-demote-self');
  await change.getByRole('button', { name: 'Cancel' }).click();
  assert.is((await accountOf(ctx, ctx.admin.id)).role, 'admin');
  await close();
});

test("administration: rotate another account's key (confirm, then shown once); its old key 401, the new one works", async (ctx) => {
  const { page, close } = await signedInOn(ctx, ctx.admin, '/admin');
  const opener = row(page, ctx.other.username).getByRole('button', { name: `Rotate key of ${ctx.other.username}` });
  await opener.click();
  const confirm = page.getByRole('dialog', { name: `Rotate the API key of ${ctx.other.username}?` });
  await confirm.waitFor();
  assert.is(await focusOn(page, 'Cancel', 'text'), 'Cancel');
  await axeClean(page, 'rotate another key confirmation');
  await confirm.getByRole('button', { name: 'Rotate key' }).click();
  const once = page.getByRole('dialog', { name: `New API key for ${ctx.other.username}` });
  await once.waitFor();
  const key = await page.locator('#once-key').inputValue();
  assert.ok((await once.textContent())?.includes(`of ${ctx.other.username} stopped working now`));
  await axeClean(page, 'another key shown once');
  await screenshots(page, 'administration-key-once');
  await page.keyboard.press('Escape');
  await once.waitFor({ state: 'detached' });
  // Focus goes back to the row's button (named by the page: the key dialog was opened by the
  // confirmation, not by that button).
  await until("focus back on the row's button", () =>
    opener.evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement),
  );
  await keyGone(page, key);
  assert.is((await me(ctx, ctx.other.apiKey)).status, 401);
  const fresh = await me(ctx, key);
  assert.equal([fresh.status, fresh.body.id], [200, ctx.other.id]);
  ctx.other.apiKey = key;
  await close();
});

test('a readonly account: no Administration in the navigation, the "needs admin" page at /admin; its own account page works', async (ctx) => {
  const { page, close } = await signedInOn(ctx, ctx.reader, '/');
  await page.getByRole('heading', { level: 1, name: 'Cockpit' }).waitFor();
  assert.is(
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).count(),
    0,
  );
  await page.goto('/admin');
  await page.getByRole('heading', { level: 1, name: 'Needs admin' }).waitFor();
  assert.ok((await page.getByRole('alert').textContent())?.includes('admin role required'));
  assert.is(await page.getByRole('button', { name: 'New account' }).count(), 0);
  await axeClean(page, 'needs admin');
  await page.goto('/account');
  await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
  assert.ok((await page.locator('dl').textContent())?.includes('readonly: reads only'));
  await close();
});

test("the request recorder: only allowed paths (never /api/v1/, never GET /api/me); every write carries the session's CSRF token", async (ctx) => {
  for (const settle of ctx.settled) await settle();
  const paths = ctx.recorded.map((r) => `${r.method} ${r.path.split('?')[0]}`);
  for (const want of [
    'POST /api/me/api-key/rotate',
    `POST /api/admin/users/${ctx.other.id}/api-key/rotate`,
    'POST /api/admin/users',
    'GET /api/admin/users',
  ]) {
    assert.ok(paths.includes(want), `${want} was made`);
  }
  assert.ok(paths.some((p) => p.startsWith('PATCH /api/admin/users/')));
  assert.not.ok(paths.includes('GET /api/me'), 'the console never fetches the current key');
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test.run();
