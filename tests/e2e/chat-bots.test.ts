// Bots over a real socket: a bot token authenticates the WebSocket (authorisation unchanged: a
// non-member bot cannot subscribe), revoking the token closes its sockets, and removing a bot
// that registered an identity key tells the channel's remaining members to rotate.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { clientKeys, wire, type ChatAccount } from '../support/chat.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import { expectStatus, Spaces } from '../support/spaces.ts';
import { connectWs, type WsClient } from '../support/ws.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  admin: ChatAccount;
  ann: ChatAccount;
  cid: string;
  ch: string;
  other: string;
  botId: string;
  token: string;
  tokenId: string;
  sockets: WsClient[];
}
const test = suite<Ctx>('chat bots over WebSocket');
test.before(async (ctx) => {
  ctx.s = await startTestServices('chat_bots_e2e', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '1000',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.sockets = [];
  ctx.admin = await ctx.sp.register('adm');
  ctx.ann = await ctx.sp.register('ann');
  ctx.cid = await ctx.sp.community(ctx.admin);
  await ctx.sp.join(ctx.cid, ctx.admin, [ctx.ann]);
  const g = await ctx.sp.group(ctx.admin, ctx.cid);
  ctx.ch = await ctx.sp.channel(ctx.admin, g, [ctx.ann]);
  const hidden = await ctx.sp.group(ctx.admin, ctx.cid, 'private', 'Hidden');
  ctx.other = await ctx.sp.channel(ctx.admin, hidden, [], 'hidden');
  const bot = await ctx.sp.ok(ctx.admin, 'POST', '/api/admin/bots', { username: 'ws_bot' }, 201);
  ctx.botId = bot.id;
  const minted = await ctx.sp.ok(ctx.admin, 'POST', `/api/admin/bots/${bot.id}/tokens`, {}, 201);
  ctx.token = minted.token;
  ctx.tokenId = minted.id;
  await ctx.sp.ok(ctx.admin, 'POST', `/api/admin/bots/${bot.id}/communities`, { community_id: ctx.cid });
  const keys = clientKeys(2);
  expectStatus(
    await http(`${ctx.s.chat}/api/keys/register`, {
      headers: { 'x-bot-token': ctx.token },
      json: {
        identity_key: wire(keys.identity.publicKey),
        signed_prekey: {
          key_id: keys.signedPrekey.keyId,
          public_key: wire(keys.signedPrekey.publicKey),
          signature: wire(keys.signedPrekey.signature),
        },
      },
    }),
    201,
  );
});
test.after(async ({ s, sockets }) => {
  for (const ws of sockets ?? []) ws.close();
  await s?.close();
});

async function authed(ctx: Ctx, token: string): Promise<WsClient> {
  const ws = await connectWs(ctx.s.chat);
  ctx.sockets.push(ws);
  ws.send({ type: 'Authenticate', token });
  return ws;
}

test('a bot token authenticates; membership still decides subscriptions; other scopes are refused', async (ctx) => {
  const ws = await authed(ctx, ctx.token);
  const hello = await ws.next((f) => f.type === 'Authenticated');
  assert.is(hello.user_id, ctx.botId);
  ws.send({ type: 'Subscribe', channel_id: ctx.ch });
  await ws.next((f) => f.type === 'Subscribed');
  ws.send({ type: 'Subscribe', channel_id: ctx.other });
  assert.is((await ws.next((f) => f.type === 'Error')).code, 'forbidden');
  await ctx.sp.post(ctx.ann, ctx.ch, 'hello bot');
  assert.is((await ws.next((f) => f.type === 'MessageCreated')).message.ciphertext, 'hello bot');
  const integration = await ctx.sp.ok(
    ctx.admin,
    'POST',
    '/api/admin/integrations',
    { label: 'metrics', scope: 'metrics' },
    201,
  );
  const refused = await authed(ctx, integration.token.token);
  assert.is((await refused.closed).code, 4401);
});

test('revoking the token closes its sockets', async (ctx) => {
  const second = await ctx.sp.ok(ctx.admin, 'POST', `/api/admin/bots/${ctx.botId}/tokens`, {}, 201);
  const ws = await authed(ctx, second.token);
  await ws.next((f) => f.type === 'Authenticated');
  await ctx.sp.ok(ctx.admin, 'POST', `/api/admin/bots/${ctx.botId}/tokens/${second.id}/revoke`);
  assert.is((await ws.closed).code, 4401);
  const again = await authed(ctx, second.token);
  assert.is((await again.closed).code, 4401);
});

test('removing the bot from the community: remaining members are told to rotate sender keys', async (ctx) => {
  const ws = await authed(ctx, ctx.ann.access);
  await ws.next((f) => f.type === 'Authenticated');
  ws.send({ type: 'Subscribe', channel_id: ctx.ch });
  await ws.next((f) => f.type === 'Subscribed');
  await ctx.sp.ok(ctx.admin, 'DELETE', `/api/admin/bots/${ctx.botId}/communities/${ctx.cid}`, undefined, 204);
  const left = await ws.next((f) => f.type === 'MemberLeft');
  assert.is(left.user_id, ctx.botId);
  assert.is((await ws.next((f) => f.type === 'SenderKeyRotationRequired')).channel_id, ctx.ch);
});

test.run();
