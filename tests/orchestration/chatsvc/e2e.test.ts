// End to end against the real chat service (started here, with its bootstrap route): connect
// with a bot:provision token; a human on the e2ee library sends an encrypted DM and an encrypted
// @-mention in a channel; the bot answers both, encrypted and grounded in a snippet; the human
// decrypts them; the chat service's tables and log hold neither text in plaintext. Then status,
// test, revocation (test and tool 409, inbound silent), a fresh connect, delete.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setReplyMode } from '../../../api/orchestration/profiles/commands.ts';
import { orchDeps } from '../../../main/apps.ts';
import { startAgentApps } from '../../support/agents.ts';
import { registerChat, uniqueName, type ChatAccount } from '../../support/chat.ts';
import { BOOTSTRAP_SECRET, Human, INTEGRATION_KEY, provisionToken, uniqueBotName } from '../../support/chatsvc.ts';
import { http, loggedEvents, logText, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';
import { until } from '../../support/until.ts';
import { addSnippet, makeProfile } from '../agent-chat/helpers.ts';

interface Ctx {
  s: TestServices;
  admin: Record<string, string>;
  adminKey: string;
  spaces: Spaces;
  owner: ChatAccount;
  human: Human;
  community: string;
  channel: string;
  profile: { id: string; slug: string };
  bot: { id: string; username: string };
  dm: string;
}
const test = suite<Ctx>('chatsvc: end to end');
const SNIPPET = 'The Lisbon office opens at half past eight and closes at six.';
const DM_TEXT = 'When does the Lisbon office open?';
const CHANNEL_TEXT = 'Lisbon office hours please';

test.before(async (ctx) => {
  const { s, keys } = await startAgentApps(
    'chatsvc_e2e',
    { ORCH_INTEGRATION_ENCRYPTION_KEY: INTEGRATION_KEY, CHATSVC_BOOTSTRAP_SECRET: BOOTSTRAP_SECRET },
    { sockets: true },
  );
  ctx.s = s;
  ctx.adminKey = keys.adminKey;
  ctx.admin = { 'X-API-Key': keys.adminKey };
  ctx.spaces = new Spaces(s);
  ctx.owner = await registerChat(s.chat, uniqueName('owner'));
  ctx.community = await ctx.spaces.community(ctx.owner, 'Office');
  const group = await ctx.spaces.group(ctx.owner, ctx.community);
  ctx.channel = await ctx.spaces.channel(ctx.owner, group, [], 'general');
  const humanAccount = await registerChat(s.chat, uniqueName('human'));
  await ctx.spaces.join(ctx.community, ctx.owner, [humanAccount]);
  await ctx.spaces.ok(humanAccount, 'POST', `/api/channels/${ctx.channel}/join`);
  ctx.human = new Human(ctx.spaces, humanAccount);
  await ctx.human.connect();
  await ctx.human.subscribe(ctx.channel);
  ctx.profile = await makeProfile(s, keys.adminKey, { slug: 'office-bot', model: 'local' });
  await addSnippet(s, keys.adminKey, ctx.profile.id, 'Lisbon office hours', SNIPPET);
  await setReplyMode(orchDeps(s.platform), 'office-bot', 'both', {
    actor: { kind: 'system', id: 'test' },
    correlationId: null,
  });
});
test.after(async ({ s, human }) => {
  human?.ws.close();
  await s?.close();
});

const base = (ctx: Ctx) => `${ctx.s.orch}/api/v1/agents/${ctx.profile.id}/chatsvc`;

test('connect with a bootstrap-minted bot:provision token: 201 IntegrationStatus; the token is stored sealed only', async (ctx) => {
  const token = await provisionToken(ctx.s);
  const username = uniqueBotName();
  const r = await http(`${base(ctx)}/connect`, {
    headers: ctx.admin,
    json: {
      instance_url: ctx.s.chat,
      provision_token: token,
      bot_username: username,
      display_name: 'Office Bot',
      default_community_id: ctx.community,
    },
  });
  assert.is(r.status, 201, r.text);
  assert.is(r.body.status, 'active');
  assert.is(r.body.bot_username, username);
  assert.match(r.body.token_prefix, /^cb_[0-9a-f]{8}$/);
  assert.match(r.body.identity_fingerprint, /^[0-9a-f]{64}$/);
  ctx.bot = { id: r.body.bot_user_id, username };
  const log = await logText(ctx.s);
  assert.not.ok(log.includes(token), 'the provision token is nowhere in the log');
  assert.not.ok(ctx.s.logLines.join('\n').includes(token), 'nor in the log lines');
  const profile = await http(`${ctx.s.orch}/api/v1/agent-chat/profiles/${ctx.profile.slug}`, { headers: ctx.admin });
  assert.is(profile.body.integrations.chatsvc.status, 'active');
  assert.is(profile.body.integrations.chatsvc.bot_username, username);
  await until(
    'the socket',
    async () => (await http(base(ctx), { headers: ctx.admin })).body.socket.state === 'connected',
    15_000,
    100,
  );
  assert.is((await http(`${ctx.s.orch}/api/v1/health`)).body.integrations.chatsvc_bot_ws.status, 'connected');
});

test('an encrypted DM gets an encrypted, grounded answer the human decrypts', async (ctx) => {
  ctx.dm = await ctx.human.openDm(ctx.bot.id);
  await ctx.human.subscribe(ctx.dm);
  await ctx.human.sendDm(ctx.dm, ctx.bot.id, DM_TEXT);
  const reply = await ctx.human.botMessage(ctx.dm, ctx.bot.id);
  const text = ctx.human.decryptDm(reply.ciphertext);
  assert.match(text, /half past eight/);
  // A second DM continues the ratchet.
  await ctx.human.sendDm(ctx.dm, ctx.bot.id, 'And when does it close?');
  assert.match(ctx.human.decryptDm((await ctx.human.botMessage(ctx.dm, ctx.bot.id)).ciphertext), /Lisbon/);
});

test('an encrypted @-mention in a channel gets an encrypted answer in its thread, mentioning the sender', async (ctx) => {
  const id = await ctx.human.sendChannel(ctx.channel, `@${ctx.bot.username} ${CHANNEL_TEXT}`, [ctx.bot.id]);
  const reply = await ctx.human.botMessage(ctx.channel, ctx.bot.id);
  assert.is(reply.thread_root_id, id);
  const text = await ctx.human.decryptChannel(ctx.channel, ctx.bot.id, reply.ciphertext);
  assert.ok(text.startsWith(`@${ctx.human.account.username} `), text);
  assert.match(text, /half past eight/);
});

test("no plaintext of either side in the chat service's tables or log", async (ctx) => {
  // The chat service's part of the log: every stream it writes is chat.*.
  const chatLog = (await logText(ctx.s))
    .split('\n')
    .filter((line) => line.startsWith('chat.'))
    .join('\n');
  assert.ok(chatLog.includes('MessagePosted'));
  for (const secret of [DM_TEXT, CHANNEL_TEXT, 'half past eight']) {
    assert.not.ok(chatLog.includes(secret), `the chat log holds "${secret}"`);
    assert.not.ok(ctx.s.logLines.join('\n').includes(secret), `a log line holds "${secret}"`);
    const rows = await ctx.s.db.pool.query(
      `SELECT count(*) AS n FROM chat_messages WHERE ciphertext LIKE '%' || $1 || '%'`,
      [secret],
    );
    assert.is(Number(rows.rows[0].n), 0, secret);
  }
  // What users told the bot is kept in the orchestration conversation (personal fields).
  const kept = await ctx.s.db.pool.query(`SELECT count(*) AS n FROM agent_chat_messages WHERE content = $1`, [DM_TEXT]);
  assert.is(Number(kept.rows[0].n), 1);
});

test('test probes the token; tools answer; a token revoked on the chat side: test and tools 409, inbound silent', async (ctx) => {
  const probe = await http(`${base(ctx)}/test`, { method: 'POST', headers: ctx.admin });
  assert.is(probe.status, 200, probe.text);
  assert.equal(
    { ok: probe.body.ok, chatsvc_status: probe.body.chatsvc_status, status: probe.body.status },
    { ok: true, chatsvc_status: 200, status: 'active' },
  );
  // Revoke the bot's default token as the chat's admin.
  const botView = await ctx.spaces.ok(ctx.owner, 'GET', `/api/admin/bots/${ctx.bot.id}`);
  const tokenId = botView.tokens.find((t: any) => t.scope === 'default' && t.status === 'active').id;
  await ctx.spaces.ok(ctx.owner, 'POST', `/api/admin/bots/${ctx.bot.id}/tokens/${tokenId}/revoke`);
  const refused = await http(`${base(ctx)}/test`, { method: 'POST', headers: ctx.admin });
  assert.is(refused.status, 409, refused.text);
  assert.is(refused.body.error, 'integration_disabled');
  assert.is(refused.body.chatsvc_status, 401);
  assert.is((await http(base(ctx), { headers: ctx.admin })).body.status, 'revoked_externally');
  const tool = await http(`${base(ctx)}/tools/create_channel`, {
    headers: ctx.admin,
    json: { tool: 'create_channel', group_id: ctx.community, name: 'x' },
  });
  assert.is(tool.status, 409, tool.text);
  assert.is(tool.body.error, 'integration_disabled');
  assert.is((await loggedEvents(ctx.s, { eventTypes: ['IntegrationRevokedExternally'] })).length, 1, 'appended once');
});

test('a fresh connect brings it back to active; delete then 404', async (ctx) => {
  const token = await provisionToken(ctx.s);
  const again = await http(`${base(ctx)}/connect`, {
    headers: ctx.admin,
    json: {
      instance_url: ctx.s.chat,
      provision_token: token,
      bot_username: uniqueBotName(),
      display_name: 'Office Bot 2',
      default_community_id: ctx.community,
    },
  });
  assert.is(again.status, 201, again.text);
  assert.is(again.body.status, 'active');
  const twice = await http(`${base(ctx)}/connect`, {
    headers: ctx.admin,
    json: { instance_url: ctx.s.chat, provision_token: token, bot_username: uniqueBotName(), display_name: 'x' },
  });
  assert.is(twice.status, 409);
  assert.is(twice.body.error, 'already_connected');
  const gone = await http(base(ctx), { method: 'DELETE', headers: ctx.admin });
  assert.is(gone.status, 204, gone.text);
  assert.is((await http(base(ctx), { headers: ctx.admin })).body.error, 'not_configured');
  // Private keys, ratchet sessions and sender-key states are destroyed (both integrations': the first went at the reconnect).
  for (const table of [
    'chatsvc_devices',
    'chatsvc_prekeys',
    'chatsvc_sessions',
    'chatsvc_sender_keys',
    'chatsvc_handled',
    'chatsvc_cursors',
  ]) {
    assert.is(Number((await ctx.s.db.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n), 0, table);
  }
});

test('a half-done connect is retried: the bot made before the failing step is reused; one that registered keys is refused', async (ctx) => {
  const token = await provisionToken(ctx.s);
  const body = {
    instance_url: ctx.s.chat,
    provision_token: token,
    bot_username: uniqueBotName(),
    display_name: 'Office Bot 3',
  };
  const botsNamed = async () =>
    (
      (await http(`${ctx.s.chat}/api/admin/bots?limit=200`, { headers: { 'X-Bot-Token': token } })).body?.bots ?? []
    ).filter((b: { username: string }) => b.username === body.bot_username);
  // A community that does not exist: the bot and its token are made on the chat, then the join fails.
  const failed = await http(`${base(ctx)}/connect`, {
    headers: ctx.admin,
    json: { ...body, default_community_id: randomUUID() },
  });
  assert.is(failed.status, 502, failed.text);
  assert.is(failed.body.error, 'chatsvc_mint_bot_failed');
  assert.match(failed.body.detail, /join community/);
  assert.is((await http(base(ctx), { headers: ctx.admin })).body.error, 'not_configured', 'nothing stored here');
  const [made] = await botsNamed();
  assert.ok(made, 'the first try left its bot on the chat service');
  // The same request with a real community: that bot is reused, and the connect completes.
  const retried = await http(`${base(ctx)}/connect`, {
    headers: ctx.admin,
    json: { ...body, default_community_id: ctx.community },
  });
  assert.is(retried.status, 201, retried.text);
  assert.is(retried.body.bot_user_id, made.id);
  assert.is((await botsNamed()).length, 1, 'no second bot of that name');
  // It answers: a DM to the reused bot.
  await until(
    'the socket',
    async () => (await http(base(ctx), { headers: ctx.admin })).body?.socket?.state === 'connected',
    30_000,
    100,
  );
  const dm = await ctx.human.openDm(made.id);
  await ctx.human.subscribe(dm);
  ctx.human.resetDm();
  await ctx.human.sendDm(dm, made.id, DM_TEXT);
  assert.match(ctx.human.decryptDm((await ctx.human.botMessage(dm, made.id)).ciphertext), /half past eight/);
  // Deleted here, the bot stays on the chat with its identity registered: reusing that name is refused.
  assert.is((await http(base(ctx), { method: 'DELETE', headers: ctx.admin })).status, 204);
  const reuse = await http(`${base(ctx)}/connect`, {
    headers: ctx.admin,
    json: { ...body, provision_token: await provisionToken(ctx.s), default_community_id: ctx.community },
  });
  assert.is(reuse.status, 409, reuse.text);
  assert.is(reuse.body.error, 'bot_identity_taken');
  assert.match(reuse.body.message, /already registered its end-to-end keys/);
  assert.is((await http(base(ctx), { headers: ctx.admin })).body.error, 'not_configured');
});

test.run();
