// The chat-service connector page in a real browser against the real orchestration service and
// the real chat service of the same run (both started here, on ephemeral ports, with the chat's
// bootstrap route for provision tokens), each journey checked through the API afterwards: an
// admin opens a profile, goes to its chat service, sees "Not connected"; a refused provision token
// lands on its field and the field is empty after the submit; certificate checks off warn; the
// community picker fills from POST .../communities; connect; the status shows connected; test
// succeeds; a human's encrypted DM to the bot is answered (the local model, grounded in a
// snippet); the token revoked on the chat side, a test flips the integration to
// revoked_externally and the page offers a reconnect, which connects a new bot with certificate
// checks off (shown as a warning); disconnect after a confirmation; live, an API connect and a
// revocation heard by the bot's socket shown by the open page; a server without the
// integration key shows integration_key_missing naming the setting and no form; a readonly
// account gets "needs admin"; axe on every state and the open dialog; screenshots; the request
// recorder (only /auth/* and /api/* mirrors, CSRF on every write).

import type { Browser, BrowserContext, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setReplyMode } from '../../api/orchestration/profiles/commands.ts';
import { orchDeps } from '../../main/apps.ts';
import { registerChat, uniqueName, type ChatAccount } from '../support/chat.ts';
import { BOOTSTRAP_SECRET, Human, INTEGRATION_KEY, provisionToken, uniqueBotName } from '../support/chatsvc.ts';
import { browser as browserHeaders, createAccount, login, type Account } from '../support/principals.ts';
import { http, logText, startTestServices, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';
import {
  axeClean,
  closeSuite,
  disallowed,
  focusOn,
  h1,
  launchBrowser,
  screenshots,
  setUp,
  signedIn,
  writesWithoutCsrf,
  type Recorded,
} from './support.ts';
import { integrationStream } from '../../domain/orchestration/streams.ts';

const ADMIN_KEY = 'orch_browser-connector-admin-key-0000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const SNIPPET = 'The Lisbon office opens at half past eight and closes at six.';
const UNKNOWN_TOKEN = `cb_${'0'.repeat(64)}`;

interface Ctx {
  s: TestServices;
  browser: Browser;
  admin: Account;
  reader: Account;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
  spaces: Spaces;
  owner: ChatAccount;
  human: Human;
  community: string;
  profile: { id: string; slug: string };
  bot: { id: string; username: string };
  tokens: string[];
}
const test = suite<Ctx>('console: chat-service connector');

test.before(setUp(seed));

async function seed(ctx: Ctx): Promise<void> {
  ctx.s = await startTestServices('browser_connector', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_INTEGRATION_ENCRYPTION_KEY: INTEGRATION_KEY,
    CHATSVC_BOOTSTRAP_SECRET: BOOTSTRAP_SECRET,
    // The human posts and fetches bundles in bursts: the chat's per-user API limit is not under test here.
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  [ctx.admin, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'admin'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
  // The chat side: its first account (an instance admin) owns a community with a channel; a human joins.
  ctx.spaces = new Spaces(ctx.s);
  ctx.owner = await registerChat(ctx.s.chat, uniqueName('owner'));
  ctx.community = await ctx.spaces.community(ctx.owner, 'Office');
  const group = await ctx.spaces.group(ctx.owner, ctx.community);
  const channel = await ctx.spaces.channel(ctx.owner, group, [], 'general');
  const humanAccount = await registerChat(ctx.s.chat, uniqueName('human'));
  await ctx.spaces.join(ctx.community, ctx.owner, [humanAccount]);
  await ctx.spaces.ok(humanAccount, 'POST', `/api/channels/${channel}/join`);
  ctx.human = new Human(ctx.spaces, humanAccount);
  await ctx.human.connect();
  // The orchestration side: a profile on the local model with a snippet, answering DMs.
  const created = await http(`${ctx.s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'office-bot', name: 'Office Bot', model: 'local' },
  });
  assert.is(created.status, 201, created.text);
  ctx.profile = { id: created.body.id, slug: 'office-bot' };
  const snippet = await http(`${ctx.s.orch}/api/v1/bots/${ctx.profile.id}/knowledge`, {
    headers: admin,
    json: { title: 'Lisbon office hours', content: SNIPPET },
  });
  assert.is(snippet.status, 201, snippet.text);
  await setReplyMode(orchDeps(ctx.s.platform), 'office-bot', 'both', {
    actor: { kind: 'system', id: 'test' },
    correlationId: null,
  });
  ctx.tokens = [];
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
}
test.after(async (ctx) => {
  ctx.human?.ws.close();
  await closeSuite(ctx);
});

/** Close a context once the recorder has every request's headers (a closing context drops them). */
async function closed(ctx: Ctx, context: BrowserContext): Promise<void> {
  for (const settle of ctx.settled) await settle();
  await context.close();
}

const statusApi = (ctx: Ctx) => http(`${ctx.s.orch}/api/v1/agents/${ctx.profile.id}/chatsvc`, { headers: admin });
/** Wait until the element `selector` says `text` (its own text, searched or matched). */
const says = (page: Page, selector: string, text: string | RegExp, timeout = 15_000) =>
  page.locator(selector, { hasText: text }).waitFor({ timeout });
const stateLine = (page: Page, text: string | RegExp) => says(page, '#chatsvc-state', text, 30_000);
const tokenField = (page: Page, form: string) => page.locator(`#${form}-provision-token`);
const fresh = async (ctx: Ctx) => {
  const token = await provisionToken(ctx.s);
  ctx.tokens.push(token);
  return token;
};

/** No token the page was given is in its storage. */
async function storageClean(ctx: Ctx, page: Page): Promise<void> {
  const stored = String(
    await page.evaluate('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage } })'),
  );
  for (const token of [...ctx.tokens, UNKNOWN_TOKEN])
    assert.not.ok(stored.includes(token), 'a provision token in web storage');
}

test('a readonly account: "needs admin" at the connector page by URL (the server\'s 403)', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.reader);
  await page.goto(`/profiles/${ctx.profile.slug}/chat-service`);
  await h1(page, 'Needs admin');
  assert.ok((await page.getByRole('alert').textContent())?.includes('admin role required'));
  assert.is(await page.getByLabel('Provision token').count(), 0, 'no form');
  await axeClean(page, 'chat service (needs admin)');
  // Through the API: the reader's session is refused by the mirror too.
  const session = await login(ctx.s, ctx.reader);
  const r = await http(`${ctx.s.orch}/api/admin/agents/${ctx.profile.id}/chatsvc`, {
    headers: browserHeaders(ctx.s, session),
  });
  assert.is(r.status, 403, r.text);
  await closed(ctx, context);
});

test('connect: a refused token lands on its field and is emptied; verify_tls off warns; a community picked; connected', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profiles' }).click();
  await h1(page, 'Profiles');
  await page.getByRole('table').getByRole('link', { name: 'Office Bot', exact: true }).click();
  await h1(page, 'Profile Office Bot');
  await page.getByRole('link', { name: 'Chat service', exact: true }).click();
  await h1(page, 'Chat service of Office Bot');
  await stateLine(page, 'Not connected');
  const form = page.getByRole('form', { name: 'Connect' });
  await form.waitFor();
  assert.is(await tokenField(page, 'connect').getAttribute('type'), 'password');
  await axeClean(page, 'chat service (not connected)');
  await screenshots(page, 'chat-service-not-connected');

  // Client checks first: nothing is sent for a malformed token or a plain-http remote URL.
  await page.getByLabel('Chat service base URL').fill('http://chat.example.org');
  await tokenField(page, 'connect').fill('cb_short');
  await form.getByRole('button', { name: 'Connect' }).click();
  assert.is(await focusOn(page, 'connect-instance-url'), 'connect-instance-url', 'focus on the first field in error');
  assert.match((await page.locator('#connect-instance-url-error').textContent()) ?? '', /loopback/);
  assert.match((await page.locator('#connect-provision-token-error').textContent()) ?? '', /64 lowercase hex/);
  assert.is(
    await tokenField(page, 'connect').getAttribute('aria-describedby'),
    'connect-provision-token-hint connect-provision-token-error',
  );
  await axeClean(page, 'chat service (client errors)');

  // A token the chat service does not know: listing communities is refused on the token's field;
  // connecting is refused the same way, and the field is empty after the submit.
  await page.getByLabel('Chat service base URL').fill(ctx.s.chat);
  await tokenField(page, 'connect').fill(UNKNOWN_TOKEN);
  await page.getByRole('button', { name: 'Load communities' }).click();
  await says(page, '#connect-provision-token-error', /refused this provision token/);
  assert.is(
    await tokenField(page, 'connect').inputValue(),
    UNKNOWN_TOKEN,
    'listing communities is not the submit: the token stays for it',
  );
  const botName = uniqueBotName();
  await page.getByLabel('Bot username').fill(botName);
  await form.getByRole('button', { name: 'Connect' }).click();
  await says(page, '#connect-provision-token-error', /create bot: the chat service answered 401/);
  assert.is(await tokenField(page, 'connect').inputValue(), '', 'the token is emptied after a refused submit');
  assert.is(await focusOn(page, 'connect-provision-token'), 'connect-provision-token');
  assert.is((await statusApi(ctx)).body.error, 'not_configured', 'nothing stored');

  // Certificate checks off: a warning, tied to the checkbox.
  const verify = page.getByLabel("Check the chat service's TLS certificate");
  assert.ok(await verify.isChecked(), 'on by default');
  await verify.uncheck();
  await says(page, '#connect-tls-warning', /Warning: with certificate checks off/);
  assert.match((await verify.getAttribute('aria-describedby')) ?? '', /connect-verify-tls-hint/);
  await axeClean(page, 'chat service (verify_tls off)');
  await verify.check();
  assert.is(await page.locator('#connect-tls-warning').count(), 0, 'the warning goes with the checks back on');

  // A real provision token: the picker fills from the chat service, the community is picked, connect.
  const token = await fresh(ctx);
  await tokenField(page, 'connect').fill(token);
  await page.getByRole('button', { name: 'Load communities' }).click();
  const picker = page.getByLabel('Community to join');
  await picker.locator(`option[value="${ctx.community}"]`).waitFor({ state: 'attached' });
  assert.match(
    (await picker.locator(`option[value="${ctx.community}"]`).textContent()) ?? '',
    /^Office \(\d+ members\)$/,
  );
  await picker.selectOption(ctx.community);
  await form.getByRole('button', { name: 'Connect' }).click();
  await stateLine(page, /^Connected/);
  assert.is(await page.locator('input[type="password"]').count(), 0, 'the form (and its token) is gone');
  await stateLine(page, /^Connected$/); // the bot's socket is up (the page reads it again)
  assert.is(
    await page
      .locator('#chatsvc-socket')
      .textContent()
      .then((t) => t?.startsWith('connected')),
    true,
  );
  await storageClean(ctx, page);
  await axeClean(page, 'chat service (connected)');
  await screenshots(page, 'chat-service-connected');

  // Through the API: active, this bot, certificate checks on, the bot a member of the community.
  const status = await statusApi(ctx);
  assert.is(status.status, 200, status.text);
  assert.equal(
    {
      status: status.body.status,
      bot: status.body.bot_username,
      verify: status.body.verify_tls,
      socket: status.body.socket.state,
    },
    { status: 'active', bot: botName, verify: true, socket: 'connected' },
  );
  ctx.bot = { id: status.body.bot_user_id, username: botName };
  const memberships = await ctx.spaces.ok(ctx.owner, 'GET', `/api/admin/bots/${ctx.bot.id}/communities`);
  assert.ok(
    memberships.communities.some(
      (c: { community_id: string; role: string }) => c.community_id === ctx.community && c.role === 'member',
    ),
    'joined as member',
  );
  const log = await logText(ctx.s);
  for (const t of [token, UNKNOWN_TOKEN]) assert.not.ok(log.includes(t), 'no provision token in the log');
  await closed(ctx, context);
});

test("test succeeds; a human's encrypted DM to the bot is answered", async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.goto(`/profiles/${ctx.profile.slug}/chat-service`);
  await stateLine(page, /^Connected/);
  await page.getByRole('button', { name: 'Test the connection' }).click();
  await says(page, '#chatsvc-test', /^Test: ok; the chat service answered 200 in \d+ ms; integration active\.$/);
  assert.is((await statusApi(ctx)).body.status, 'active');
  // The bot answers on the chat service: an encrypted DM, decrypted by the human.
  const dm = await ctx.human.openDm(ctx.bot.id);
  await ctx.human.subscribe(dm);
  await ctx.human.sendDm(dm, ctx.bot.id, 'When does the Lisbon office open?');
  assert.match(ctx.human.decryptDm((await ctx.human.botMessage(dm, ctx.bot.id)).ciphertext), /half past eight/);
  await closed(ctx, context);
});

test('revoked on the chat side: the test flips it to revoked_externally; the page offers a reconnect (a new bot, certificate checks off)', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.goto(`/profiles/${ctx.profile.slug}/chat-service`);
  await stateLine(page, /^Connected$/);
  // The bot's socket would hear the revocation first (the chat closes it with 4401): stopped here,
  // the test call is what discovers it. The page shows the socket down while the integration is active.
  await orchDeps(ctx.s.platform).chatsvc.supervisor.stopBot(ctx.profile.id);
  await stateLine(page, "Connected; the bot's socket is disconnected");
  await axeClean(page, 'chat service (socket down)');
  await screenshots(page, 'chat-service-socket-down');
  const botView = await ctx.spaces.ok(ctx.owner, 'GET', `/api/admin/bots/${ctx.bot.id}`);
  const tokenId = botView.tokens.find(
    (t: { scope: string; status: string }) => t.scope === 'default' && t.status === 'active',
  ).id;
  await ctx.spaces.ok(ctx.owner, 'POST', `/api/admin/bots/${ctx.bot.id}/tokens/${tokenId}/revoke`);

  await page.getByRole('button', { name: 'Test the connection' }).click();
  await says(page, '#chatsvc-test', /Test failed \(integration_disabled, chat service status 401\)/);
  await stateLine(page, 'Revoked on the chat service (revoked_externally)');
  const revoked = await statusApi(ctx);
  assert.is(revoked.body.status, 'revoked_externally', 'through the API');
  const found = await ctx.s.db.pool.query(
    `SELECT data->>'discovered_by' AS by FROM events WHERE type = 'IntegrationRevokedExternally' AND stream_id = $1`,
    [integrationStream(ctx.profile.id)],
  );
  assert.equal(
    found.rows.map((r) => r.by),
    ['test'],
    'the test call discovered it',
  );
  const form = page.getByRole('form', { name: 'Reconnect' });
  await form.waitFor();
  assert.is(await page.getByRole('button', { name: 'Test the connection' }).count(), 0, 'no test of a revoked token');
  await axeClean(page, 'chat service (revoked)');
  await screenshots(page, 'chat-service-revoked');

  // The reconnect: the URL kept, a new bot name suggested (the revoked bot keeps its keys there).
  assert.is(await page.locator('#reconnect-instance-url').inputValue(), (await statusApi(ctx)).body.instance_url);
  assert.is(await page.locator('#reconnect-bot-username').inputValue(), `${ctx.bot.username}_2`);
  await page.getByLabel("Check the chat service's TLS certificate").uncheck();
  await page.locator('#reconnect-tls-warning').waitFor();
  const token = await fresh(ctx);
  await tokenField(page, 'reconnect').fill(token);
  await form.getByRole('button', { name: 'Reconnect' }).click();
  await stateLine(page, /^Connected/);
  assert.match((await page.locator('#chatsvc-verify-tls').textContent()) ?? '', /^off: /);
  await storageClean(ctx, page);
  const status = await statusApi(ctx);
  assert.equal(
    { status: status.body.status, bot: status.body.bot_username, verify: status.body.verify_tls },
    { status: 'active', bot: `${ctx.bot.username}_2`, verify: false },
  );
  ctx.bot = { id: status.body.bot_user_id, username: status.body.bot_username };
  await closed(ctx, context);
});

