// The bot's inbound rules against the real chat service: reply modes, what never counts as a
// mention, own and webhook messages skipped, the per-user limit's canned reply, an unknown
// chain_id held until its sender key arrives, a kicked member locked out of the next reply, a
// reconnect catching up, an orchestration restart between two DMs; and the tools by route and by
// the model's loop (webhook creation, 404 recovery, pacing, audit rows).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createSenderKey,
  decryptDm,
  encryptDm,
  encryptGroup,
  generateIdentityKeyPair,
  senderKeyDistribution,
} from '../../../crypto/e2ee/index.ts';
import { unconsumedPrekeyCount } from '../../../projections/chat/keys.ts';
import { setReplyMode } from '../../../api/orchestration/profiles/commands.ts';
import { LIMIT_REPLY } from '../../../domain/orchestration/chatsvc/rules.ts';
import { chatsvcConnector, orchDeps } from '../../../main/apps.ts';
import { registerChat, uniqueName } from '../../support/chat.ts';
import { botStayedQuiet, connectorWorld, Human, socketUp, type ConnectorWorld } from '../../support/chatsvc.ts';
import { http } from '../../support/services.ts';
import { until } from '../../support/until.ts';
import { auditEntries } from '../agent-chat/helpers.ts';

interface Ctx {
  w: ConnectorWorld;
  dm: string;
}
const test = suite<Ctx>('chatsvc: inbound rules and tools');

test.before(async (ctx) => {
  ctx.w = await connectorWorld('chatsvc_inbound', { profile: { rate_limit_rpm: 1000 } });
  ctx.dm = await ctx.w.human.openDm(ctx.w.bot.id);
  await ctx.w.human.subscribe(ctx.dm);
});
test.after(async ({ w }) => {
  w?.human.ws.close();
  await w?.s.close();
});

const mode = (w: ConnectorWorld, m: 'dm_only' | 'channel_mention' | 'both') =>
  setReplyMode(orchDeps(w.s.platform), w.profile.slug, m, {
    actor: { kind: 'system', id: 'test' },
    correlationId: null,
  });

test('a DM is answered, and continues over the ratchet', async ({ w, dm }) => {
  await w.human.sendDm(dm, w.bot.id, 'When does the Lisbon office open?');
  assert.match(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), /half past eight/);
});

test('@everyone, @here, @channel, name@host and @<bot>_x are not mentions; own and webhook messages are skipped', async ({
  w,
  dm,
}) => {
  const mark = w.human.ws.frames.length;
  await w.human.sendChannel(
    w.channel,
    `@everyone @here @channel write to ${w.bot.username}@example.com or @${w.bot.username}_x`,
    [w.bot.id],
  );
  await w.human.sendChannel(w.channel, 'nobody is mentioned here');
  await botStayedQuiet(w, dm, w.channel, mark);
});

test('a webhook message that mentions the bot is skipped (no bot loops)', async ({ w, dm }) => {
  const hook = await w.spaces.ok(w.owner, 'POST', `/api/channels/${w.channel}/webhooks`, { name: 'ci' }, 201);
  const mark = w.human.ws.frames.length;
  const posted = await http(`${w.s.chat}/api/webhooks/execute/${hook.token}`, {
    json: { content: `@${w.bot.username} Lisbon hours?` },
  });
  assert.is(posted.status, 201, posted.text);
  await botStayedQuiet(w, dm, w.channel, mark);
});

test("a peer's changed identity key: a new session, answered, and a chatsvc_identity_key_changed warning", async ({
  w,
  dm,
}) => {
  const impostor = generateIdentityKeyPair();
  const bundle = await w.spaces.ok(w.human.account, 'GET', `/api/keys/${w.bot.id}/bundle`);
  const session = createInitiatorSession(impostor, bundle);
  await w.spaces.post(
    w.human.account,
    dm,
    JSON.stringify(encryptDm(session, new TextEncoder().encode('Lisbon hours, from my new device?'))),
  );
  const reply = await w.human.botMessage(dm, w.bot.id);
  assert.match(new TextDecoder().decode(decryptDm(session, JSON.parse(reply.ciphertext))), /half past eight/);
  const row = (await auditEntries(w.s, w.adminKey)).find((e) => e.event_type === 'chatsvc_identity_key_changed');
  assert.is(row?.severity, 'warning');
  assert.is(row.detail.peer_user_id, w.human.account.id);
  // The human's own device starts a fresh session too (the bot now holds the impostor's).
  w.human.resetDm();
  await w.human.sendDm(dm, w.bot.id, 'Lisbon hours, from my own device?');
  assert.match(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), /half past eight/);
});

test('KeysLow: one-time prekeys drawn below 25 are topped back up to 100', async ({ w }) => {
  for (let i = 0; i < 80; i++) {
    const r = await w.spaces.call(w.human.account, 'GET', `/api/keys/${w.bot.id}/bundle`);
    if (r.status === 429) await new Promise((res) => setTimeout(res, 1000));
  }
  // Topped up to 100 when KeysLow came (at 24 left); the fetches after it drew a few more.
  let n = 0;
  await until(
    () => `the prekeys topped up (still ${n} one-time prekeys)`,
    async () => (n = await unconsumedPrekeyCount(w.s.db.pool, w.bot.id)) >= 75,
    15_000,
    200,
  );
});

