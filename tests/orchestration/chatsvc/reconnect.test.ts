// Spec 1, "Chat integration status": from `revoked_externally`, a connect with a fresh provision
// token returns to `active`. The revoked integration still holds the bot's device keys, so the
// same bot comes back with the same identity and a new token, and the human's DM session goes on.
// Once the integration is deleted (keys destroyed), that bot's name is refused with a clear 409:
// the chat service lets a bot register its identity only once.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectorWorld, provisionToken, socketUp, uniqueBotName, type ConnectorWorld } from '../../support/chatsvc.ts';
import { http } from '../../support/services.ts';

interface Ctx {
  w: ConnectorWorld;
  dm: string;
  before: Record<string, any>;
}
const test = suite<Ctx>('chatsvc: reconnect after an external revocation');

test.before(async (ctx) => {
  ctx.w = await connectorWorld('chatsvc_reconnect');
});
test.after(async ({ w }) => {
  w?.human.ws.close();
  await w?.s.close();
});

const connectBody = async (w: ConnectorWorld, extra: Record<string, unknown> = {}) => ({
  instance_url: w.s.chat,
  provision_token: await provisionToken(w.s),
  bot_username: w.bot.username,
  display_name: 'Office Bot',
  default_community_id: w.community,
  ...extra,
});

test('revoked on the chat service, connected again with a fresh token: active, same bot and identity, a new token; the DM goes on', async (ctx) => {
  const { w } = ctx;
  // A DM session before the revocation, and the bot raised to community admin by hand (what send_message needs).
  ctx.dm = await w.human.openDm(w.bot.id);
  await w.human.subscribe(ctx.dm);
  await w.human.sendDm(ctx.dm, w.bot.id, 'When does the Lisbon office open?');
  assert.match(w.human.decryptDm((await w.human.botMessage(ctx.dm, w.bot.id)).ciphertext), /half past eight/);
  await w.spaces.ok(w.owner, 'POST', `/api/admin/bots/${w.bot.id}/communities`, {
    community_id: w.community,
    role: 'admin',
  });
  ctx.before = (await http(w.base, { headers: w.admin })).body;

  // An admin revokes the bot's token on the chat service; the probe finds out.
  const view = await w.spaces.ok(w.owner, 'GET', `/api/admin/bots/${w.bot.id}`);
  const tokenId = view.tokens.find((t: any) => t.scope === 'default' && t.status === 'active').id;
  await w.spaces.ok(w.owner, 'POST', `/api/admin/bots/${w.bot.id}/tokens/${tokenId}/revoke`);
  assert.is((await http(`${w.base}/test`, { method: 'POST', headers: w.admin })).body.error, 'integration_disabled');
  assert.is((await http(w.base, { headers: w.admin })).body.status, 'revoked_externally');

  const again = await http(`${w.base}/connect`, {
    headers: w.admin,
    json: await connectBody(w, { expires_in_hours: 5 }),
  });
  assert.is(again.status, 201, again.text);
  assert.is(again.body.status, 'active');
  assert.is(again.body.bot_user_id, w.bot.id, 'the same bot');
  assert.is(again.body.identity_fingerprint, ctx.before.identity_fingerprint, 'the same identity');
  assert.match(again.body.token_prefix, /^cb_[0-9a-f]{8}$/);
  assert.is.not(again.body.token_prefix, ctx.before.token_prefix, 'a new token');
  const expiresIn = Date.parse(again.body.token_expires_at) - Date.now();
  assert.ok(
    expiresIn > 4.9 * 3_600_000 && expiresIn <= 5 * 3_600_000,
    `expires_in_hours honoured: ${again.body.token_expires_at}`,
  );
  const minted = (await w.spaces.ok(w.owner, 'GET', `/api/admin/bots/${w.bot.id}`)).tokens.find(
    (t: any) => t.prefix === again.body.token_prefix,
  );
  assert.equal(
    { status: minted.status, expires_at: minted.expires_at },
    { status: 'active', expires_at: again.body.token_expires_at },
    "the chat service's token",
  );
  const bots = (
    await http(`${w.s.chat}/api/admin/bots?limit=200`, { headers: { 'X-Bot-Token': await provisionToken(w.s) } })
  ).body.bots;
  assert.is(bots.filter((b: any) => b.username === w.bot.username).length, 1, 'no second bot of that name');
  const roles = (await w.spaces.ok(w.owner, 'GET', `/api/admin/bots/${w.bot.id}/communities`)).communities;
  assert.is(
    roles.find((c: any) => c.community_id === w.community).role,
    'admin',
    'the reconnect does not demote the bot to member',
  );

  // The socket comes back with the new token; the DM's ratchet continues (same keys, same session).
  await socketUp(w, 'connected', 30_000);
  await w.human.sendDm(ctx.dm, w.bot.id, 'And when does it close?');
  assert.match(w.human.decryptDm((await w.human.botMessage(ctx.dm, w.bot.id)).ciphertext), /Lisbon/);
  // A new session from a fresh bundle opens too (the kept one-time and signed prekeys).
  w.human.resetDm();
  await w.human.sendDm(ctx.dm, w.bot.id, 'When does the Lisbon office open?');
  assert.match(w.human.decryptDm((await w.human.botMessage(ctx.dm, w.bot.id)).ciphertext), /half past eight/);
  const probe = await http(`${w.base}/test`, { method: 'POST', headers: w.admin });
  assert.equal({ status: probe.status, ok: probe.body.ok }, { status: 200, ok: true }, probe.text);
  // One device, kept: the integration id did not change.
  const devices = await w.s.db.pool.query('SELECT integration_id FROM chatsvc_devices');
  assert.is(devices.rowCount, 1);
  const connects = await w.s.db.pool.query(
    `SELECT DISTINCT data->>'integration_id' AS id FROM events WHERE type = 'ChatIntegrationConnected'`,
  );
  assert.equal(
    connects.rows.map((r) => r.id),
    [devices.rows[0].integration_id],
  );
});

