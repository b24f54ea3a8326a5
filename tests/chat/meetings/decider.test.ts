// The meeting, reminder and feed-token deciders given/when/then, and the next-reminder order
// (cursor, cancelled and moved occurrences, the floor after a skip).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { meetingDecider } from '../../../domain/chat/meetings/decider.ts';
import type { MeetingEvent } from '../../../domain/chat/meetings/events.ts';
import { nextReminder, reminderDecider } from '../../../domain/chat/meetings/reminders.ts';
import { calendarFeedDecider } from '../../../domain/chat/calendar-feeds/decider.ts';
import { spec } from '../../support/given-when-then.ts';

const test = suite('chat meetings: deciders');
const meeting = spec(meetingDecider);
const M = '11111111-1111-4111-8111-111111111111';
const CH = '22222222-2222-4222-8222-222222222222';
const U = '33333333-3333-4333-8333-333333333333';
const at = '2027-01-01T00:00:00.000Z';
const series = {
  title: 'Standup',
  description: '',
  start: '2027-01-04T09:00',
  time_zone: 'Europe/Berlin',
  duration_minutes: 30,
  rrule: 'FREQ=WEEKLY;BYDAY=MO',
  reminders: [10],
  location: null,
};
const scheduled: MeetingEvent = {
  type: 'MeetingScheduled',
  data: { meeting_id: M, channel_id: CH, creator_id: U, ...series, at },
};

test('schedule: refused rules and fields; reminders sorted', () => {
  const schedule = { type: 'Schedule' as const, id: M, channel_id: CH, creator_id: U, at, ...series };
  meeting([])
    .when({ ...schedule, rrule: 'FREQ=HOURLY' })
    .thenError('unsupported_rrule');
  meeting([])
    .when({ ...schedule, time_zone: 'Nowhere/City' })
    .thenError('validation_failed');
  meeting([])
    .when({ ...schedule, reminders: [5, 5] })
    .thenError('validation_failed');
  meeting([])
    .when({ ...schedule, reminders: [60, 5] })
    .then([
      {
        type: 'MeetingScheduled',
        data: { meeting_id: M, channel_id: CH, creator_id: U, ...series, reminders: [5, 60], at },
      },
    ]);
  meeting([scheduled]).when(schedule).thenError('meeting_exists');
});

test('writes: allowed only; nothing changed is no event; a timing change resets exceptions', () => {
  meeting([scheduled])
    .when({ type: 'Update', changes: { title: 'x' }, allowed: false, by: U, at })
    .thenError('insufficient_role');
  meeting([scheduled])
    .when({ type: 'Update', changes: { title: 'Standup' }, allowed: true, by: U, at })
    .then([]);
  const cancelled: MeetingEvent = {
    type: 'MeetingOccurrenceCancelled',
    data: { meeting_id: M, channel_id: CH, occurrence_id: '20270111T080000Z', sequence: 1, by: U, at },
  };
  meeting([scheduled, cancelled])
    .when({ type: 'Update', changes: { start: '2027-01-04T10:00' }, allowed: true, by: U, at })
    .then((events) => {
      assert.equal(
        [events[0]!.type, (events[0]!.data as { resets_occurrences: boolean }).resets_occurrences],
        ['MeetingUpdated', true],
      );
    });
  meeting([scheduled, cancelled])
    .when({ type: 'CancelOccurrence', occurrence_id: '20270111T080000Z', allowed: true, by: U, at })
    .thenError('occurrence_cancelled');
  meeting([scheduled])
    .when({ type: 'CancelOccurrence', occurrence_id: '20270112T080000Z', allowed: true, by: U, at })
    .thenError('occurrence_not_found');
  meeting([scheduled, { type: 'MeetingCancelled', data: { meeting_id: M, channel_id: CH, sequence: 1, by: U, at } }])
    .when({ type: 'Rsvp', user_id: U, occurrence_id: null, status: 'going', at })
    .thenError('meeting_cancelled');
  meeting([])
    .when({ type: 'Rsvp', user_id: U, occurrence_id: null, status: 'going', at })
    .thenError('meeting_not_found');
});

test('occurrence edits record only what differs from the occurrence as it stands; cancel ends the series', () => {
  const occurrence = '20270111T080000Z';
  const moved: MeetingEvent = {
    type: 'MeetingOccurrenceUpdated',
    data: {
      meeting_id: M,
      channel_id: CH,
      occurrence_id: occurrence,
      changes: { title: 'Retro' },
      sequence: 1,
      by: U,
      at,
    },
  };
  meeting([scheduled])
    .when({
      type: 'UpdateOccurrence',
      occurrence_id: occurrence,
      changes: { title: 'Retro', location: null },
      allowed: true,
      by: U,
      at,
    })
    .then([moved]);
  meeting([scheduled, moved])
    .when({
      type: 'UpdateOccurrence',
      occurrence_id: occurrence,
      changes: { title: 'Retro' },
      allowed: true,
      by: U,
      at,
    })
    .then([]);
  meeting([scheduled])
    .when({ type: 'UpdateOccurrence', occurrence_id: occurrence, changes: { title: 'x' }, allowed: false, by: U, at })
    .thenError('insufficient_role');
  meeting([scheduled])
    .when({
      type: 'UpdateOccurrence',
      occurrence_id: '20270112T080000Z',
      changes: { title: 'x' },
      allowed: true,
      by: U,
      at,
    })
    .thenError('occurrence_not_found');
  const cancelled: MeetingEvent = {
    type: 'MeetingCancelled',
    data: { meeting_id: M, channel_id: CH, sequence: 1, by: U, at },
  };
  meeting([scheduled]).when({ type: 'Cancel', allowed: true, by: U, at }).then([cancelled]);
  meeting([scheduled]).when({ type: 'Cancel', allowed: false, by: U, at }).thenError('insufficient_role');
  meeting([scheduled, cancelled]).when({ type: 'Cancel', allowed: true, by: U, at }).thenError('meeting_cancelled');
});