test('reply modes: dm_only ignores channel mentions; channel_mention ignores DMs; both answers both', async ({
  w,
  dm,
}) => {
  await mode(w, 'dm_only');
  let mark = w.human.ws.frames.length;
  await w.human.sendChannel(w.channel, `@${w.bot.username} Lisbon hours?`, [w.bot.id]);
  await botStayedQuiet(w, dm, w.channel, mark);

  await mode(w, 'channel_mention');
  mark = w.human.ws.frames.length;
  await w.human.sendDm(dm, w.bot.id, 'Lisbon hours?');
  const probe = await w.human.sendChannel(w.channel, `@${w.bot.username} Lisbon hours?`, [w.bot.id]);
  const reply = await w.human.botMessage(w.channel, w.bot.id);
  assert.is(reply.thread_root_id, probe);
  assert.not.ok(
    w.human.ws.frames
      .slice(mark)
      .some((f) => f.type === 'MessageCreated' && f.channel_id === dm && f.message.sender_id === w.bot.id),
    'the DM got no answer',
  );

  await mode(w, 'both');
  await w.human.sendDm(dm, w.bot.id, 'Lisbon hours?');
  assert.match(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), /Lisbon/);
  await w.human.sendChannel(w.channel, `@${w.bot.username} Lisbon hours again?`, [w.bot.id]);
  assert.match(
    await w.human.decryptChannel(w.channel, w.bot.id, (await w.human.botMessage(w.channel, w.bot.id)).ciphertext),
    /half past eight/,
  );
});

test('an unknown chain_id is held, then answered once its sender key arrives', async ({ w }) => {
  const chain = createSenderKey(w.human.account.id);
  const initial = senderKeyDistribution(chain);
  const wire = encryptGroup(chain, new TextEncoder().encode(`@${w.bot.username} held question about Lisbon`));
  // The message first, on a chain nobody has seen: the bot fetches the keys, finds none, holds it.
  const id = (await w.spaces.post(w.human.account, w.channel, JSON.stringify(wire), { mentions: [w.bot.id] })).id;
  await until(
    'the message held',
    async () => (await w.s.db.pool.query('SELECT count(*) AS n FROM chatsvc_held')).rows[0].n !== '0',
    10_000,
    50,
  );
  // Then the distribution of that chain (iteration 0): SenderKeyUpdated releases it.
  await w.spaces.ok(
    w.human.account,
    'POST',
    `/api/channels/${w.channel}/sender-keys`,
    { chain_id: chain.chainId, distribution: initial },
    201,
  );
  const reply = await w.human.botMessage(w.channel, w.bot.id);
  assert.is(reply.thread_root_id, id);
  assert.is((await w.s.db.pool.query('SELECT count(*) AS n FROM chatsvc_held')).rows[0].n, '0');
});

test("a member kicked from the channel cannot read the bot's next reply (a new chain, distributed to members only)", async ({
  w,
}) => {
  const eve = new Human(w.spaces, await registerChat(w.s.chat, uniqueName('eve')));
  await w.spaces.join(w.community, w.owner, [eve.account]);
  await w.spaces.ok(eve.account, 'POST', `/api/channels/${w.channel}/join`);
  await w.human.sendChannel(w.channel, `@${w.bot.username} Lisbon hours before the kick`, [w.bot.id]);
  const before = await w.human.botMessage(w.channel, w.bot.id);
  const beforeChain = JSON.parse(before.ciphertext).message.chain_id;
  assert.match(
    await eve.decryptChannel(w.channel, w.bot.id, before.ciphertext),
    /half past eight/,
    'eve reads it while a member',
  );
  await w.spaces.ok(w.owner, 'POST', `/api/channels/${w.channel}/members/${eve.account.id}/kick`, undefined, 204);
  await w.human.sendChannel(w.channel, `@${w.bot.username} Lisbon hours after the kick`, [w.bot.id]);
  const after = await w.human.botMessage(w.channel, w.bot.id);
  const afterChain = JSON.parse(after.ciphertext).message.chain_id;
  assert.is.not(afterChain, beforeChain, 'the bot rotated its chain');
  assert.match(await w.human.decryptChannel(w.channel, w.bot.id, after.ciphertext), /half past eight/);
  assert.is((await w.spaces.call(eve.account, 'GET', `/api/channels/${w.channel}/sender-keys`)).status, 403);
  let refused = false;
  await eve.decryptChannel(w.channel, w.bot.id, after.ciphertext).catch(() => {
    refused = true;
  });
  assert.ok(refused, 'eve cannot decrypt the reply');
});

