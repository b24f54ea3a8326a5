// Meetings through real HTTP: schedule (validation, defaults, unsupported_rrule, who may), list
// occurrences (DST-correct, range limit, RSVPs), PATCH series and occurrence, cancel an occurrence
// and a meeting, RSVPs (the occurrence beats the series), authorisation route by route; reminders
// fired by the scheduler once, to members who had not declined, skipped once the meeting started;
// every command an event, and rebuild equals live.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Temporal } from 'temporal-polyfill';
import { MEETING_EVENT_TYPES, REMINDER_EVENT_TYPES } from '../../../domain/chat/meetings/events.ts';
import { CALENDAR_FEED_EVENT_TYPES } from '../../../domain/chat/calendar-feeds/events.ts';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import type { TestServices } from '../../support/services.ts';
import type { Spaces } from '../../support/spaces.ts';
import { startChannelWorld, stopChannelWorld, type ChannelWorld } from '../../support/channel-world.ts';
import { settle } from '../../support/schedule.ts';
import { until } from '../../support/until.ts';
import { Scheduler } from '../../../infra/scheduler/scheduler.ts';
import { meetingReminderHandler } from '../../../api/chat/meetings/fire.ts';

type Ctx = ChannelWorld;
const test = suite<Ctx>('chat meetings');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_meetings'));
});
test.after((ctx) => stopChannelWorld(ctx));

/** Access tokens last 15 minutes: after moving the clock past that, sign in again. */
async function relogin(sp: Spaces, ...accounts: ChatAccount[]): Promise<void> {
  for (const a of accounts)
    a.access = (
      await sp.ok(null, 'POST', '/api/auth/login', { username: a.username, password: a.password })
    ).access_token;
}

const NOPE = '00000000-0000-4000-8000-000000000000';
const weekly = {
  title: 'Standup',
  start: '2027-01-04T09:00',
  time_zone: 'Europe/Berlin',
  rrule: 'FREQ=WEEKLY;BYDAY=MO',
};
/** Local wall clock `minutes` from the platform's now, in `zone`, to the minute. */
const localIn = (s: TestServices, minutes: number, zone = 'UTC') =>
  Temporal.Instant.fromEpochMilliseconds(s.clock.now().getTime() + minutes * 60_000)
    .toZonedDateTimeISO(zone)
    .toPlainDateTime()
    .toString({ smallestUnit: 'minute' });

test('schedule: validation, unsupported_rrule, defaults, who may, the record', async ({ sp, ann, out, chid }) => {
  const p = (by: ChatAccount | null, body: unknown, ch = chid) =>
    sp.call(by, 'POST', `/api/channels/${ch}/meetings`, body);
  expectError(await p(null, weekly), 401);
  expectError(await p(out, weekly), 403);
  expectError(await p(ann, weekly, NOPE), 404);
  expectError(await p(ann, { ...weekly, title: '' }), 400);
  expectError(await p(ann, { ...weekly, title: 'x'.repeat(201) }), 400);
  expectError(await p(ann, { ...weekly, start: '2027-01-04 09:00' }), 400);
  expectError(await p(ann, { ...weekly, time_zone: 'Mars/Olympus' }), 400);
  expectError(await p(ann, { ...weekly, duration_minutes: 0 }), 400);
  expectError(await p(ann, { ...weekly, reminders: [0] }), 400);
  expectError(await p(ann, { ...weekly, reminders: [10, 10] }), 400);
  expectError(await p(ann, { ...weekly, extra: 1 }), 400);
  for (const rrule of ['FREQ=HOURLY', 'FREQ=MINUTELY', 'FREQ=SECONDLY', 'nonsense', 'FREQ=DAILY;BYHOUR=3']) {
    const r = await p(ann, { ...weekly, rrule });
    expectError(r, 400);
    assert.is(r.body.code, 'unsupported_rrule', rrule);
  }
  const m = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { ...weekly, rrule: 'RRULE:FREQ=WEEKLY;BYDAY=MO' },
    201,
  );
  assert.equal(Object.keys(m).sort(), [
    'cancelled',
    'channel_id',
    'created_at',
    'creator_id',
    'description',
    'duration_minutes',
    'id',
    'location',
    'next_occurrence',
    'recurrence_text',
    'reminders',
    'rrule',
    'sequence',
    'start',
    'time_zone',
    'title',
    'updated_at',
  ]);
  assert.equal(
    [m.duration_minutes, m.reminders, m.rrule, m.description, m.location, m.creator_id, m.recurrence_text, m.cancelled],
    [30, [10], 'FREQ=WEEKLY;BYDAY=MO', '', null, ann.id, 'every week on Monday at 9 AM', false],
  );
  assert.ok(m.next_occurrence && m.next_occurrence.start_local.endsWith('T09:00'), JSON.stringify(m.next_occurrence));
  assert.equal(await sp.ok(ann, 'GET', `/api/meetings/${m.id}`), m);
  expectError(await sp.call(out, 'GET', `/api/meetings/${m.id}`), 403);
  expectError(await sp.call(ann, 'GET', `/api/meetings/${NOPE}`), 404);
  expectError(await sp.call(ann, 'GET', '/api/meetings/nope'), 404);
  const once = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { title: 'Once', start: '2027-05-01T10:00', time_zone: 'Asia/Tokyo' },
    201,
  );
  assert.equal([once.rrule, once.recurrence_text, once.next_occurrence.start], [null, 'once', '2027-05-01T01:00:00Z']);
});

