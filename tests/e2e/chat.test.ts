// The chat service end to end, over real sockets, with two server instances on one database:
// two real clients built on the e2ee library register with generated keys, fetch each other's
// bundles, exchange a first DM through a test relay and decrypt it; the WebSocket authenticates
// and delivers KeysLow from the log on both instances, closes revoked sessions, and limits
// frames per connection.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createResponderSession,
  decryptDm,
  encryptDm,
  type DmMessage,
  type KeyBundle,
} from '../../crypto/e2ee/index.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logging.ts';
import { version } from '../../infra/version.ts';
import { openPlatform, type Platform } from '../../main/platform.ts';
import { startServices, type RunningService } from '../../main/serve.ts';
import { bearer, registerChat, uniqueName, type ChatAccount } from '../support/chat.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import { connectWs, type WsClient } from '../support/ws.ts';

interface Ctx {
  s: TestServices;
  second: Platform;
  secondChat: RunningService;
  a: string;
  b: string;
  alice: ChatAccount;
  bob: ChatAccount;
}
const test = suite<Ctx>('e2e: chat clients, bundles, first DM, WebSocket on two instances');
test.before(async (ctx) => {
  ctx.s = await startTestServices('chat_e2e', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '1000',
  });
  ctx.second = await openPlatform(
    loadConfig({ ...ctx.s.env, CHATSVC_LISTEN: '127.0.0.1:0' }),
    createLogger({ sink: () => {} }),
  );
  ctx.secondChat = (await startServices(ctx.second, ['chat']))[0]!;
  ctx.a = ctx.s.chat;
  ctx.b = ctx.secondChat.url;
});
test.after(async ({ s, second, secondChat }) => {
  await secondChat?.close();
  await second?.close();
  await s?.close();
});

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const utf8 = (value: string) => new TextEncoder().encode(value);

/** The test relay: it carries DM wire messages between clients as JSON, the way a server would store and forward them. */
class Relay {
  private readonly boxes = new Map<string, string[]>();
  post(to: string, message: DmMessage) {
    this.boxes.set(to, [...(this.boxes.get(to) ?? []), JSON.stringify(message)]);
  }
  take(of: string): DmMessage[] {
    const messages = (this.boxes.get(of) ?? []).map((m) => JSON.parse(m) as DmMessage);
    this.boxes.delete(of);
    return messages;
  }
}

test("two clients register on different instances with generated keys, fetch each other's bundles and exchange a first DM", async (ctx) => {
  const { a, b } = ctx;
  ctx.alice = await registerChat(a, uniqueName('alice'), { oneTime: 5 });
  ctx.bob = await registerChat(b, uniqueName('bob'), { oneTime: 26 });
  const { alice, bob } = ctx;
  const relay = new Relay();

  // Alice (instance A) fetches Bob's bundle; Bob (instance B) fetches Alice's.
  const bobBundle = await http(`${a}/api/keys/${bob.id}/bundle`, { headers: bearer(alice) });
  const aliceBundle = await http(`${b}/api/keys/${alice.id}/bundle`, { headers: bearer(bob) });
  assert.is(bobBundle.status, 200);
  assert.is(aliceBundle.status, 200);
  assert.is(bobBundle.body.one_time_prekey.key_id, bob.keys.oneTimePrekeys[0]!.keyId);

  // Alice starts the session from the bundle as served and sends her first message.
  const aliceSession = createInitiatorSession(alice.keys.identity, bobBundle.body as KeyBundle);
  relay.post(bob.id, encryptDm(aliceSession, utf8('hello Bob, this is Alice')));

  // Bob picks the prekeys the first message names from his own store, and decrypts.
  const [first] = relay.take(bob.id);
  assert.ok(first?.x3dh);
  assert.is(first!.x3dh!.signed_prekey_id, bob.keys.signedPrekey.keyId);
  const oneTime = bob.keys.oneTimePrekeys.find((k) => k.keyId === first!.x3dh!.one_time_prekey_id) ?? null;
  assert.ok(oneTime);
  const { session: bobSession, plaintext } = createResponderSession(
    bob.keys.identity,
    bob.keys.signedPrekey,
    oneTime,
    first!,
  );
  assert.is(text(plaintext), 'hello Bob, this is Alice');
  // The ciphertext on the relay is not the plaintext.
  assert.not.ok(JSON.stringify(first).includes('hello'));

  // Bob answers in the same session; Alice decrypts.
  relay.post(alice.id, encryptDm(bobSession, utf8('hi Alice')));
  assert.is(text(decryptDm(aliceSession, relay.take(alice.id)[0]!)), 'hi Alice');

  // Bob could equally start his own session from Alice's bundle (served by the other instance).
  const bobToAlice = createInitiatorSession(bob.keys.identity, aliceBundle.body as KeyBundle);
  const opener = encryptDm(bobToAlice, utf8('second session'));
  const aliceOneTime = alice.keys.oneTimePrekeys.find((k) => k.keyId === opener.x3dh!.one_time_prekey_id)!;
  assert.is(
    text(
      createResponderSession(
        alice.keys.identity,
        alice.keys.signedPrekey,
        aliceOneTime,
        JSON.parse(JSON.stringify(opener)),
      ).plaintext,
    ),
    'second session',
  );
});

