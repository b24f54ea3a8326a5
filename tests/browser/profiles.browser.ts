// The Profiles, Bot knowledge and Templates pages in a real browser against the real
// orchestration service, each journey checked through the API afterwards: create a profile (a
// refused slug lands on its field), edit it (only the changed fields are sent), disable it, read
// its history and the diff of two revisions, try it on the private chat; add, filter, edit,
// search and delete knowledge; instantiate a template with overrides and land on the new
// profile; a readonly account sees no write controls; a keyboard-only profile creation (no
// pointer event); dialogs that trap and return focus; axe on every page and open dialog;
// screenshots; the request recorder (only /auth/* and /api/* mirrors, CSRF on every write).

import type { Browser, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAccount, type Account } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import {
  axeClean,
  closeSuite,
  countPointerEvents,
  disallowed,
  focusOn,
  h1,
  launchBrowser,
  nav,
  screenshots,
  signedIn,
  tabTo,
  writesWithoutCsrf,
  type Recorded,
} from './support.ts';

const ADMIN_KEY = 'orch_browser-profiles-admin-key-00000000';
const admin = { 'X-API-Key': ADMIN_KEY };

interface Ctx {
  s: TestServices;
  browser: Browser;
  admin: Account;
  reader: Account;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
}
const test = suite<Ctx>('console: profiles, knowledge and templates');