test('list occurrences: DST-correct, range limit, members only, RSVPs with occurrence beating series', async ({
  sp,
  ann,
  bob,
  out,
  owner,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob], 'list');
  const m = await sp.ok(ann, 'POST', `/api/channels/${chid}/meetings`, weekly, 201);
  const list = (by: ChatAccount, from: string, to: string) =>
    sp.call(by, 'GET', `/api/channels/${chid}/meetings?from=${from}&to=${to}`);
  expectError(await list(out, '2027-03-22T00:00:00Z', '2027-03-30T00:00:00Z'), 403);
  const long = await list(ann, '2027-01-01T00:00:00Z', '2028-01-03T00:00:00Z');
  expectError(long, 400);
  assert.is(long.body.code, 'range_too_long');
  expectError(await list(ann, '2027-03-30T00:00:00Z', '2027-03-22T00:00:00Z'), 400);
  assert.is((await list(ann, '2027-01-01T00:00:00Z', '2028-01-01T00:00:00Z')).status, 200, '365 days');
  const spring = (await list(ann, '2027-03-22T00:00:00Z', '2027-03-30T00:00:00Z')).body;
  assert.equal(
    spring.occurrences.map((o: any) => [o.start, o.start_local, o.end]),
    [
      ['2027-03-22T08:00:00Z', '2027-03-22T09:00', '2027-03-22T08:30:00Z'],
      ['2027-03-29T07:00:00Z', '2027-03-29T09:00', '2027-03-29T07:30:00Z'],
    ],
  );
  const autumn = (await list(ann, '2027-10-25T00:00:00Z', '2027-11-02T00:00:00Z')).body;
  assert.equal(
    autumn.occurrences.map((o: any) => o.start),
    ['2027-10-25T07:00:00Z', '2027-11-01T08:00:00Z'],
  );
  const o1 = spring.occurrences[0];
  assert.equal(Object.keys(o1).sort(), [
    'cancelled',
    'end',
    'location',
    'meeting_id',
    'my_rsvp',
    'occurrence_id',
    'rsvp_counts',
    'start',
    'start_local',
    'title',
  ]);
  assert.equal(
    [o1.meeting_id, o1.occurrence_id, o1.cancelled, o1.my_rsvp, o1.rsvp_counts],
    [m.id, '20270322T080000Z', false, null, { going: 0, maybe: 0, declined: 0 }],
  );

  // RSVPs: bob going for the series, declined for one occurrence; ann maybe.
  const rsvp = (by: ChatAccount, body: unknown) => sp.call(by, 'PUT', `/api/meetings/${m.id}/rsvp`, body);
  expectError(await rsvp(out, { status: 'going' }), 403);
  expectError(await rsvp(bob, { status: 'perhaps' }), 400);
  const missing = await rsvp(bob, { status: 'going', occurrence_id: '20270323T080000Z' });
  expectError(missing, 404);
  assert.is(missing.body.code, 'occurrence_not_found');
  expectError(await sp.call(bob, 'PUT', `/api/meetings/${NOPE}/rsvp`, { status: 'going' }), 404);
  let r = await sp.ok(bob, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'going' });
  assert.equal(
    [r.occurrence_id, r.rsvps.map((x: any) => [x.user_id, x.status, x.scope]), r.counts],
    [null, [[bob.id, 'going', 'series']], { going: 1, maybe: 0, declined: 0 }],
  );
  r = await sp.ok(bob, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'declined', occurrence_id: '20270329T070000Z' });
  assert.equal(
    r.rsvps.map((x: any) => [x.user_id, x.status, x.scope]),
    [[bob.id, 'declined', 'occurrence']],
  );
  await sp.ok(ann, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'maybe' });
  const after = (await list(bob, '2027-03-22T00:00:00Z', '2027-03-30T00:00:00Z')).body.occurrences;
  assert.equal(
    after.map((o: any) => [o.my_rsvp, o.rsvp_counts]),
    [
      ['going', { going: 1, maybe: 1, declined: 0 }],
      ['declined', { going: 0, maybe: 1, declined: 1 }],
    ],
  );
  const rs = await sp.ok(ann, 'GET', `/api/meetings/${m.id}/rsvps?occurrence_id=20270329T070000Z`);
  assert.equal(
    rs.rsvps.map((x: any) => [x.user_id, x.status, x.scope]).sort(),
    [
      [ann.id, 'maybe', 'series'],
      [bob.id, 'declined', 'occurrence'],
    ].sort(),
  );
  const series = await sp.ok(ann, 'GET', `/api/meetings/${m.id}/rsvps`);
  assert.equal(series.counts, { going: 1, maybe: 1, declined: 0 });
  expectError(await sp.call(out, 'GET', `/api/meetings/${m.id}/rsvps`), 403);
  expectError(await sp.call(ann, 'GET', `/api/meetings/${m.id}/rsvps?occurrence_id=20270330T070000Z`), 404);
});

