// Web push and presence over real sockets: the chat service listening, its background (the push
// sender) running as `serve` runs it. A user with an authenticated /api/ws socket gets no push
// for a reminder that a user without one gets; while the socket is open the presence table
// holds the user, once it closes the row goes and the next reminder is pushed. With two
// instances on one database, a socket on either one counts, whichever runs the sender.

import { reminderStream } from '../../domain/chat/streams.ts';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logging.ts';
import { openPlatform, type Platform } from '../../main/platform.ts';
import { startServices, type RunningService } from '../../main/serve.ts';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ChatAccount } from '../support/chat.ts';
import { browser, decrypt, PushService, type Browser } from '../support/push.ts';
import { startTestServices, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';
import { connectWs } from '../support/ws.ts';
import { until } from '../support/until.ts';

interface Ctx {
  second?: Platform;
  secondChat?: RunningService;
  s: TestServices;
  sp: Spaces;
  push: PushService;
  alice: ChatAccount;
  bob: ChatAccount;
  ab: Browser;
  bb: Browser;
}
const test = suite<Ctx>('e2e: web push skips users with a socket');

test.before(async (ctx) => {
  ctx.push = await new PushService().start();
  ctx.s = await startTestServices('e2e_chat_push', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    NODE_ENV: 'test',
    CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.alice = await ctx.sp.register('alice');
  ctx.bob = await ctx.sp.register('bob');
  ctx.ab = browser();
  ctx.bb = browser();
  await ctx.sp.ok(
    ctx.alice,
    'POST',
    '/api/push/subscriptions',
    { endpoint: ctx.push.url('/alice'), keys: ctx.ab.keys },
    201,
  );
  await ctx.sp.ok(
    ctx.bob,
    'POST',
    '/api/push/subscriptions',
    { endpoint: ctx.push.url('/bob'), keys: ctx.bb.keys },
    201,
  );
});
test.after(async ({ s, push, second, secondChat }) => {
  await secondChat?.close();
  await second?.close();
  await s?.close();
  await push?.close();
});

async function fire(ctx: Ctx, recipients: string[]): Promise<string> {
  const meeting = randomUUID();
  const start = new Date(Date.now() + 3600_000).toISOString();
  await ctx.s.platform.commands.record(
    reminderStream(`${meeting}-x-10`),
    {
      type: 'MeetingReminderFired',
      data: {
        meeting_id: meeting,
        occurrence_id: 'x',
        channel_id: randomUUID(),
        title: 'Standup',
        start,
        offset_minutes: 10,
        reminder_id: `${meeting}-x-10`,
        recipient_ids: recipients,
        at: new Date().toISOString(),
      },
    },
    { actor: { kind: 'system', id: 'scheduler' }, correlationId: null },
    { expected: 'no_stream' },
  );
  return meeting;
}

const presentRows = async (ctx: Ctx, userId: string) =>
  (
    await ctx.s.db.pool.query(
      `SELECT count(*)::int AS n FROM chat_presence WHERE user_id = $1 AND seen_at > now() - interval '30 seconds'`,
      [userId],
    )
  ).rows[0].n as number;

test('online (a socket): no push; offline: pushed; the presence row follows the socket', async (ctx) => {
  const ws = await connectWs(ctx.s.chat);
  ws.send({ type: 'Authenticate', token: ctx.alice.access });
  await ws.next((f) => f.type === 'Authenticated', 15_000);
  assert.is(await presentRows(ctx, ctx.alice.id), 1);
  assert.is(await presentRows(ctx, ctx.bob.id), 0);

  const first = await fire(ctx, [ctx.alice.id, ctx.bob.id]);
  // Bob's push shows the event was handled; both recipients are handled in the same step.
  const [bobs] = await ctx.push.waitFor('/bob', 1);
  assert.is(JSON.parse(decrypt(bobs!, ctx.bb)).meeting_id, first);
  const second = await fire(ctx, [ctx.bob.id]);
  await ctx.push.waitFor('/bob', 2);
  assert.is(JSON.parse(decrypt(ctx.push.to('/bob')[1]!, ctx.bb)).meeting_id, second);
  assert.is(ctx.push.to('/alice').length, 0, 'a user with a socket gets no push');

  ws.close();
  await ws.closed;
  await until(
    'the presence row gone after the socket closed',
    async () => (await presentRows(ctx, ctx.alice.id)) === 0,
    20_000,
    100,
  );
  const third = await fire(ctx, [ctx.alice.id]);
  const [alices] = await ctx.push.waitFor('/alice', 1);
  assert.is(JSON.parse(decrypt(alices!, ctx.ab)).meeting_id, third);
});

test('two instances: a socket on either one counts', async (ctx) => {
  ctx.second = await openPlatform(
    loadConfig({ ...ctx.s.env, CHATSVC_LISTEN: '127.0.0.1:0' }),
    createLogger({ sink: () => {} }),
  );
  ctx.secondChat = (await startServices(ctx.second, ['chat']))[0]!;
  const carol = await ctx.sp.register('carol');
  const cb = browser();
  await ctx.sp.ok(carol, 'POST', '/api/push/subscriptions', { endpoint: ctx.push.url('/carol'), keys: cb.keys }, 201);
  const sockets = [];
  for (const [who, base] of [
    [ctx.alice, ctx.secondChat.url],
    [carol, ctx.s.chat],
  ] as const) {
    const ws = await connectWs(base);
    ws.send({ type: 'Authenticate', token: who.access });
    await ws.next((f) => f.type === 'Authenticated', 15_000);
    sockets.push(ws);
  }
  const before = { a: ctx.push.to('/alice').length, b: ctx.push.to('/bob').length };
  const meeting = await fire(ctx, [ctx.alice.id, carol.id, ctx.bob.id]);
  const bobs = await ctx.push.waitFor('/bob', before.b + 1);
  assert.is(JSON.parse(decrypt(bobs.at(-1)!, ctx.bb)).meeting_id, meeting);
  assert.equal([ctx.push.to('/alice').length, ctx.push.to('/carol').length], [before.a, 0]);
  for (const ws of sockets) ws.close();
});

test.run();
