// The web-push sender against a local push service (an HTTP server in the suite), driven
// in-process: a `MeetingReminderFired` appended directly (the meetings slice's contract) and a
// post mentioning members are pushed to subscribed users, and the browser decrypts them
// (http_ece, aes128gcm) with its own keys; the VAPID JWT verifies against the server's public
// key; TTL runs to the start; Topic from the reminder id. No message content is pushed. 404 and
// 410 drop the subscription. The checkpoint holds over a restart: nothing resent, nothing skipped.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReminderEvent as MeetingReminderFiredEvent } from '../../../domain/chat/meetings/events.ts';
import { pushTopic } from '../../../infra/push/web-push.ts';
import type { ChatBackground } from '../../../main/chat-background.ts';
import type { ChatAccount } from '../../support/chat.ts';
import { browser, decrypt, PushService, settlePush, vapidClaims, type Browser } from '../../support/push.ts';
import { backgroundOf } from '../../support/schedule.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';
import { until } from '../../support/until.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  push: PushService;
  bg: ChatBackground;
  alice: ChatAccount;
  bob: ChatAccount;
  ab: Browser;
  bb: Browser;
  publicKey: string;
  channel: string;
}
const test = suite<Ctx>('chat web push: sender');

test.before(async (ctx) => {
  ctx.push = await new PushService().start();
  ctx.s = await startTestApps('chat_push_sender', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    NODE_ENV: 'test',
    CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1',
    CHATSVC_VAPID_SUBJECT: 'mailto:ops@orchard.test',
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
  ctx.publicKey = (await ctx.sp.ok(ctx.alice, 'GET', '/api/push/vapid-public-key')).public_key;
  const c = await ctx.sp.community(ctx.alice);
  await ctx.sp.join(c, ctx.alice, [ctx.bob]);
  ctx.channel = await ctx.sp.channel(ctx.alice, await ctx.sp.group(ctx.alice, c), [ctx.bob], 'planning');
  ctx.bg = backgroundOf(ctx.s.platform);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher); // a new sender starts at the log's head
});
test.after(async ({ s, push, bg }) => {
  await bg?.stop();
  await s?.close();
  await push?.close();
});

/** A reminder as the meetings scheduler appends it. */
async function fire(
  ctx: Ctx,
  recipients: string[],
  startsInSeconds: number,
): Promise<MeetingReminderFiredEvent['data']> {
  const meeting = randomUUID();
  const start = new Date(ctx.s.clock.now().getTime() + startsInSeconds * 1000).toISOString();
  const occurrence = start.slice(0, 16);
  const data: MeetingReminderFiredEvent['data'] = {
    meeting_id: meeting,
    occurrence_id: occurrence,
    channel_id: ctx.channel,
    title: 'Sprint planning',
    start,
    offset_minutes: 10,
    reminder_id: `${meeting}-${occurrence}-10`,
    recipient_ids: recipients,
    at: ctx.s.clock.now().toISOString(),
  };
  await ctx.s.platform.commands.record(
    `chat.meeting_reminder-${meeting}-${occurrence}-10`,
    { type: 'MeetingReminderFired', data },
    { actor: { kind: 'system', id: 'scheduler' }, correlationId: null },
    { expected: 'no_stream' },
  );
  return data;
}

test('a reminder: decrypted by the browser, VAPID verified, TTL to the start, Topic from the reminder id', async (ctx) => {
  const before = { a: ctx.push.to('/alice').length, b: ctx.push.to('/bob').length };
  const r = await fire(ctx, [ctx.alice.id, ctx.bob.id], 600);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  const [pushed] = (await ctx.push.waitFor('/alice', before.a + 1)).slice(before.a);
  assert.equal(JSON.parse(decrypt(pushed!, ctx.ab)), {
    type: 'meeting_reminder',
    meeting_id: r.meeting_id,
    occurrence_id: r.occurrence_id,
    channel_id: ctx.channel,
    title: 'Sprint planning',
    start: r.start,
    offset_minutes: 10,
  });
  const ttl = Number(pushed!.headers.ttl);
  assert.ok(ttl > 590 && ttl <= 600, `TTL ${ttl}`);
  assert.is(pushed!.headers.topic, pushTopic(`reminder:${r.reminder_id}`));
  assert.match(String(pushed!.headers.topic), /^[A-Za-z0-9_-]{1,32}$/);
  assert.equal([pushed!.headers['content-encoding'], pushed!.headers.urgency], ['aes128gcm', 'high']);
  const claims = vapidClaims(pushed!, ctx.publicKey);
  assert.equal([claims.aud, claims.sub], [ctx.push.origin, 'mailto:ops@orchard.test']);
  assert.ok(claims.exp * 1000 > Date.now() && claims.exp * 1000 <= Date.now() + 24 * 3600_000);
  // Bob's browser decrypts its own copy; Alice's keys cannot open it.
  const bobs = (await ctx.push.waitFor('/bob', before.b + 1)).slice(before.b);
  assert.is(JSON.parse(decrypt(bobs[0]!, ctx.bb)).meeting_id, r.meeting_id);
  assert.throws(() => decrypt(bobs[0]!, ctx.ab));
});

test('a reminder for a meeting that has started is not pushed; users without a subscription are skipped', async (ctx) => {
  const carol = await ctx.sp.register('carol');
  const before = ctx.push.received.length;
  await fire(ctx, [ctx.alice.id, carol.id], -60);
  await fire(ctx, [carol.id], 300);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  assert.is(ctx.push.received.length, before);
});