test('PATCH series and occurrence, cancel an occurrence and a meeting: who may, codes, sequence', async ({
  sp,
  ann,
  bob,
  owner,
  out,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob], 'edit');
  const m = await sp.ok(ann, 'POST', `/api/channels/${chid}/meetings`, weekly, 201);
  const patch = (by: ChatAccount, body: unknown, id = m.id) => sp.call(by, 'PATCH', `/api/meetings/${id}`, body);
  expectError(await patch(bob, { title: 'Mine' }), 403);
  expectError(await patch(out, { title: 'Mine' }), 403);
  expectError(await patch(ann, { title: 'x', bogus: 1 }), 400);
  expectError(await patch(ann, { rrule: 'FREQ=HOURLY' }), 400);
  expectError(await patch(ann, { title: 'x' }, NOPE), 404);
  expectError(await patch(ann, { scope: 'occurrence', title: 'x' }), 400);
  expectError(await patch(ann, { scope: 'occurrence', occurrence_id: '20270322T080000Z', rrule: 'FREQ=DAILY' }), 400);
  expectError(await patch(ann, { scope: 'occurrence', occurrence_id: '20270323T080000Z', title: 'x' }), 404);
  // The creator renames the series; the community owner (a manager) moves one occurrence.
  let v = await sp.ok(ann, 'PATCH', `/api/meetings/${m.id}`, {
    title: 'Daily-ish',
    duration_minutes: 45,
    location: 'Room 1',
  });
  assert.equal([v.title, v.duration_minutes, v.location, v.sequence], ['Daily-ish', 45, 'Room 1', 1]);
  v = await sp.ok(owner, 'PATCH', `/api/meetings/${m.id}`, {
    scope: 'occurrence',
    occurrence_id: '20270322T080000Z',
    start: '2027-03-24T14:00',
    title: 'Moved',
  });
  assert.is(v.sequence, 2);
  const list = async (from: string, to: string) =>
    (await sp.ok(bob, 'GET', `/api/channels/${chid}/meetings?from=${from}&to=${to}`)).occurrences;
  let occ = await list('2027-03-22T00:00:00Z', '2027-03-30T00:00:00Z');
  assert.equal(
    occ.map((o: any) => [o.occurrence_id, o.start, o.title, o.end]),
    [
      ['20270322T080000Z', '2027-03-24T13:00:00Z', 'Moved', '2027-03-24T13:45:00Z'],
      ['20270329T070000Z', '2027-03-29T07:00:00Z', 'Daily-ish', '2027-03-29T07:45:00Z'],
    ],
  );
  // Cancel one occurrence: listed as cancelled; again 409; RSVP to it 409.
  expectError(await sp.call(bob, 'DELETE', `/api/meetings/${m.id}/occurrences/20270329T070000Z`), 403);
  expectError(await sp.call(ann, 'DELETE', `/api/meetings/${m.id}/occurrences/20270330T070000Z`), 404);
  await sp.ok(ann, 'DELETE', `/api/meetings/${m.id}/occurrences/20270329T070000Z`, undefined, 204);
  const again = await sp.call(ann, 'DELETE', `/api/meetings/${m.id}/occurrences/20270329T070000Z`);
  expectError(again, 409);
  assert.is(again.body.code, 'occurrence_cancelled');
  expectError(
    await sp.call(bob, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'going', occurrence_id: '20270329T070000Z' }),
    409,
  );
  occ = await list('2027-03-22T00:00:00Z', '2027-03-30T00:00:00Z');
  assert.equal(
    occ.map((o: any) => o.cancelled),
    [false, true],
  );
  // A series time change yields other occurrences: its exceptions go.
  v = await sp.ok(ann, 'PATCH', `/api/meetings/${m.id}`, { start: '2027-01-05T10:00', rrule: 'FREQ=WEEKLY;BYDAY=TU' });
  occ = await list('2027-03-22T00:00:00Z', '2027-03-31T00:00:00Z');
  assert.equal(
    occ.map((o: any) => [o.start_local, o.cancelled, o.title]),
    [
      ['2027-03-23T10:00', false, 'Daily-ish'],
      ['2027-03-30T10:00', false, 'Daily-ish'],
    ],
  );
  // Cancel the meeting: bob may not; ann may; then it is gone from the list, GET says cancelled, writes 409.
  expectError(await sp.call(bob, 'DELETE', `/api/meetings/${m.id}`), 403);
  await sp.ok(ann, 'DELETE', `/api/meetings/${m.id}`, undefined, 204);
  const gone = await sp.call(ann, 'DELETE', `/api/meetings/${m.id}`);
  expectError(gone, 409);
  assert.is(gone.body.code, 'meeting_cancelled');
  expectError(await patch(ann, { title: 'back' }), 409);
  const after = await sp.ok(bob, 'GET', `/api/meetings/${m.id}`);
  assert.equal([after.cancelled, after.next_occurrence], [true, null]);
  assert.equal(await list('2027-03-22T00:00:00Z', '2027-03-31T00:00:00Z'), []);
});