test('another profile cannot take over a bot whose keys it does not hold', async (ctx) => {
  const { w } = ctx;
  const other = await http(`${w.s.orch}/api/v1/agent-chat/profiles`, {
    headers: w.admin,
    json: { slug: 'other-bot', name: 'Other Bot', model: 'local' },
  });
  assert.is(other.status, 201, other.text);
  const base = `${w.s.orch}/api/v1/agents/${other.body.id}/chatsvc`;
  const taken = await http(`${base}/connect`, { headers: w.admin, json: await connectBody(w) });
  assert.is(taken.status, 409, taken.text);
  assert.is(taken.body.error, 'bot_identity_taken');
  assert.is((await http(base, { headers: w.admin })).body.error, 'not_configured');
});

test("after delete (keys destroyed) the bot's name is refused with 409 bot_identity_taken; another name connects with a new identity", async (ctx) => {
  const { w } = ctx;
  assert.is((await http(w.base, { method: 'DELETE', headers: w.admin })).status, 204);
  const reuse = await http(`${w.base}/connect`, { headers: w.admin, json: await connectBody(w) });
  assert.is(reuse.status, 409, reuse.text);
  assert.is(reuse.body.error, 'bot_identity_taken');
  assert.match(reuse.body.message, /another bot_username/);
  assert.is((await http(w.base, { headers: w.admin })).body.error, 'not_configured', 'nothing stored');
  const fresh = await http(`${w.base}/connect`, {
    headers: w.admin,
    json: await connectBody(w, { bot_username: uniqueBotName() }),
  });
  assert.is(fresh.status, 201, fresh.text);
  assert.is.not(fresh.body.bot_user_id, w.bot.id);
  assert.is.not(fresh.body.identity_fingerprint, ctx.before.identity_fingerprint);
});

test.run();
