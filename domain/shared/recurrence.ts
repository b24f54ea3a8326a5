// Meeting recurrence: an RFC 5545 RRULE expanded by `rrule-temporal` on `temporal-polyfill`, so
// each occurrence is a wall-clock time in the meeting's IANA zone (09:00 Europe/Berlin stays
// 09:00 across DST), whatever the process's TZ. Pure: no clock, no I/O.
//
// RFC 5545 §3.3.5 says a recurrence whose local time falls in a spring-forward gap is kept and
// read with the offset before the gap (02:30 becomes 03:30), and an ambiguous time in a
// fall-back overlap is the first one. rrule-temporal drops gap occurrences instead, so the rule
// is expanded over wall-clock times (its DTSTART in UTC, which has no DST) and each wall-clock
// time is then placed in the zone with Temporal's `compatible` disambiguation, which is exactly
// the RFC's rule. UNTIL (an instant) is turned into the zone's wall clock first.

import { Temporal } from 'temporal-polyfill';
import { RRuleTemporal } from 'rrule-temporal';
import { toText } from 'rrule-temporal/totext';
import { DomainError } from './decider.ts';

export const SUPPORTED_FREQ = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'] as const;

const unsupported = (message: string) =>
  new DomainError('invalid', 'unsupported_rrule', message, { code: 'unsupported_rrule' });

/** `YYYY-MM-DDTHH:mm` wall-clock in `timeZone` → the zoned instant (gap: later, overlap: earlier, per RFC 5545). */
export function zonedStart(local: string, timeZone: string): Temporal.ZonedDateTime {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local))
    throw new DomainError('invalid', 'validation_failed', 'start is a local time YYYY-MM-DDTHH:mm');
  try {
    return Temporal.PlainDateTime.from(local).toZonedDateTime(timeZone, { disambiguation: 'compatible' });
  } catch {
    throw new DomainError('invalid', 'validation_failed', 'start or time_zone is not valid');
  }
}

export function isTimeZone(timeZone: string): boolean {
  try {
    Temporal.Now.zonedDateTimeISO(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The rule's parts; refused (400 `unsupported_rrule`) unless DAILY to YEARLY and parseable. */
export function parseRule(rrule: string, start: Temporal.ZonedDateTime): RRuleTemporal {
  const wall = start.toPlainDateTime().toZonedDateTime('UTC');
  const body = rrule
    .replace(/^RRULE:/i, '')
    .trim()
    .replace(/UNTIL=(\d{8}T\d{6})Z/i, (_m, until: string) => {
      const instant = Temporal.Instant.from(
        `${until.slice(0, 4)}-${until.slice(4, 6)}-${until.slice(6, 11)}:${until.slice(11, 13)}:${until.slice(13, 15)}Z`,
      );
      return `UNTIL=${instant.toZonedDateTimeISO(start.timeZoneId).toPlainDateTime().toString().replace(/[-:]/g, '').slice(0, 15)}Z`;
    });
  if (!body || /[\r\n]/.test(body)) throw unsupported('rrule is one RRULE value');
  const freq = /(?:^|;)FREQ=([A-Z]+)/i.exec(body)?.[1]?.toUpperCase();
  if (!freq || !(SUPPORTED_FREQ as readonly string[]).includes(freq))
    throw unsupported('FREQ must be DAILY, WEEKLY, MONTHLY or YEARLY');
  if (/(?:^|;)(BYHOUR|BYMINUTE|BYSECOND|RSCALE|SKIP)=/i.test(body))
    throw unsupported('BYHOUR, BYMINUTE, BYSECOND, RSCALE and SKIP are not supported');
  try {
    const rule = new RRuleTemporal({ rruleString: body, dtstart: wall, strict: true });
    rule.next(new Date(wall.epochMilliseconds - 1), true);
    return rule;
  } catch (error) {
    throw unsupported(`rrule is not valid: ${(error as Error).message.slice(0, 200)}`);
  }
}

export interface Series {
  start: string;
  time_zone: string;
  rrule: string | null;
}

/** Wall clock and zone differ by at most this much (UTC-12 to UTC+14, with room). */
const SLACK_MS = 16 * 3600 * 1000;
const place = (wall: Temporal.ZonedDateTime, timeZone: string) =>
  wall.toPlainDateTime().toZonedDateTime(timeZone, { disambiguation: 'compatible' });

/** Occurrence starts (zoned) with start in [from, to), in order. A series without a rule has one. */
export function occurrencesBetween(series: Series, from: Date, to: Date): Temporal.ZonedDateTime[] {
  const start = zonedStart(series.start, series.time_zone);
  if (!series.rrule)
    return start.epochMilliseconds >= from.getTime() && start.epochMilliseconds < to.getTime() ? [start] : [];
  const rule = parseRule(series.rrule, start);
  return (
    rule.between(
      new Date(from.getTime() - SLACK_MS),
      new Date(to.getTime() + SLACK_MS),
      true,
    ) as Temporal.ZonedDateTime[]
  )
    .map((w) => place(w, series.time_zone))
    .filter((z) => z.epochMilliseconds >= from.getTime() && z.epochMilliseconds < to.getTime());
}

/** The first occurrence starting at or after `at`, or null once the series has ended. */
export function nextOccurrence(series: Series, at: Date): Temporal.ZonedDateTime | null {
  const start = zonedStart(series.start, series.time_zone);
  if (!series.rrule) return start.epochMilliseconds >= at.getTime() ? start : null;
  const rule = parseRule(series.rrule, start);
  for (
    let wall = rule.next(new Date(at.getTime() - SLACK_MS), true) as Temporal.ZonedDateTime | null;
    wall;
    wall = rule.next(new Date(wall.epochMilliseconds + 1), true) as Temporal.ZonedDateTime | null
  ) {
    const z = place(wall, series.time_zone);
    if (z.epochMilliseconds >= at.getTime()) return z;
  }
  return null;
}

/** An English description ("every week on Monday"). */
export function recurrenceText(series: Series): string {
  if (!series.rrule) return 'once';
  return toText(parseRule(series.rrule, zonedStart(series.start, series.time_zone)), 'en', {
    excludeTzAbbreviation: true,
  });
}

/** An occurrence's id: its original start in UTC, `YYYYMMDDTHHmmssZ` (the RECURRENCE-ID form). */
export const occurrenceId = (z: Temporal.ZonedDateTime) =>
  z.toInstant().toString().replace(/[-:]/g, '').replace(/\.\d+/, '');