test('reminders: fired once by the scheduler, to members who had not declined; skipped once the meeting started', async ({
  s,
  sp,
  bg,
  ann,
  bob,
  owner,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob], 'remind');
  // Starts in about an hour (UTC wall clock), reminders 30 and 10 minutes before.
  const start = localIn(s, 62);
  const m = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { title: 'Soon', start, time_zone: 'UTC', reminders: [30, 10] },
    201,
  );
  await sp.ok(bob, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'declined' });
  const fired = async () =>
    (
      await s.platform.pool.query(
        `SELECT stream_id, data FROM events WHERE type = 'MeetingReminderFired' AND data->>'meeting_id' = $1 ORDER BY position`,
        [m.id],
      )
    ).rows;
  await settle(s.platform, bg);
  assert.equal(await fired(), [], 'nothing due yet');
  s.clock.advance(33 * 60_000);
  await relogin(sp, ann, bob, owner);
  await settle(s.platform, bg);
  await settle(s.platform, bg);
  let rows = await fired();
  assert.is(rows.length, 1);
  const occurrenceId = m.next_occurrence.occurrence_id;
  assert.equal(rows[0].stream_id, `chat.meeting_reminder-${m.id}-${occurrenceId}-30`);
  const d = rows[0].data;
  assert.equal(
    [d.meeting_id, d.occurrence_id, d.channel_id, d.title, d.start, d.offset_minutes, d.reminder_id],
    [m.id, occurrenceId, chid, 'Soon', m.next_occurrence.start.replace('Z', '.000Z'), 30, `${m.id}-${occurrenceId}-30`],
  );
  assert.equal([...d.recipient_ids].sort(), [owner.id, ann.id].sort(), 'bob declined');
  // Bob changes his mind for this occurrence: the 10-minute reminder reaches him.
  await sp.ok(bob, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'going', occurrence_id: occurrenceId });
  s.clock.advance(20 * 60_000);
  await relogin(sp, ann, bob, owner);
  await settle(s.platform, bg);
  rows = await fired();
  assert.equal(
    rows.map((r) => r.data.offset_minutes),
    [30, 10],
  );
  assert.equal([...rows[1].data.recipient_ids].sort(), [owner.id, ann.id, bob.id].sort());
  // Firing the job again appends nothing: the stream exists.
  await sp.ok(ann, 'PATCH', `/api/meetings/${m.id}`, { description: 'agenda' });
  await settle(s.platform, bg);
  assert.is((await fired()).length, 2);

  // Missed while down: the start passes before any instance fires; skipped, once.
  const late = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { title: 'Missed', start: localIn(s, 30), time_zone: 'UTC', reminders: [5] },
    201,
  );
  s.clock.advance(40 * 60_000);
  await relogin(sp, ann, bob, owner);
  await settle(s.platform, bg);
  await settle(s.platform, bg);
  const lateRows = await s.platform.pool.query(
    `SELECT type, data FROM events WHERE type IN ('MeetingReminderFired', 'MeetingReminderSkipped') AND data->>'meeting_id' = $1`,
    [late.id],
  );
  assert.equal(
    lateRows.rows.map((r) => [r.type, r.data.reason]),
    [['MeetingReminderSkipped', 'started']],
  );
  const job = await s.platform.pool.query(`SELECT due_at FROM scheduled_jobs WHERE id = $1`, [
    `meeting_reminder:${late.id}`,
  ]);
  assert.is(job.rows[0].due_at, Infinity, 'nothing left to remind of');
});

