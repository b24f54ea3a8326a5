// The scheduler end to end, with real server processes on one database:
// - two instances, 1,000 messages due within one second: exactly 1,000 delivered and posted;
// - kill -9 of one instance in the middle of a batch: still each exactly once (its leases
//   lapse after 30 s and the other instance claims them; the poster moves over);
// - every instance stopped past send_at: delivered once, late, when one starts again;
// - live poll events on /api/ws reach a socket on the other instance.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startChatProcess } from '../support/chat-process.ts';
import { postedCount, seedScheduled } from '../support/schedule.ts';
import { connectWs } from '../support/ws.ts';
import { call, sleep, startTwoInstances, stopTwoInstances, type TwoInstances } from '../support/two-chat-instances.ts';
import { until } from '../support/until.ts';

type Ctx = TwoInstances;
const test = suite<Ctx>('e2e: the chat scheduler on two instances');
test.before(async (ctx) => {
  Object.assign(ctx, await startTwoInstances('chat_schedule_e2e', 'Sched'));
});
test.after((ctx) => stopTwoInstances(ctx));

test('live poll events on /api/ws: created on one instance, heard on the other', async ({ a, b, owner, ann, chid }) => {
  const ws = await connectWs(b.url);
  ws.send({ type: 'Authenticate', token: ann.access });
  await ws.next((f) => f.type === 'Authenticated');
  ws.send({ type: 'Subscribe', channel_id: chid });
  await ws.next((f) => f.type === 'Subscribed');
  const poll = await call(
    a.url,
    owner,
    'POST',
    `/api/channels/${chid}/polls`,
    { question: 'Live?', options: ['yes', 'no'] },
    201,
  );
  const created = await ws.next((f) => f.type === 'PollCreated', 30_000);
  assert.equal(
    [created.channel_id, created.poll.id, created.poll.question, created.poll.options.length],
    [chid, poll.id, 'Live?', 2],
  );
  await call(a.url, owner, 'POST', `/api/polls/${poll.id}/vote`, { option_ids: [poll.options[0].option_id] });
  const updated = await ws.next((f) => f.type === 'PollUpdated', 30_000);
  assert.equal([updated.poll_id, updated.voters, updated.user_id, updated.results[0].votes], [poll.id, 1, owner.id, 1]);
  await call(a.url, owner, 'POST', `/api/polls/${poll.id}/close`);
  const closed = await ws.next((f) => f.type === 'PollClosed', 30_000);
  assert.equal([closed.poll_id, closed.reason, closed.voters], [poll.id, 'closed', 1]);
  ws.close();
});

test('two instances, 1,000 messages due within one second: exactly 1,000', async ({ seed, ann, chid }) => {
  const due = Date.now() + 20_000;
  const ids = await seedScheduled(seed, chid, ann.id, 1000, (i) => new Date(due + i));
  const counts = await until('1,000 posted', async () => {
    const c = await postedCount(seed, ids);
    return c.events >= 1000 ? c : false;
  });
  await sleep(2000);
  assert.equal(await postedCount(seed, ids), { events: 1000, streams: 1000, delivered: 1000 });
  assert.is(counts.streams, 1000);
});

test('kill -9 of one instance mid-batch: still exactly once', async (ctx) => {
  const due = Date.now() + 15_000;
  const ids = await seedScheduled(ctx.seed, ctx.chid, ctx.ann.id, 1000, (i) => new Date(due + i));
  await until('a first delivery', async () => ((await postedCount(ctx.seed, ids)).delivered > 0 ? true : false));
  await ctx.a.kill();
  await until(
    '1,000 posted after the kill',
    async () => ((await postedCount(ctx.seed, ids)).events >= 1000 ? true : false),
    240_000,
  );
  await sleep(2000);
  assert.equal(await postedCount(ctx.seed, ids), { events: 1000, streams: 1000, delivered: 1000 });
});

test('stopped past send_at: delivered once, late, when an instance starts again', async (ctx) => {
  await ctx.b.stop();
  const ids = await seedScheduled(ctx.seed, ctx.chid, ctx.ann.id, 3, () => new Date(Date.now() + 1_000));
  await sleep(15_000);
  assert.equal((await postedCount(ctx.seed, ids)).events, 0);
  ctx.a = await startChatProcess(ctx.db.url);
  await until('3 posted', async () => ((await postedCount(ctx.seed, ids)).events >= 3 ? true : false));
  await sleep(1000);
  assert.equal(await postedCount(ctx.seed, ids), { events: 3, streams: 3, delivered: 3 });
  const read = async (prefix: string, type: string) =>
    [...(await ctx.seed.store.readStreams(ids.map((id) => `${prefix}${id}`))).values()]
      .flat()
      .filter((e) => e.type === type);
  const delivered = await read('chat.scheduled_message-', 'ScheduledMessageDelivered');
  assert.is(delivered.length, 3);
  assert.ok(
    delivered.every((r) => r.data.late === true),
    JSON.stringify(delivered.map((r) => r.data.late)),
  );
  const messages = await read('chat.message-', 'MessagePosted');
  assert.is(messages.length, 3);
  assert.ok(messages.every((r) => typeof r.data.scheduled_for === 'string'));
});

test.run();