test('rule 5: past the per-user rate limit, a short canned reply (once a minute), other users unaffected', async ({
  w,
}) => {
  const join = async (prefix: string) => {
    const h = new Human(w.spaces, await registerChat(w.s.chat, uniqueName(prefix)));
    await w.spaces.join(w.community, w.owner, [h.account]);
    await h.connect();
    const dm = await h.openDm(w.bot.id);
    await h.subscribe(dm);
    return { h, dm };
  };
  const a = await join('limited');
  const b = await join('other');
  const put = await http(`${w.s.orch}/api/v1/agent-chat/profiles/${w.profile.slug}`, {
    method: 'PUT',
    headers: w.admin,
    json: { rate_limit_rpm: 1 },
  });
  assert.is(put.status, 200, put.text);
  try {
    await a.h.sendDm(a.dm, w.bot.id, 'Lisbon hours?');
    assert.match(a.h.decryptDm((await a.h.botMessage(a.dm, w.bot.id)).ciphertext), /half past eight/);
    await a.h.sendDm(a.dm, w.bot.id, 'Lisbon hours, again?');
    assert.is(a.h.decryptDm((await a.h.botMessage(a.dm, w.bot.id)).ciphertext), LIMIT_REPLY);
    // A third within the minute: nothing at all (one canned reply per user a minute); the other user is answered.
    const mark = a.h.ws.frames.length;
    await a.h.sendDm(a.dm, w.bot.id, 'Lisbon hours, a third time?');
    await b.h.sendDm(b.dm, w.bot.id, 'Lisbon hours?');
    assert.match(b.h.decryptDm((await b.h.botMessage(b.dm, w.bot.id)).ciphertext), /half past eight/);
    await new Promise((r) => setTimeout(r, 300));
    assert.not.ok(
      a.h.ws.frames.slice(mark).some((f) => f.type === 'MessageCreated' && f.message.sender_id === w.bot.id),
      'no second canned reply',
    );
    const limited = (await auditEntries(w.s, w.adminKey)).find(
      (e) => e.event_type === 'rate_limit_hit' && e.detail.surface === 'chatsvc',
    );
    assert.ok(limited, 'the hit is audited');
  } finally {
    await http(`${w.s.orch}/api/v1/agent-chat/profiles/${w.profile.slug}`, {
      method: 'PUT',
      headers: w.admin,
      json: { rate_limit_rpm: 1000 },
    });
    a.h.ws.close();
    b.h.ws.close();
  }
});

test('a reconnect catches up from the cursor: a DM sent while the bot was away is answered', async ({ w, dm }) => {
  const connector = chatsvcConnector(w.s.platform);
  await connector.supervisor.stopBot(w.profile.id);
  await w.human.sendDm(dm, w.bot.id, 'sent while you were away: Lisbon hours?');
  await connector.supervisor.tick();
  await socketUp(w);
  assert.match(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), /half past eight/);
});

test('an orchestration restart between two DMs: the ratchet state survived', async ({ w, dm }) => {
  // The same ports: the integration keeps its instance_url, and the suite its URLs.
  await w.s.restart({
    CHATSVC_LISTEN: `127.0.0.1:${new URL(w.s.chat).port}`,
    ORCH_LISTEN: `127.0.0.1:${new URL(w.s.orch).port}`,
  });
  await w.human.connect();
  await w.human.subscribe(dm);
  await w.human.subscribe(w.channel);
  await socketUp(w);
  await w.human.sendDm(dm, w.bot.id, 'after the restart: Lisbon hours?');
  const reply = await w.human.botMessage(dm, w.bot.id).catch((error) => {
    throw new Error(
      `${(error as Error).message.slice(0, 200)}\n${w.s.logLines
        .filter((l) => l.includes('chatsvc') && !l.includes('"debug"'))
        .slice(-10)
        .join('\n')}`,
    );
  });
  assert.match(w.human.decryptDm(reply.ciphertext), /half past eight/);
});

/** `integrations.chatsvc_bot_ws` of the health route once its status is `status`. */
async function botsHealthIs(orch: string, status: string, timeoutMs = 60_000): Promise<Record<string, any>> {
  let text = '';
  return until(
    () => `chatsvc_bot_ws ${status} (last: ${text})`,
    async () => {
      const r = await http(`${orch}/api/v1/health`);
      text = r.text;
      const bots = r.body?.integrations?.chatsvc_bot_ws;
      return bots?.status === status && bots;
    },
    timeoutMs,
    100,
  );
}

test('a chat-only restart: health says disconnected while the chat is down; the bot reconnects and answers', async ({
  w,
  dm,
}) => {
  assert.equal(await botsHealthIs(w.s.orch, 'connected'), {
    status: 'connected',
    active: 1,
    connected: 1,
    down: 0,
    standby: 0,
  });
  await w.s.stopService('chat');
  assert.equal(await botsHealthIs(w.s.orch, 'disconnected'), {
    status: 'disconnected',
    active: 1,
    connected: 0,
    down: 1,
    standby: 0,
  });
  await w.s.startService('chat');
  // Reconnects back off with jitter (1 s doubling): the bot is back within a minute at most.
  await botsHealthIs(w.s.orch, 'connected', 90_000);
  await w.human.connect();
  await w.human.subscribe(dm);
  await w.human.sendDm(dm, w.bot.id, 'after the chat restarted: Lisbon hours?');
  assert.match(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), /half past eight/);
});

test.run();