test('the same due reminders fired by two schedulers whose leases lapse at once: each appended once', async ({
  s,
  sp,
  ann,
  owner,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann], 'race');
  const ids: string[] = [];
  for (let i = 0; i < 10; i++)
    ids.push(
      (
        await sp.ok(
          ann,
          'POST',
          `/api/channels/${chid}/meetings`,
          { title: `R${i}`, start: localIn(s, 30), time_zone: 'UTC', reminders: [20, 25] },
          201,
        )
      ).id,
    );
  s.clock.advance(6 * 60_000);
  const p = s.platform;
  const fire = { db: p.pool, commands: p.commands, log: p.log };
  // A 1 ms lease: each scheduler claims the jobs the other holds, so both fire every one.
  const [x, y] = [0, 1].map(
    () =>
      new Scheduler({
        pool: p.pool,
        clock: p.clock,
        log: p.log,
        leaseMs: 1,
        handlers: { meeting_reminder: meetingReminderHandler(fire) },
      }),
  );
  const count = async () =>
    (
      await p.pool.query<{ n: number; streams: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT stream_id)::int AS streams FROM events WHERE type = 'MeetingReminderFired' AND data->>'meeting_id' = ANY($1::text[])`,
        [ids],
      )
    ).rows[0]!;
  await until(
    'both schedulers through the reminders',
    async () => {
      await Promise.all([x!.tick(), y!.tick(), x!.tick(), y!.tick()]);
      return (await count()).n >= 10;
    },
    60_000,
    0,
  );
  await Promise.all([x!.tick(), y!.tick()]);
  assert.equal(await count(), { n: 10, streams: 10 }, 'the 25-minute reminders, once each');
  assert.ok(x!.fired + y!.fired >= 10);
  await relogin(sp, ann, owner);
});

test('every command an event; rebuild equals live (meetings, feed tokens, scheduler jobs)', async ({
  s,
  sp,
  ann,
  owner,
  gid,
  bob,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob], 'rebuild');
  const m = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { ...weekly, start: localIn(s, 60 * 24, 'Europe/Berlin'), reminders: [15, 60] },
    201,
  );
  const occ = (await sp.ok(ann, 'GET', `/api/channels/${chid}/meetings`)).occurrences;
  await sp.ok(ann, 'PATCH', `/api/meetings/${m.id}`, {
    scope: 'occurrence',
    occurrence_id: occ[1].occurrence_id,
    title: 'Special',
    location: 'Roof',
  });
  await sp.ok(ann, 'DELETE', `/api/meetings/${m.id}/occurrences/${occ[2].occurrence_id}`, undefined, 204);
  await sp.ok(bob, 'PUT', `/api/meetings/${m.id}/rsvp`, { status: 'maybe', occurrence_id: occ[1].occurrence_id });
  const gone = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/meetings`,
    { title: 'Gone', start: '2027-06-01T10:00', time_zone: 'America/New_York' },
    201,
  );
  await sp.ok(ann, 'DELETE', `/api/meetings/${gone.id}`, undefined, 204);
  const t = await sp.ok(ann, 'POST', '/api/calendar/feed-tokens', { label: 'phone' }, 201);
  await sp.ok(ann, 'DELETE', `/api/calendar/feed-tokens/${t.id}`, undefined, 204);
  await sp.ok(ann, 'POST', '/api/calendar/feed-tokens', { channel_id: chid }, 201);

  const { rows } = await s.platform.pool.query<{ type: string }>('SELECT DISTINCT type FROM events');
  const seen = new Set(rows.map((r) => r.type));
  assert.equal(
    [...MEETING_EVENT_TYPES, ...REMINDER_EVENT_TYPES, ...CALENDAR_FEED_EVENT_TYPES].filter((x) => !seen.has(x)),
    [],
  );

  const TABLES: Record<string, string> = {
    chat_meetings: 'SELECT * FROM chat_meetings ORDER BY id',
    chat_meeting_occurrences: 'SELECT * FROM chat_meeting_occurrences ORDER BY meeting_id, occurrence_id',
    chat_meeting_rsvps: 'SELECT * FROM chat_meeting_rsvps ORDER BY meeting_id, occurrence_id, user_id',
    chat_calendar_feed_tokens: 'SELECT * FROM chat_calendar_feed_tokens ORDER BY id',
    scheduled_jobs: 'SELECT id, kind, subject_id, due_at, data FROM scheduled_jobs ORDER BY id',
  };
  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(TABLES).map(async ([name, q]) => [name, (await s.platform.pool.query(q)).rows])),
    );
  const live = await snapshot();
  assert.ok(
    live.scheduled_jobs.some((j: any) => j.id === `meeting_reminder:${m.id}` && j.due_at instanceof Date),
    'the series has its next reminder',
  );
  await s.platform.engine.stop();
  for (const name of ['chat_meetings', 'chat_calendar_feed_tokens', 'scheduled_jobs'])
    assert.ok((await s.platform.engine.rebuild(name)) > 0, name);
  assert.equal(await snapshot(), live);
});

test.run();