test('disconnect after a confirmation (the safe answer has focus; Escape keeps it); then not connected', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.goto(`/profiles/${ctx.profile.slug}/chat-service`);
  await stateLine(page, /^Connected/);
  const opener = page.getByRole('button', { name: 'Disconnect' });
  await opener.click();
  const dialog = page.getByRole('dialog', { name: 'Disconnect from the chat service' });
  await dialog.waitFor();
  assert.is(await focusOn(page, 'Keep it connected', 'text'), 'Keep it connected');
  await axeClean(page, 'chat service (disconnect dialog)');
  await screenshots(page, 'chat-service-disconnect-dialog');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.is(await focusOn(page, 'Disconnect', 'text'), 'Disconnect', 'focus back on the opener');
  assert.is((await statusApi(ctx)).body.status, 'active', 'still connected');
  await opener.click();
  await dialog.getByRole('button', { name: 'Disconnect' }).click();
  await stateLine(page, 'Not connected');
  await page.getByRole('form', { name: 'Connect' }).waitFor();
  const gone = await statusApi(ctx);
  assert.is(gone.status, 404, gone.text);
  assert.is(gone.body.error, 'not_configured');
  await closed(ctx, context);
});

test("live: connected through the API, then revoked on the chat side with the bot's socket up; the open page follows without a reload", async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.goto(`/profiles/${ctx.profile.slug}/chat-service`);
  await stateLine(page, 'Not connected');
  await page.getByText('Live: up to date').waitFor();
  const username = uniqueBotName();
  const r = await http(`${ctx.s.orch}/api/v1/agents/${ctx.profile.id}/chatsvc/connect`, {
    headers: admin,
    json: {
      instance_url: ctx.s.chat,
      provision_token: await fresh(ctx),
      bot_username: username,
      display_name: 'Office Bot',
    },
  });
  assert.is(r.status, 201, r.text);
  await stateLine(page, /^Connected$/);
  assert.is(await page.locator('dd', { hasText: username }).count(), 1);
  const botView = await ctx.spaces.ok(ctx.owner, 'GET', `/api/admin/bots/${r.body.bot_user_id}`);
  const tokenId = botView.tokens.find(
    (t: { scope: string; status: string }) => t.scope === 'default' && t.status === 'active',
  ).id;
  await ctx.spaces.ok(ctx.owner, 'POST', `/api/admin/bots/${r.body.bot_user_id}/tokens/${tokenId}/revoke`);
  await stateLine(page, 'Revoked on the chat service (revoked_externally)');
  await page.getByRole('form', { name: 'Reconnect' }).waitFor();
  const found = await ctx.s.db.pool.query(
    `SELECT data->>'discovered_by' AS by FROM events WHERE type = 'IntegrationRevokedExternally' AND stream_id = $1 ORDER BY position`,
    [integrationStream(ctx.profile.id)],
  );
  assert.equal(
    found.rows.map((row) => row.by),
    ['test', 'socket'],
    "this time the bot's socket heard it",
  );
  assert.is(
    (await http(`${ctx.s.orch}/api/v1/agents/${ctx.profile.id}/chatsvc`, { method: 'DELETE', headers: admin })).status,
    204,
  );
  await stateLine(page, 'Not connected');
  await closed(ctx, context);
});