test('a mention pushes the channel and the sender to the mentioned member, never the message; not to the sender', async (ctx) => {
  const before = { a: ctx.push.to('/alice').length, b: ctx.push.to('/bob').length };
  await ctx.sp.post(ctx.alice, ctx.channel, 'c2VjcmV0LWNpcGhlcnRleHQ=', { mentions: [ctx.bob.id, ctx.alice.id] });
  await ctx.sp.post(ctx.alice, ctx.channel, 'bm8tbWVudGlvbnM=');
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  const [pushed] = (await ctx.push.waitFor('/bob', before.b + 1)).slice(before.b);
  const text = decrypt(pushed!, ctx.bb);
  assert.equal(JSON.parse(text), {
    type: 'mention',
    channel_id: ctx.channel,
    channel_name: 'planning',
    sender_id: ctx.alice.id,
    sender_name: ctx.alice.username,
  });
  assert.not.ok(text.includes('c2VjcmV0'), 'no ciphertext');
  assert.is(pushed!.headers.topic, pushTopic(`mention:${ctx.channel}`));
  assert.is(Number(pushed!.headers.ttl), 24 * 3600);
  assert.is(ctx.push.to('/bob').length, before.b + 1, 'a post without mentions pushes nothing');
  assert.is(ctx.push.to('/alice').length, before.a, 'the sender is not notified of their own mention');
});

test("a webhook post mentioning a member pushes too, as the webhook's name (the bots/admin issue's mention rule)", async (ctx) => {
  const before = ctx.push.to('/bob').length;
  const hook = await ctx.sp.ok(ctx.alice, 'POST', `/api/channels/${ctx.channel}/webhooks`, { name: 'CI' }, 201);
  const r = await http(`${ctx.sp.base}/api/webhooks/execute/${hook.token}`, {
    method: 'POST',
    json: { content: `build broke, @${ctx.bob.username} please look`, username: 'ci-bot' },
  });
  assert.is(r.status, 201, r.text);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  const [pushed] = (await ctx.push.waitFor('/bob', before + 1)).slice(before);
  const text = decrypt(pushed!, ctx.bb);
  assert.equal(JSON.parse(text), {
    type: 'mention',
    channel_id: ctx.channel,
    channel_name: 'planning',
    sender_id: hook.id,
    sender_name: 'ci-bot',
  });
  assert.not.ok(text.includes('build broke'), 'no content');
});

test('410 and 404 from the push service drop the subscription (an event); other failures keep it', async (ctx) => {
  const dave = await ctx.sp.register('dave');
  const erin = await ctx.sp.register('erin');
  const frank = await ctx.sp.register('frank');
  for (const [who, p] of [
    [dave, '/dave'],
    [erin, '/erin'],
    [frank, '/frank'],
  ] as const) {
    await ctx.sp.ok(who, 'POST', '/api/push/subscriptions', { endpoint: ctx.push.url(p), keys: browser().keys }, 201);
  }
  ctx.push.status.set('/dave', 410);
  ctx.push.status.set('/erin', 404);
  ctx.push.status.set('/frank', 500);
  await fire(ctx, [dave.id, erin.id, frank.id], 900);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  await ctx.push.waitFor('/dave', 1);
  await ctx.push.waitFor('/erin', 1);
  await ctx.push.waitFor('/frank', 1);
  const removed = (
    await ctx.s.db.pool.query(
      `SELECT data->>'user_id' AS user_id, data->>'reason' AS reason, (data->>'status')::int AS status FROM events WHERE type = 'PushSubscriptionRemoved' AND data->>'reason' = 'gone'`,
    )
  ).rows;
  assert.equal(
    removed.map((r) => [r.user_id, r.status]).sort(),
    [
      [dave.id, 410],
      [erin.id, 404],
    ].sort(),
  );
  // The removals are in the log; each read model row goes once the projection has applied it.
  const listed = async (who: typeof dave) =>
    (await ctx.sp.ok(who, 'GET', '/api/push/subscriptions')).subscriptions.length;
  await until(
    'the removed subscriptions unlisted',
    async () => (await listed(dave)) + (await listed(erin)) === 0,
    20_000,
    100,
  );
  assert.equal((await ctx.sp.ok(dave, 'GET', '/api/push/subscriptions')).subscriptions, []);
  assert.equal((await ctx.sp.ok(erin, 'GET', '/api/push/subscriptions')).subscriptions, []);
  assert.is((await ctx.sp.ok(frank, 'GET', '/api/push/subscriptions')).subscriptions.length, 1);
  assert.ok(ctx.s.logLines.some((l) => l.includes('push_rejected') && l.includes('"status":500')));
  assert.not.ok(
    ctx.s.logLines.some((l) => l.includes(`:${ctx.push.port}/`)),
    'no endpoint in the log lines',
  );
});

test('checkpointed: after a restart nothing is resent and what came meanwhile is sent once', async (ctx) => {
  const before = ctx.push.to('/alice').length;
  await fire(ctx, [ctx.alice.id], 1200);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  await ctx.push.waitFor('/alice', before + 1);
  await ctx.bg.stop();
  const missed = await fire(ctx, [ctx.alice.id], 1200);
  await ctx.s.restart();
  ctx.bg = backgroundOf(ctx.s.platform);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  const pushed = await ctx.push.waitFor('/alice', before + 2);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  assert.is(ctx.push.to('/alice').length, before + 2);
  assert.is(JSON.parse(decrypt(pushed.at(-1)!, ctx.ab)).meeting_id, missed.meeting_id);
});

test.run();