test('WebSocket: Authenticate is answered Authenticated with the running version', async ({ b, bob }) => {
  const ws = await connectWs(b);
  ws.send({ type: 'Authenticate', token: bob.access });
  assert.equal(await ws.next(), { type: 'Authenticated', user_id: bob.id, client_version: version });
  ws.send({ type: 'Ping' });
  assert.equal(await ws.next(), { type: 'Pong' });
  ws.send({ type: 'Authenticate', token: bob.access });
  assert.match((await ws.next()).error, /already authenticated/);
  ws.close();
  // The externally tagged form is read too.
  const tagged = await connectWs(b);
  tagged.send({ Authenticate: { token: bob.access } });
  assert.is((await tagged.next()).type, 'Authenticated');
  tagged.close();
});

test('WebSocket: KeysLow comes from the log, on both instances, when a fetch leaves fewer than 25', async ({
  a,
  b,
  alice,
  bob,
}) => {
  // Bob registered 26 one-time prekeys and one is gone: 25 remain.
  const onB = await connectWs(b);
  const onA = await connectWs(a);
  for (const ws of [onA, onB]) {
    ws.send({ type: 'Authenticate', token: bob.access });
    assert.is((await ws.next()).type, 'Authenticated');
  }
  // Alice's fetch on instance A leaves 24.
  assert.is((await http(`${a}/api/keys/${bob.id}/bundle`, { headers: bearer(alice) })).status, 200);
  for (const ws of [onA, onB])
    assert.equal(await ws.next((f) => f.type === 'KeysLow'), { type: 'KeysLow', remaining: 24 });
  // And again through instance B: 23.
  assert.is((await http(`${b}/api/keys/${bob.id}/bundle`, { headers: bearer(alice) })).status, 200);
  for (const ws of [onA, onB])
    assert.equal(await ws.next((f) => f.type === 'KeysLow'), { type: 'KeysLow', remaining: 23 });
  // Alice's socket hears nothing of Bob's keys.
  const aliceWs = await connectWs(a);
  aliceWs.send({ type: 'Authenticate', token: alice.access });
  await aliceWs.next();
  assert.is((await http(`${a}/api/keys/${bob.id}/bundle`, { headers: bearer(alice) })).status, 200);
  await onA.next((f) => f.type === 'KeysLow');
  assert.equal(
    aliceWs.frames.map((f) => f.type),
    ['Authenticated'],
  );
  for (const ws of [onA, onB, aliceWs]) ws.close();
});

test('a revoked session is refused at once and its sockets close (4401), on every instance', async (ctx) => {
  const { a, b, bob } = ctx;
  const login = await http(`${a}/api/auth/login`, { json: { username: bob.username, password: bob.password } });
  const token = { access: login.body.access_token };
  const sockets: WsClient[] = [];
  for (const base of [a, b]) {
    const ws = await connectWs(base);
    ws.send({ type: 'Authenticate', token: token.access });
    assert.is((await ws.next()).type, 'Authenticated');
    sockets.push(ws);
  }
  // Warm the session cache of the instance running the projections (A), then revoke through B.
  for (const base of [a, b])
    for (let i = 0; i < 3; i++)
      assert.is((await http(`${base}/api/account/me`, { headers: bearer(token) })).status, 200);
  assert.ok(ctx.s.platform.engine.isActive('chat_sessions'));
  assert.not.ok(ctx.second.engine.isActive('chat_sessions'));
  const sid = JSON.parse(Buffer.from(token.access.split('.')[1]!, 'base64url').toString()).sid;
  assert.is((await http(`${b}/api/account/sessions/${sid}`, { method: 'DELETE', headers: bearer(bob) })).status, 204);
  // The very next request is refused on both instances.
  for (const base of [a, b])
    assert.is((await http(`${base}/api/account/me`, { headers: bearer(token) })).status, 401, base);
  for (const ws of sockets) assert.is((await ws.closed).code, 4401);
});

test('WebSocket: refusals (no upgrade, bad token, frames before authenticating, garbage)', async ({ a }) => {
  const plain = await http(`${a}/api/ws`);
  assert.is(plain.status, 426);
  assert.type(plain.body.error, 'string');
  const early = await connectWs(a);
  early.send({ type: 'Ping' });
  assert.equal(await early.next(), { type: 'Pong' });
  early.send({ type: 'Subscribe', channel_id: 'x' });
  assert.match((await early.next()).error, /authenticate first/);
  early.send('not json');
  assert.match((await early.next()).error, /JSON/);
  early.send({ type: 'Authenticate', token: 'forged.token.value' });
  assert.is((await early.next()).type, 'Error');
  assert.is((await early.closed).code, 4401);
});

test('WebSocket: 10-frame burst, then an error frame per excess frame, then close on abuse', async ({ a, alice }) => {
  const ws = await connectWs(a);
  ws.send({ type: 'Authenticate', token: alice.access });
  await ws.next();
  for (let i = 0; i < 40; i++) ws.send({ type: 'Ping' });
  const { code } = await ws.closed;
  assert.is(code, 1008);
  const types = ws.frames.map((f) => f.type);
  // Authenticate used one frame of the burst of 10.
  assert.equal(types.slice(0, 10), ['Authenticated', ...new Array(9).fill('Pong')]);
  const errors = ws.frames.filter((f) => f.type === 'Error');
  assert.is(errors.length, 10);
  for (const e of errors) assert.is(e.code, 'rate_limited');
});

test.run();
