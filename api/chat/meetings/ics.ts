// iCalendar for meetings, by `ical-generator` with VTIMEZONEs from `@touch4it/ical-timezones`.
// Per meeting: one master VEVENT (UID `<meeting id>@chatsvc`, SEQUENCE, DTSTART in the meeting's
// zone, RRULE, EXDATE for each cancelled occurrence, a VALARM per reminder, STATUS:CANCELLED
// once the meeting is cancelled), and a VEVENT with RECURRENCE-ID for each changed occurrence.
// Times are Temporal ZonedDateTimes, which ical-generator writes as the zone's wall clock (a
// Date would be written in the process's TZ).

import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import { ICalAlarmType, ICalCalendar, ICalEventStatus } from 'ical-generator';
import type { Temporal } from 'temporal-polyfill';
import { occurrenceById, type Schedule } from '../../../domain/chat/meetings/occurrences.ts';
import { occurrenceId, occurrencesBetween, zonedStart } from '../../../domain/shared/recurrence.ts';
import type { MeetingRow } from '../../../projections/chat/meetings.ts';

export const ICS_TYPE = 'text/calendar; charset=utf-8';

const icsLocal = (z: Temporal.ZonedDateTime) =>
  z.toPlainDateTime().toString({ smallestUnit: 'second' }).replace(/[-:]/g, '');
const icsUtc = (z: Temporal.ZonedDateTime) => z.toInstant().toString().replace(/[-:]/g, '').replace(/\.\d+/, '');
const isUtc = (zone: string) => zone === 'UTC' || zone === 'Etc/UTC';

const DAY_MS = 86_400_000;

/**
 * Occurrences whose wall-clock time falls in a DST gap or overlap. RFC 5545 §3.3.5 reads a gap
 * time with the offset before the gap and takes the first of an overlap (the server does), but
 * clients differ (ical.js takes the other offset in both). So these are written unambiguously:
 * the nominal local time as an EXDATE (each client excludes its own reading of it) and the
 * server's instant as an RDATE in UTC. The series' time of day is the same for every occurrence
 * (BYHOUR/BYMINUTE are refused), so the nominal time is the occurrence's date at that time.
 * Looked for from a year before `now` to five years after.
 */
function dstShifted(
  s: Schedule,
  first: Temporal.ZonedDateTime,
  now: Date,
): { id: string; nominal: string; utc: string }[] {
  const time = first.toPlainTime();
  const out = [];
  for (const z of occurrencesBetween(
    s,
    new Date(now.getTime() - 366 * DAY_MS),
    new Date(now.getTime() + 5 * 366 * DAY_MS),
  )) {
    const nominal = z.toPlainDate().toPlainDateTime(time);
    const gap = !nominal.equals(z.toPlainDateTime());
    const overlap =
      !gap &&
      nominal.toZonedDateTime(s.time_zone, { disambiguation: 'earlier' }).epochMilliseconds !==
        nominal.toZonedDateTime(s.time_zone, { disambiguation: 'later' }).epochMilliseconds;
    if (gap || overlap)
      out.push({
        id: occurrenceId(z),
        nominal: nominal.toString({ smallestUnit: 'second' }).replace(/[-:]/g, ''),
        utc: icsUtc(z),
      });
  }
  return out;
}

export function meetingsCalendar(
  name: string,
  meetings: { row: MeetingRow; schedule: Schedule }[],
  stamp: Date,
): string {
  const cal = new ICalCalendar({ prodId: '//orchard//chatsvc meetings//EN', name });
  // An empty name: VTIMEZONEs are generated for each event's zone, and DTSTAMP stays UTC.
  cal.timezone({ name: '', generator: getVtimezoneComponent } as unknown as string);
  for (const { row, schedule: s } of meetings) {
    const uid = `${row.id}@chatsvc`;
    const first = zonedStart(s.start, s.time_zone);
    const zone = isUtc(s.time_zone) ? null : s.time_zone;
    const common = {
      id: uid,
      sequence: row.sequence,
      stamp,
      timezone: zone,
      created: row.created_at,
      lastModified: row.updated_at,
    };
    const alarms = s.reminders.map((m) => ({ type: ICalAlarmType.display, trigger: m * 60, description: row.title }));
    // A single meeting carries its one occurrence's changes itself; its cancellation cancels it.
    const single = s.rrule === null ? occurrenceById(s, icsUtc(first)) : null;
    const master = single ?? {
      start: first,
      end: first.add({ minutes: s.duration_minutes }),
      title: s.title,
      description: s.description,
      location: s.location,
      cancelled: false,
    };
    let repeating: string | null = null;
    if (s.rrule) {
      const exdates = [...s.cancelled_occurrences].map((id) => occurrenceById(s, id).original);
      repeating = `RRULE:${s.rrule}`;
      const shifted = zone ? dstShifted(s, first, stamp) : [];
      const exLocal = [...exdates.map(icsLocal), ...shifted.map((x) => x.nominal)];
      if (exLocal.length)
        repeating += zone
          ? `\r\nEXDATE;TZID=${zone}:${exLocal.join(',')}`
          : `\r\nEXDATE:${exdates.map(icsUtc).join(',')}`;
      const rdates = shifted.filter((x) => !s.cancelled_occurrences.has(x.id)).map((x) => x.utc);
      if (rdates.length) repeating += `\r\nRDATE:${rdates.join(',')}`;
    }
    const cancelled = row.cancelled_at !== null || master.cancelled;
    cal.createEvent({
      ...common,
      start: master.start as never,
      end: master.end as never,
      summary: master.title,
      description: master.description || null,
      location: master.location,
      repeating,
      status: cancelled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
      alarms: cancelled ? [] : alarms,
    });
    if (!s.rrule) continue;
    for (const id of s.overrides.keys()) {
      const o = occurrenceById(s, id);
      cal.createEvent({
        ...common,
        start: o.start as never,
        end: o.end as never,
        recurrenceId: o.original as never,
        summary: o.title,
        description: o.description || null,
        location: o.location,
        status: row.cancelled_at ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
        alarms: row.cancelled_at ? [] : alarms,
      });
    }
  }
  return cal.toString();
}