test('a server without the integration key: integration_key_missing names the setting, and no form', async (ctx) => {
  ctx.human.ws.close();
  await ctx.s.restart({ ORCH_INTEGRATION_ENCRYPTION_KEY: undefined });
  const r = await statusApi(ctx);
  assert.is(r.status, 503, r.text);
  assert.is(r.body.error, 'integration_key_missing');
  const { context, page } = await signedIn(ctx, ctx.admin);
  await page.goto(`/profiles/${ctx.profile.slug}/chat-service`);
  const panel = page.locator('#chatsvc-key-missing');
  await panel.waitFor();
  const text = (await panel.textContent()) ?? '';
  assert.ok(
    text.includes('ORCH_INTEGRATION_ENCRYPTION_KEY') && text.includes('ORCH_INTEGRATION_ENCRYPTION_KEY_FILE'),
    text,
  );
  assert.ok(text.includes('integration_key_missing'));
  assert.is(await page.getByLabel('Provision token').count(), 0, 'no form');
  assert.is(await page.locator('#chatsvc-state').count(), 0);
  await axeClean(page, 'chat service (key missing)');
  await screenshots(page, 'chat-service-key-missing');
  await closed(ctx, context);
});

test('the pages asked only for /auth/* and the /api/* mirrors, every write with its CSRF token', async (ctx) => {
  for (const settle of ctx.settled) await settle();
  for (const suffix of ['/chatsvc', '/chatsvc/communities', '/chatsvc/connect', '/chatsvc/test']) {
    assert.ok(
      ctx.recorded.some((r) => r.path === `/api/admin/agents/${ctx.profile.id}${suffix}`),
      suffix,
    );
  }
  assert.ok(
    ctx.recorded.some((r) => r.method === 'DELETE' && r.path === `/api/admin/agents/${ctx.profile.id}/chatsvc`),
  );
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test.run();