test.before(async (ctx) => {
  ctx.s = await startTestServices('browser_profiles', { ADMIN_API_KEY: ADMIN_KEY });
  [ctx.admin, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'admin'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
});
test.after(closeSuite);

const api = (ctx: Ctx, path: string) => http(`${ctx.s.orch}${path}`, { headers: admin });
const toastSays = (page: Page, text: string | RegExp) => page.locator('.toasts').getByText(text).waitFor();

/** The JSON bodies of the page's writes to `path` (method and body), from now on. */
function writesTo(page: Page, method: string, path: RegExp): unknown[] {
  const bodies: unknown[] = [];
  page.on('request', (request) => {
    if (request.method() === method && path.test(new URL(request.url()).pathname)) bodies.push(request.postDataJSON());
  });
  return bodies;
}

test('profiles: create in a dialog (a taken slug lands on its field), edit only what changed, disable, history and a diff, try it', async (ctx) => {
  await http(`${ctx.s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'taken-bot', name: 'Taken' },
  });
  const { context, page } = await signedIn(ctx, ctx.admin);
  await nav(page).getByRole('link', { name: 'Profiles' }).click();
  await h1(page, 'Profiles');
  await page.getByRole('table').getByRole('link', { name: 'Taken', exact: true }).waitFor();
  await axeClean(page, 'profiles');
  await screenshots(page, 'profiles');

  // The dialog: focus moves in, Tab cycles inside it, Escape closes it and focus returns.
  const opener = page.getByRole('button', { name: 'New profile' });
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'New profile' });
  await dialog.waitFor();
  assert.is(await focusOn(page, 'new-slug'), 'new-slug');
  await dialog.getByRole('button', { name: 'Close' }).focus();
  await page.keyboard.press('Shift+Tab');
  assert.is(await focusOn(page, 'Cancel', 'text'), 'Cancel', 'Shift+Tab from the first control wraps to the last');
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'Close', 'label'), 'Close', 'Tab from the last control wraps to the first');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.is(await focusOn(page, 'New profile', 'text'), 'New profile', 'focus returns to the opener');

  await opener.click();
  await dialog.waitFor();
  // A client check: named on its field, tied with aria-describedby, and focused.
  await dialog.getByLabel('Slug').fill('Not A Slug');
  await dialog.getByLabel('Name').fill('Browser bot');
  await dialog.getByRole('button', { name: 'Create profile' }).click();
  const slugInput = dialog.getByLabel('Slug');
  await page.locator('#new-slug-error').waitFor();
  assert.is(await slugInput.getAttribute('aria-invalid'), 'true');
  assert.match((await slugInput.getAttribute('aria-describedby'))!, /new-slug-error/);
  assert.is(await focusOn(page, 'new-slug'), 'new-slug');
  await axeClean(page, 'new profile dialog with an error');
  await screenshots(page, 'profile-create-dialog');
  // A server 400 lands on the field it names. The client checks the server's rules, so no form
  // input reaches this 400; the server's answer is stood in for once, in its own words.
  await page.route(
    '**/api/agent-chat/profiles',
    (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 400,
            json: { error: 'validation_failed', message: 'max_tokens: Too big: expected number to be <=200000' },
          })
        : route.continue(),
    { times: 1 },
  );
  await slugInput.fill('server-says-no');
  await dialog.getByRole('button', { name: 'Create profile' }).click();
  await page.locator('#new-max_tokens-error').getByText('Too big: expected number to be <=200000').waitFor();
  assert.is(await focusOn(page, 'new-max_tokens'), 'new-max_tokens');
  assert.is(await page.locator('#new-slug-error').count(), 0);
  // The server's refusal (409 slug_taken) lands on the slug too.
  await slugInput.fill('taken-bot');
  await dialog.getByRole('button', { name: 'Create profile' }).click();
  await page
    .locator('#new-slug-error')
    .getByText(/taken|exists/i)
    .waitFor();
  assert.is(await focusOn(page, 'new-slug'), 'new-slug');

  await slugInput.fill('browser-bot');
  await dialog.getByLabel('Security tier').selectOption('2');
  await dialog.getByLabel('Daily cost cap (cents)').fill('250');
  await dialog.getByRole('button', { name: 'Create profile' }).click();
  await h1(page, 'Profile Browser bot');
  await toastSays(page, 'Profile Browser bot created.');
  const made = await api(ctx, '/api/v1/agent-chat/profiles/browser-bot');
  assert.equal(
    [made.status, made.body.name, made.body.security_tier, made.body.cost_cap_daily_cents],
    [200, 'Browser bot', 2, 250],
  );

  // Edit: only the changed fields are sent.
  const puts = writesTo(page, 'PUT', /^\/api\/agent-chat\/profiles\/browser-bot$/);
  await page.locator('#edit-name').fill('Browser bot two');
  await page.getByLabel('Max tokens').fill('2048');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await toastSays(page, /Saved: name, max_tokens/);
  assert.equal(puts, [{ name: 'Browser bot two', max_tokens: 2048 }]);
  // A value the client refuses is not sent at all.
  await page.getByLabel('Temperature').fill('3');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.locator('#edit-temperature-error').waitFor();
  assert.is(puts.length, 1);
  await page.getByRole('button', { name: 'Undo edits' }).click();
  // Disable.
  await page.getByRole('button', { name: 'Disable' }).click();
  await page.getByRole('button', { name: 'Enable' }).waitFor();
  const changed = await api(ctx, '/api/v1/agent-chat/profiles/browser-bot');
  assert.equal([changed.body.name, changed.body.max_tokens, changed.body.enabled], ['Browser bot two', 2048, false]);
  await page.getByRole('button', { name: 'Enable' }).click();
  await page.getByRole('button', { name: 'Disable' }).waitFor();

  // History: four revisions, by this account; the diff of the first and the second.
  const history = page
    .getByRole('table')
    .filter({ has: page.getByRole('columnheader', { name: 'Revision', exact: true }) });
  await history.getByRole('row').nth(4).waitFor();
  assert.is(await history.getByRole('row').count(), 5);
  assert.ok((await history.getByRole('row').nth(2).textContent())!.includes(ctx.admin.username), 'the actor is named');
  const fromApi = await api(ctx, '/api/v1/agent-chat/profiles/browser-bot/history');
  assert.equal(fromApi.body.map((e: { changed_fields: string[] }) => e.changed_fields.join(',')).slice(1), [
    'name,max_tokens',
    'enabled',
    'enabled',
  ]);
  await page.getByLabel('From', { exact: true }).selectOption('0');
  await page.getByLabel('To', { exact: true }).selectOption('1');
  await page.getByRole('button', { name: 'Show differences' }).click();
  const diff = page.getByRole('table', { name: 'Differences from revision 0 to revision 1' });
  await diff.waitFor();
  assert.equal(await diff.locator('tbody th').allTextContents(), ['name', 'max_tokens']);
  assert.equal(
    await diff
      .getByRole('row', { name: /max_tokens/ })
      .locator('td')
      .allTextContents(),
    ['1024', '2048'],
  );
  // as_of (to the second, in local time): before the profile existed, then after its last change.
  const localSecond = (at: Date) => new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
  const first = new Date(fromApi.body[0].at);
  await page.getByLabel('As of (your local time)').fill(localSecond(new Date(first.getTime() - 60_000)));
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator('#as-of-error').getByText('The profile did not exist yet.').waitFor();
  const last = new Date(fromApi.body.at(-1).at);
  await page.getByLabel('As of (your local time)').fill(localSecond(new Date(last.getTime() + 1000)));
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  await page.locator('dl.as-of').getByText('Browser bot two', { exact: true }).waitFor();

  // Try it: a turn on the private chat, answered by the server's model.
  await page.getByLabel('Message', { exact: true }).fill('Hello there');
  await page.getByRole('button', { name: 'Send' }).click();
  await page
    .getByRole('list', { name: 'Conversation' })
    .getByText(/tokens in/)
    .waitFor();
  const conversations = await api(ctx, '/api/v1/agent-chat/conversations');
  assert.ok(
    conversations.body.some(
      (c: { profile_slug: string; message_count: number }) => c.profile_slug === 'browser-bot' && c.message_count === 2,
    ),
  );
  await axeClean(page, 'profile');
  await screenshots(page, 'profile');
  await context.close();
});

test('knowledge: add (counters count code points), filter, edit, ranked search, delete; checked through the API', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  const profile = (await api(ctx, '/api/v1/agent-chat/profiles/browser-bot')).body;
  await page.goto('/profiles/browser-bot');
  await page.getByRole('link', { name: 'Knowledge', exact: true }).click();
  await h1(page, 'Knowledge of Browser bot two');
  await page.getByText('0 snippets.').waitFor();

  await page.getByRole('button', { name: 'Add snippet' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a snippet' });
  await dialog.waitFor();
  assert.is(await focusOn(page, 'snippet-title'), 'snippet-title');
  await dialog.getByLabel('Title').fill('Refunds ☕ 😀');
  // 11 code points (the emoji is two UTF-16 units, counted once).
  await dialog.getByText('11 of 200 characters.').waitFor();
  await dialog.getByLabel('Content').fill('Refunds are paid within 30 days of a return.');
  await dialog.getByLabel('Metadata (JSON object)').fill('[1, 2]');
  await dialog.getByRole('button', { name: 'Add snippet' }).click();
  await page.locator('#snippet-metadata-error').waitFor();
  await axeClean(page, 'add snippet dialog with an error');
  await screenshots(page, 'knowledge-add-dialog');
  await dialog.getByLabel('Metadata (JSON object)').fill('{"lang": "en"}');
  await dialog.getByRole('button', { name: 'Add snippet' }).click();
  await dialog.waitFor({ state: 'detached' });
  await toastSays(page, 'Snippet “Refunds ☕ 😀” added.');
  await page.getByRole('button', { name: 'Add snippet' }).click();
  await dialog.getByLabel('Title').fill('Opening hours');
  await dialog.getByLabel('Content').fill('The shop opens at nine and closes at five.');
  await dialog.getByRole('button', { name: 'Add snippet' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByText('2 snippets.').waitFor();

  const stored = (await api(ctx, `/api/v1/bots/${profile.id}/knowledge`)).body;
  assert.equal(
    stored.map((k: { title: string }) => k.title),
    ['Opening hours', 'Refunds ☕ 😀'],
  );
  assert.equal(stored[1].metadata, { lang: 'en' });
  assert.is((await api(ctx, '/api/v1/agent-chat/profiles/browser-bot')).body.knowledge_search_enabled, true);

  await page.getByLabel('Title contains').fill('REFUND');
  await page.getByText('1 snippet with “REFUND” in the title.').waitFor();
  // Edit sends only the changed field.
  const patches = writesTo(page, 'PATCH', /\/api\/bots\/.+\/knowledge\/.+/);
  await page.getByRole('button', { name: 'Edit Refunds ☕ 😀' }).click();
  const edit = page.getByRole('dialog', { name: /Edit/ });
  await edit.getByLabel('Content').fill('Refunds are paid within 14 days of a return.');
  await edit.getByRole('button', { name: 'Save snippet' }).click();
  await edit.waitFor({ state: 'detached' });
  assert.equal(patches, [{ content: 'Refunds are paid within 14 days of a return.' }]);
  assert.is(
    (await api(ctx, `/api/v1/bots/${profile.id}/knowledge/${stored[1].id}`)).body.content,
    'Refunds are paid within 14 days of a return.',
  );
  await page.getByLabel('Title contains').fill('');
  await page.getByText('2 snippets.').waitFor();

  // Ranked search with scores, as the API ranks.
  await page.getByLabel('Search for').fill('refunds');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const hits = page.getByRole('list', { name: 'Search results, most relevant first' });
  await hits.waitFor();
  const ranked = (await api(ctx, `/api/v1/bots/${profile.id}/knowledge/search?q=refunds`)).body;
  assert.is(await hits.getByRole('listitem').count(), ranked.length);
  assert.ok((await hits.getByRole('listitem').first().textContent())!.includes(`score ${ranked[0].score.toFixed(3)}`));
  await axeClean(page, 'knowledge');
  await screenshots(page, 'knowledge');

  // Delete, confirmed in a dialog whose safe choice has focus.
  await page.getByRole('button', { name: 'Delete Opening hours' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete this snippet?' });
  await confirm.waitFor();
  assert.is(await focusOn(page, 'Keep it', 'text'), 'Keep it');
  await axeClean(page, 'delete snippet dialog');
  await confirm.getByRole('button', { name: 'Delete' }).click();
  await page.getByText('1 snippet.').waitFor();
  assert.is((await api(ctx, `/api/v1/bots/${profile.id}/knowledge/${stored[0].id}`)).status, 404);
  await context.close();
});

test('templates: the list, a template with its starter memories, instantiate with overrides, land on the new profile', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await nav(page).getByRole('link', { name: 'Templates' }).click();
  await h1(page, 'Bot templates');
  await page.locator('.template-list li').first().waitFor();
  assert.is(await page.locator('.template-list li').count(), 5);
  await axeClean(page, 'templates');
  await screenshots(page, 'templates');
  await page.getByRole('link', { name: 'Customer support' }).click();
  await h1(page, 'Template: Customer support');
  const template = (await api(ctx, '/api/v1/templates/customer-support')).body;
  assert.is(await page.locator('.memories li').count(), template.starter_memories.length);
  await axeClean(page, 'template');
  await screenshots(page, 'template');

  const posts = writesTo(page, 'POST', /^\/api\/templates\/customer-support\/instantiate$/);
  await page.getByLabel('Profile slug').fill('from-template');
  await page.getByLabel('Profile name').fill('From the template');
  await page.getByLabel('Security tier').selectOption('2');
  await page.getByLabel('Daily cost cap (cents)').fill('123');
  await page.getByRole('button', { name: 'Create profile' }).click();
  await h1(page, 'Profile From the template');
  assert.match(page.url(), /\/profiles\/from-template$/);
  await toastSays(page, /with \d+ starter memories/);
  assert.equal(posts, [
    {
      slug: 'from-template',
      name: 'From the template',
      seed_memories: true,
      security_tier: 2,
      cost_cap_daily_cents: 123,
    },
  ]);
  const made = (await api(ctx, '/api/v1/agent-chat/profiles/from-template')).body;
  assert.equal(
    [made.security_tier, made.cost_cap_daily_cents, made.rate_limit_rpm, made.system_prompt],
    [2, 123, template.default_security.rate_limit_rpm, template.default_system_prompt],
  );
  const knowledge = (await api(ctx, `/api/v1/bots/${made.id}/knowledge`)).body;
  assert.is(knowledge.length, template.starter_memories.length);
  await context.close();
});

test('a readonly account: no Profiles or Templates in the navigation, "needs admin" by URL, knowledge without write controls', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.reader);
  assert.is(await nav(page).getByRole('link', { name: 'Profiles' }).count(), 0);
  assert.is(await nav(page).getByRole('link', { name: 'Templates' }).count(), 0);
  for (const path of ['/profiles', '/profiles/browser-bot', '/templates', '/templates/hr-faq']) {
    await page.goto(path);
    await h1(page, 'Needs admin');
    assert.is(
      await page.getByRole('button').filter({ hasNotText: 'Sign out' }).count(),
      0,
      `no write control on ${path}`,
    );
  }
  const profile = (await api(ctx, '/api/v1/agent-chat/profiles/browser-bot')).body;
  await page.goto(`/bots/${profile.id}/knowledge`);
  await h1(page, 'Bot knowledge');
  await page.getByText('1 snippet.').waitFor();
  assert.is(await page.getByRole('button', { name: /Add snippet|Edit|Delete/ }).count(), 0);
  // Reading and searching stay open to every account.
  await page.getByLabel('Search for').fill('refunds');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByRole('list', { name: 'Search results, most relevant first' }).waitFor();
  await axeClean(page, 'knowledge (readonly)');
  await screenshots(page, 'knowledge-readonly');
  await context.close();
});

test('keyboard only: create a profile by Tab, typing and Enter, no pointer event', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.goto('/profiles');
  await h1(page, 'Profiles');
  await page.getByRole('table').waitFor();
  await countPointerEvents(page);
  await tabTo(page, '.page-head button');
  await page.keyboard.press('Enter');
  await page.getByRole('dialog', { name: 'New profile' }).waitFor();
  assert.is(await focusOn(page, 'new-slug'), 'new-slug');
  await page.keyboard.type('keyboard-bot');
  await page.keyboard.press('Tab');
  assert.is(await focusOn(page, 'new-name'), 'new-name');
  await page.keyboard.type('Keyboard bot');
  await tabTo(page, '#new-rate_limit_rpm');
  await page.keyboard.type('7');
  await tabTo(page, 'dialog button[type="submit"]');
  await page.keyboard.press('Enter');
  await h1(page, 'Profile Keyboard bot');
  assert.is(await page.evaluate('window.pointerEvents'), 0);
  const made = await api(ctx, '/api/v1/agent-chat/profiles/keyboard-bot');
  assert.equal([made.status, made.body.name, made.body.rate_limit_rpm], [200, 'Keyboard bot', 7]);
  await context.close();
});

test("the request recorder: only /auth/* and /api/* mirrors (never /api/v1/); every write carries the session's CSRF token", async (ctx) => {
  for (const settle of ctx.settled) await settle();
  for (const path of [
    '/api/agent-chat/profiles',
    '/api/agent-chat/profiles/browser-bot/history',
    '/api/templates/customer-support/instantiate',
    '/api/agent-chat/chat/browser-bot',
  ]) {
    assert.ok(
      ctx.recorded.some((r) => r.path === path),
      `${path} was called`,
    );
  }
  assert.ok(ctx.recorded.some((r) => r.method === 'PATCH' && r.path.startsWith('/api/bots/')));
  assert.ok(ctx.recorded.some((r) => r.method === 'DELETE' && r.path.startsWith('/api/bots/')));
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test.run();
