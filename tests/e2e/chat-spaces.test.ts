// Encrypted group chat end to end, over real HTTP and real WebSockets: three clients built on
// the e2ee library create a community and a channel, distribute sender keys through the
// server, exchange encrypted messages the server stores as ciphertext only, and follow the
// channel live. One member is kicked: their subscription drops on the next event, their
// distributions are gone, the others hear SenderKeyRotationRequired and rotate, and the kicked
// member cannot decrypt the next message. Re-joining lets a new subscription work again.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createSenderKey,
  createSenderKeyReceiver,
  decryptGroup,
  E2eeError,
  encryptGroup,
  senderKeyDistribution,
  type SenderKeyDistribution,
  type SenderKeyMessage,
  type SenderKeyReceiver,
  type SenderKeyState,
} from '../../crypto/e2ee/index.ts';
import { bearer, type ChatAccount } from '../support/chat.ts';
import { logText, startTestServices, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';
import { connectWs, type WsClient } from '../support/ws.ts';

interface Client {
  account: ChatAccount;
  ws: WsClient;
  key: SenderKeyState;
  receivers: Map<string, SenderKeyReceiver>;
}
interface Ctx {
  s: TestServices;
  sp: Spaces;
  alice: Client;
  bob: Client;
  carol: Client;
  chid: string;
  gid: string;
}

const test = suite<Ctx>('e2e: encrypted channel with sender keys, live subscriptions, kick and rotation');
test.before(async (ctx) => {
  ctx.s = await startTestServices('chat_spaces_e2e', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '1000',
  });
  ctx.sp = new Spaces(ctx.s);
});
test.after(async ({ s, alice, bob, carol }) => {
  for (const c of [alice, bob, carol]) c?.ws.close();
  await s?.close();
});

const utf8 = (v: string) => new TextEncoder().encode(v);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

async function client(ctx: Ctx, name: string): Promise<Client> {
  const account = await ctx.sp.register(name);
  const ws = await connectWs(ctx.s.chat);
  ws.send({ type: 'Authenticate', token: account.access });
  await ws.next((f) => f.type === 'Authenticated');
  return { account, ws, key: createSenderKey(account.id), receivers: new Map() };
}

async function distribute(ctx: Ctx, c: Client): Promise<void> {
  const distribution = senderKeyDistribution(c.key);
  await ctx.sp.ok(
    c.account,
    'POST',
    `/api/channels/${ctx.chid}/sender-keys`,
    { chain_id: distribution.chain_id, distribution },
    201,
  );
}

/** Fetch every distribution the server holds for the channel, as a member does after a rotation. */
async function fetchKeys(ctx: Ctx, c: Client): Promise<void> {
  const body = await ctx.sp.ok(c.account, 'GET', `/api/channels/${ctx.chid}/sender-keys`);
  for (const k of body.sender_keys as { user_id: string; chain_id: number; distribution: SenderKeyDistribution }[]) {
    if (k.user_id === c.account.id) continue;
    const current = c.receivers.get(k.user_id);
    if (!current || current.chainId !== k.chain_id) c.receivers.set(k.user_id, createSenderKeyReceiver(k.distribution));
  }
}

async function send(ctx: Ctx, c: Client, plaintext: string): Promise<{ id: string; wire: SenderKeyMessage }> {
  const wire = encryptGroup(c.key, utf8(plaintext));
  const posted = await ctx.sp.post(c.account, ctx.chid, JSON.stringify(wire));
  return { id: posted.id, wire };
}

const read = (c: Client, senderId: string, ciphertext: string) =>
  text(decryptGroup(c.receivers.get(senderId)!, JSON.parse(ciphertext)));