test('skips are decided once; a reminder fires once', () => {
  const skip = {
    type: 'SkipReminder' as const,
    occurrence_id: '20270111T080000Z',
    start: '2027-01-11T08:00:00.000Z',
    offset_minutes: 10,
    reason: 'started' as const,
    at,
  };
  meeting([scheduled])
    .when(skip)
    .then((events) => assert.is(events.length, 1));
  meeting([
    scheduled,
    {
      type: 'MeetingReminderSkipped',
      data: {
        meeting_id: M,
        channel_id: CH,
        occurrence_id: skip.occurrence_id,
        start: skip.start,
        offset_minutes: 10,
        reason: 'started',
        at,
      },
    },
  ])
    .when(skip)
    .then([]);
  const data = {
    meeting_id: M,
    occurrence_id: '20270111T080000Z',
    channel_id: CH,
    title: 'T',
    start: skip.start,
    offset_minutes: 10,
    recipient_ids: [U],
    at,
  };
  spec(reminderDecider)([])
    .when({ type: 'Fire', data })
    .then([{ type: 'MeetingReminderFired', data: { ...data, reminder_id: `${M}-20270111T080000Z-10` } }]);
  spec(reminderDecider)([{ type: 'MeetingReminderFired', data: { ...data, reminder_id: 'x' } }])
    .when({ type: 'Fire', data })
    .thenError('reminder_fired');
});

test('next reminder: ordered by fire time, past the cursor and the floor, skipping cancelled, following moved occurrences', () => {
  const s = {
    ...series,
    reminders: [10, 60],
    cancelled_occurrences: new Set(['20270111T080000Z']),
    overrides: new Map([['20270118T080000Z', { start: '2027-01-17T12:00' }]]),
  };
  const cursor = (iso: string): [number, number, number] => [
    Date.parse(iso),
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER,
  ];
  assert.equal(nextReminder(s, cursor('2027-01-04T06:00:00Z'), 0), {
    occurrence_id: '20270104T080000Z',
    start: '2027-01-04T08:00:00.000Z',
    offset_minutes: 60,
    fire_at: '2027-01-04T07:00:00.000Z',
  });
  assert.equal(
    nextReminder(s, [Date.parse('2027-01-04T07:00:00Z'), Date.parse('2027-01-04T08:00:00Z'), 60], 0)?.offset_minutes,
    10,
  );
  // After the 4th: the 11th is cancelled, the 18th moved to the 17th 12:00 (11:00Z).
  assert.equal(nextReminder(s, cursor('2027-01-05T00:00:00Z'), 0), {
    occurrence_id: '20270118T080000Z',
    start: '2027-01-17T11:00:00.000Z',
    offset_minutes: 60,
    fire_at: '2027-01-17T10:00:00.000Z',
  });
  // A floor past the 17th's start leaves the 25th.
  assert.equal(
    nextReminder(s, cursor('2027-01-05T00:00:00Z'), Date.parse('2027-01-17T11:00:00Z'))?.occurrence_id,
    '20270125T080000Z',
  );
  assert.is(nextReminder({ ...s, rrule: null, overrides: new Map() }, cursor('2027-01-05T00:00:00Z'), 0), null);
});

test('feed tokens: a limit, revoked by the owner only, once', () => {
  const feed = spec(calendarFeedDecider);
  const create = {
    type: 'Create' as const,
    token_id: M,
    user_id: U,
    token_hash: 'h',
    channel_id: null,
    label: null,
    live_tokens: 0,
    at,
  };
  feed([])
    .when({ ...create, live_tokens: 20 })
    .thenError('feed_token_limit_reached');
  const created = {
    type: 'CalendarFeedTokenCreated' as const,
    data: { token_id: M, user_id: U, token_hash: 'h', channel_id: null, label: null, at },
  };
  feed([]).when(create).then([created]);
  feed([created]).when({ type: 'Revoke', user_id: CH, at }).thenError('feed_token_not_found');
  feed([created, { type: 'CalendarFeedTokenRevoked', data: { token_id: M, user_id: U, at } }])
    .when({ type: 'Revoke', user_id: U, at })
    .thenError('feed_token_not_found');
});

test.run();
