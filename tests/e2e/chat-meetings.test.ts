// Meeting reminders end to end, two real server processes on one database: 100 meetings with two
// reminders each, all due at once, fire exactly 200 times (one `MeetingReminderFired` per
// reminder stream), and a member's socket on either instance hears `MeetingReminder` for each.
// The meetings are appended through the decider with a creation time 20 minutes back, so their
// reminders are due now while the meetings still lie ahead.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Temporal } from 'temporal-polyfill';
import { loggedEvents } from '../support/services.ts';
import { connectWs } from '../support/ws.ts';
import { sleep, startTwoInstances, stopTwoInstances, type TwoInstances } from '../support/two-chat-instances.ts';
import { until } from '../support/until.ts';
import { mapLimit } from '../../infra/scheduler/scheduler.ts';
import { meetingDecider } from '../../domain/chat/meetings/decider.ts';
import { meetingStream } from '../../domain/chat/streams.ts';

type Ctx = TwoInstances;
const test = suite<Ctx>('e2e: meeting reminders on two instances');
test.before(async (ctx) => {
  Object.assign(ctx, await startTwoInstances('chat_meetings_e2e', 'Meet'));
});
test.after((ctx) => stopTwoInstances(ctx));

test('100 meetings x 2 reminders due at once, two instances: exactly 200 fired, each heard on /api/ws', async ({
  a,
  b,
  seed,
  owner,
  ann,
  chid,
}) => {
  // Sockets on both instances, one per member.
  const wsAnn = await connectWs(b.url);
  wsAnn.send({ type: 'Authenticate', token: ann.access });
  await wsAnn.next((f) => f.type === 'Authenticated');
  const wsOwner = await connectWs(a.url);
  wsOwner.send({ type: 'Authenticate', token: owner.access });
  await wsOwner.next((f) => f.type === 'Authenticated');

  const now = Date.now();
  const start = Temporal.Instant.fromEpochMilliseconds(now + 30 * 60_000)
    .toZonedDateTimeISO('UTC')
    .toPlainDateTime()
    .toString({ smallestUnit: 'minute' });
  const at = new Date(now - 40 * 60_000).toISOString();
  const ids = Array.from({ length: 100 }, () => randomUUID());
  await mapLimit(ids, 16, async (id) => {
    await seed.commands.run(
      meetingStream(id),
      meetingDecider,
      {
        type: 'Schedule',
        id,
        channel_id: chid,
        creator_id: ann.id,
        title: `M ${id.slice(0, 4)}`,
        description: '',
        start,
        time_zone: 'UTC',
        duration_minutes: 30,
        rrule: null,
        reminders: [35, 32],
        location: null,
        at,
      },
      { actor: { kind: 'user', id: ann.id }, correlationId: null },
      { awaitProjections: false },
    );
  });
  const fired = async () =>
    (await loggedEvents(seed, { eventTypes: ['MeetingReminderFired'] })).filter((e) =>
      (ids as string[]).includes(e.data.meeting_id as string),
    );
  const count = async () => {
    const events = await fired();
    return { events: events.length, streams: new Set(events.map((e) => e.stream)).size };
  };
  await until('200 reminders fired', async () => ((await count()).events >= 200 ? true : false));
  await sleep(3000);
  assert.equal(await count(), { events: 200, streams: 200 });
  assert.ok(
    (await fired()).every(
      (r) => [...(r.data.recipient_ids as string[])].sort().join() === [owner.id, ann.id].sort().join(),
    ),
    'both members',
  );

  // Each socket hears each reminder once.
  for (const ws of [wsAnn, wsOwner]) {
    const heard = new Set<string>();
    while (heard.size < 200) {
      const f = await ws.next((x) => x.type === 'MeetingReminder', 60_000);
      assert.ok(!heard.has(f.reminder_id), `once: ${f.reminder_id}`);
      assert.ok(ids.includes(f.meeting_id));
      assert.equal([f.channel_id, typeof f.title, f.start.startsWith(start.slice(0, 10))], [chid, 'string', true]);
      heard.add(f.reminder_id);
    }
  }
  wsAnn.close();
  wsOwner.close();
});

test.run();