test('three clients: community, channel, sender keys, encrypted messages live; kick, rotate, the kicked member cannot decrypt', async (ctx) => {
  const { sp } = ctx;
  ctx.alice = await client(ctx, 'alice');
  ctx.bob = await client(ctx, 'bob');
  ctx.carol = await client(ctx, 'carol');
  const { alice, bob, carol } = ctx;
  const cid = await sp.community(alice.account);
  await sp.join(cid, alice.account, [bob.account, carol.account]);
  ctx.gid = await sp.group(alice.account, cid);
  for (const c of [bob, carol]) await sp.ok(c.account, 'POST', `/api/groups/${ctx.gid}/join`);
  ctx.chid = await sp.channel(alice.account, ctx.gid, [bob.account, carol.account], 'secret-plans');

  // Subscriptions: members only.
  const outsider = await client(ctx, 'eve');
  outsider.ws.send({ type: 'Subscribe', channel_id: ctx.chid });
  assert.is((await outsider.ws.next((f) => f.type === 'Error')).code, 'forbidden');
  outsider.ws.send({ type: 'Subscribe', channel_id: '00000000-0000-4000-8000-000000000000' });
  assert.is((await outsider.ws.next((f) => f.type === 'Error')).code, 'not_found');
  // Sender keys are for members only.
  const probe = senderKeyDistribution(outsider.key);
  assert.is(
    (
      await sp.call(outsider.account, 'POST', `/api/channels/${ctx.chid}/sender-keys`, {
        chain_id: probe.chain_id,
        distribution: probe,
      })
    ).status,
    403,
  );
  assert.is((await sp.call(outsider.account, 'GET', `/api/channels/${ctx.chid}/sender-keys`)).status, 403);
  assert.is(
    (
      await sp.call(bob.account, 'POST', `/api/channels/${ctx.chid}/sender-keys`, {
        chain_id: probe.chain_id,
        distribution: probe,
      })
    ).status,
    400,
    'sender_id must be the caller',
  );
  outsider.ws.close();

  for (const c of [alice, bob, carol]) {
    c.ws.send({ type: 'Subscribe', channel_id: ctx.chid });
    await c.ws.next((f) => f.type === 'Subscribed' && f.channel_id === ctx.chid);
  }
  for (const c of [alice, bob, carol]) await distribute(ctx, c);
  // Each member hears the others' SenderKeyUpdated, with the distribution.
  for (const c of [alice, bob, carol]) {
    for (const other of [alice, bob, carol]) {
      const frame = await c.ws.next((f) => f.type === 'SenderKeyUpdated' && f.user_id === other.account.id);
      assert.is(frame.channel_id, ctx.chid);
      assert.is(frame.chain_id, other.key.chainId);
      if (other !== c) c.receivers.set(other.account.id, createSenderKeyReceiver(frame.distribution));
    }
  }

  // Encrypted messages, delivered live; everyone decrypts.
  const m1 = await send(ctx, alice, 'meet at the old oak');
  for (const c of [bob, carol]) {
    const frame = await c.ws.next((f) => f.type === 'MessageCreated' && f.message.id === m1.id);
    assert.is(read(c, alice.account.id, frame.message.ciphertext), 'meet at the old oak');
  }
  const m2 = await send(ctx, carol, 'bringing the map');
  for (const c of [alice, bob])
    assert.is(
      read(
        c,
        carol.account.id,
        (await c.ws.next((f) => f.type === 'MessageCreated' && f.message.id === m2.id)).message.ciphertext,
      ),
      'bringing the map',
    );
  // Typing is relayed, not stored.
  bob.ws.send({ type: 'Typing', channel_id: ctx.chid });
  assert.is((await alice.ws.next((f) => f.type === 'Typing')).user_id, bob.account.id);

  // Kick carol: her subscription drops, her keys go, the rest must rotate.
  assert.is(
    (await sp.call(alice.account, 'POST', `/api/channels/${ctx.chid}/members/${carol.account.id}/kick`)).status,
    204,
  );
  assert.equal((await carol.ws.next((f) => f.type === 'Unsubscribed')).reason, 'kicked');
  for (const c of [alice, bob]) {
    assert.is((await c.ws.next((f) => f.type === 'MemberLeft')).user_id, carol.account.id);
    await c.ws.next((f) => f.type === 'SenderKeyRotationRequired' && f.channel_id === ctx.chid);
  }
  const remaining = await sp.ok(alice.account, 'GET', `/api/channels/${ctx.chid}/sender-keys`);
  assert.equal(
    remaining.sender_keys.map((k: { user_id: string }) => k.user_id).sort(),
    [alice.account.id, bob.account.id].sort(),
  );
  assert.is((await sp.call(carol.account, 'GET', `/api/channels/${ctx.chid}/sender-keys`)).status, 403);
  carol.ws.send({ type: 'Subscribe', channel_id: ctx.chid });
  assert.is((await carol.ws.next((f) => f.type === 'Error')).code, 'forbidden');

  // Rotation: new chains, fetched from the server.
  const oldAlice = carol.receivers.get(alice.account.id)!;
  for (const c of [alice, bob]) {
    c.key = createSenderKey(c.account.id);
    await distribute(ctx, c);
  }
  for (const c of [alice, bob]) await fetchKeys(ctx, c);
  const m3 = await send(ctx, alice, 'new plan: the river');
  assert.is(
    read(
      bob,
      alice.account.id,
      (await bob.ws.next((f) => f.type === 'MessageCreated' && f.message.id === m3.id)).message.ciphertext,
    ),
    'new plan: the river',
  );
  // Carol heard nothing of it, and her old key does not open it.
  assert.not.ok(carol.ws.frames.some((f) => f.type === 'MessageCreated' && f.message.id === m3.id));
  try {
    decryptGroup(oldAlice, m3.wire);
    assert.unreachable('the kicked member decrypted a message after rotation');
  } catch (error) {
    assert.instance(error, E2eeError);
    assert.is((error as E2eeError).code, 'chain_mismatch');
  }
  assert.is((await sp.call(carol.account, 'GET', `/api/channels/${ctx.chid}/messages`)).status, 403);

  // The server holds ciphertext only.
  const log = await logText(ctx.s);
  const { rows } = await ctx.s.db.pool.query("SELECT string_agg(ciphertext, ' ') AS all FROM chat_messages");
  for (const secret of ['meet at the old oak', 'bringing the map', 'new plan: the river']) {
    assert.not.ok(log.includes(secret));
    assert.not.ok(rows[0].all.includes(secret));
  }
  const chainKey = JSON.stringify(senderKeyDistribution(alice.key).chain_key);
  assert.not.ok(log.includes(chainKey.slice(1, -1)), 'sender keys reach the log sealed');

  // A legitimate re-subscribe works again after re-joining.
  await sp.ok(carol.account, 'POST', `/api/channels/${ctx.chid}/join`);
  for (const c of [alice, bob]) await c.ws.next((f) => f.type === 'MemberJoined' && f.user_id === carol.account.id);
  carol.ws.send({ type: 'Subscribe', channel_id: ctx.chid });
  await carol.ws.next((f) => f.type === 'Subscribed');
  carol.key = createSenderKey(carol.account.id);
  await distribute(ctx, carol);
  await fetchKeys(ctx, carol);
  const m4 = await send(ctx, bob, 'welcome back');
  assert.is(
    read(
      carol,
      bob.account.id,
      (await carol.ws.next((f) => f.type === 'MessageCreated' && f.message.id === m4.id)).message.ciphertext,
    ),
    'welcome back',
  );
  assert.ok(bearer(carol.account));
});

