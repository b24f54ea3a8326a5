// Meeting recurrence in zones with DST, independent of the process's TZ: the examples
// (weekly Monday 09:00 and daily 02:30 Europe/Berlin), gaps and overlaps, refused rules.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  nextOccurrence,
  occurrenceId,
  occurrencesBetween,
  recurrenceText,
  zonedStart,
} from '../../../domain/shared/recurrence.ts';
import { DomainError } from '../../../domain/shared/decider.ts';

const test = suite('chat meetings: recurrence');
const utc = (zs: { toInstant(): { toString(): string } }[]) => zs.map((z) => z.toInstant().toString());

test('weekly Monday 09:00 Europe/Berlin keeps 09:00 local across both DST changes of 2027', () => {
  const series = { start: '2027-01-04T09:00', time_zone: 'Europe/Berlin', rrule: 'FREQ=WEEKLY;BYDAY=MO' };
  assert.equal(utc(occurrencesBetween(series, new Date('2027-03-22T00:00Z'), new Date('2027-03-30T00:00Z'))), [
    '2027-03-22T08:00:00Z',
    '2027-03-29T07:00:00Z',
  ]);
  assert.equal(utc(occurrencesBetween(series, new Date('2027-10-25T00:00Z'), new Date('2027-11-02T00:00Z'))), [
    '2027-10-25T07:00:00Z',
    '2027-11-01T08:00:00Z',
  ]);
  assert.is(nextOccurrence(series, new Date('2027-03-23T00:00Z'))!.toInstant().toString(), '2027-03-29T07:00:00Z');
  assert.is(recurrenceText(series), 'every week on Monday at 9 AM');
});

test('daily 02:30 Europe/Berlin: the spring gap moves it forward (01:30Z on 03-28), the autumn overlap takes the first (00:30Z on 10-31)', () => {
  const series = { start: '2027-01-01T02:30', time_zone: 'Europe/Berlin', rrule: 'FREQ=DAILY' };
  const spring = occurrencesBetween(series, new Date('2027-03-27T00:00Z'), new Date('2027-03-30T00:00Z'));
  assert.equal(utc(spring), ['2027-03-27T01:30:00Z', '2027-03-28T01:30:00Z', '2027-03-29T00:30:00Z']);
  assert.is(spring[1]!.toPlainDateTime().toString(), '2027-03-28T03:30:00');
  const autumn = occurrencesBetween(series, new Date('2027-10-30T00:00Z'), new Date('2027-11-01T00:00Z'));
  assert.equal(utc(autumn), ['2027-10-30T00:30:00Z', '2027-10-31T00:30:00Z']);
  assert.is(occurrenceId(spring[1]!), '20270328T013000Z');
});

test('the process TZ does not matter; a single meeting; refused rules are 400 unsupported_rrule', () => {
  const before = process.env.TZ;
  process.env.TZ = 'America/Los_Angeles';
  try {
    assert.is(zonedStart('2027-03-22T09:00', 'Europe/Berlin').toInstant().toString(), '2027-03-22T08:00:00Z');
  } finally {
    process.env.TZ = before;
  }
  assert.equal(
    utc(
      occurrencesBetween(
        { start: '2027-05-01T10:00', time_zone: 'Asia/Tokyo', rrule: null },
        new Date('2027-01-01Z'),
        new Date('2028-01-01Z'),
      ),
    ),
    ['2027-05-01T01:00:00Z'],
  );
  for (const rrule of [
    'FREQ=HOURLY',
    'FREQ=MINUTELY;INTERVAL=5',
    'FREQ=DAILY;BYHOUR=3',
    'nonsense',
    'FREQ=WEEKLY;BYDAY=XX',
  ]) {
    try {
      occurrencesBetween(
        { start: '2027-01-01T09:00', time_zone: 'UTC', rrule },
        new Date('2027-01-01Z'),
        new Date('2027-02-01Z'),
      );
      assert.unreachable(rrule);
    } catch (error) {
      assert.instance(error, DomainError);
      assert.is((error as DomainError).code, 'unsupported_rrule', rrule);
    }
  }
  assert.equal(
    utc(
      occurrencesBetween(
        { start: '2027-01-31T09:00', time_zone: 'America/New_York', rrule: 'FREQ=MONTHLY;COUNT=3' },
        new Date('2027-01-01Z'),
        new Date('2028-01-01Z'),
      ),
    ),
    ['2027-01-31T14:00:00Z', '2027-03-31T13:00:00Z', '2027-05-31T13:00:00Z'],
  );
});

test.run();