test('the subscription drops after a community ban and a leave; edits, deletes and mentions are live', async (ctx) => {
  const { sp, alice, bob, carol } = ctx;
  const m = await sp.post(bob.account, ctx.chid, 'opaque', { mentions: [alice.account.id] });
  await alice.ws.next((f) => f.type === 'Mentioned' && f.message_id === m.id);
  await sp.ok(bob.account, 'PATCH', `/api/channels/${ctx.chid}/messages/${m.id}`, { ciphertext: 'opaque-2' });
  assert.is((await alice.ws.next((f) => f.type === 'MessageEdited' && f.message_id === m.id)).ciphertext, 'opaque-2');
  await sp.ok(bob.account, 'DELETE', `/api/channels/${ctx.chid}/messages/${m.id}`, undefined, 204);
  await alice.ws.next((f) => f.type === 'MessageDeleted' && f.message_id === m.id);
  // Leave.
  await sp.ok(bob.account, 'POST', `/api/channels/${ctx.chid}/leave`, undefined, 204);
  assert.is((await bob.ws.next((f) => f.type === 'Unsubscribed' && f.channel_id === ctx.chid)).reason, 'left');
  // A community ban removes carol from the channel too.
  const cid = (await sp.ok(alice.account, 'GET', `/api/channels/${ctx.chid}`)).community_id;
  assert.is((await sp.call(alice.account, 'POST', `/api/communities/${cid}/bans/${carol.account.id}`)).status, 204);
  await carol.ws.next((f) => f.type === 'Unsubscribed' && f.channel_id === ctx.chid);
  await alice.ws.next((f) => f.type === 'MemberLeft' && f.user_id === carol.account.id);
  const after = await sp.post(alice.account, ctx.chid, 'after the ban');
  await alice.ws.next((f) => f.type === 'MessageCreated' && f.message.id === after.id);
  assert.not.ok(carol.ws.frames.some((f) => f.type === 'MessageCreated' && f.message?.id === after.id));
  assert.not.ok(bob.ws.frames.some((f) => f.type === 'MessageCreated' && f.message?.id === after.id));
  assert.is((await sp.call(carol.account, 'POST', `/api/channels/${ctx.chid}/join`)).status, 403);
});

test.run();
