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
import { zonedStart } from '../../../domain/shared/recurrence.ts';
import type { MeetingRow } from '../../../projections/chat/meetings.ts';

export const ICS_TYPE = 'text/calendar; charset=utf-8';

const icsLocal = (z: Temporal.ZonedDateTime) => z.toPlainDateTime().toString({ smallestUnit: 'second' }).replace(/[-:]/g, '');
const icsUtc = (z: Temporal.ZonedDateTime) => z.toInstant().toString().replace(/[-:]/g, '').replace(/\.\d+/, '');
const isUtc = (zone: string) => zone === 'UTC' || zone === 'Etc/UTC';

export function meetingsCalendar(name: string, meetings: { row: MeetingRow; schedule: Schedule }[], stamp: Date): string {
  const cal = new ICalCalendar({ prodId: '//orchard//chatsvc meetings//EN', name });
  // An empty name: VTIMEZONEs are generated for each event's zone, and DTSTAMP stays UTC.
  cal.timezone({ name: '', generator: getVtimezoneComponent } as unknown as string);
  for (const { row, schedule: s } of meetings) {
    const uid = `${row.id}@chatsvc`;
    const first = zonedStart(s.start, s.time_zone);
    const zone = isUtc(s.time_zone) ? null : s.time_zone;
    const common = { id: uid, sequence: row.sequence, stamp, timezone: zone, created: row.created_at, lastModified: row.updated_at };
    const alarms = s.reminders.map((m) => ({ type: ICalAlarmType.display, trigger: m * 60, description: row.title }));
    // A single meeting carries its one occurrence's changes itself; its cancellation cancels it.
    const single = s.rrule === null ? occurrenceById(s, icsUtc(first)) : null;
    const master = single ?? { start: first, end: first.add({ minutes: s.duration_minutes }), title: s.title, description: s.description, location: s.location, cancelled: false };
    let repeating: string | null = null;
    if (s.rrule) {
      const exdates = [...s.cancelled_occurrences].map((id) => occurrenceById(s, id).original);
      repeating = `RRULE:${s.rrule}`;
      if (exdates.length) repeating += zone ? `\r\nEXDATE;TZID=${zone}:${exdates.map(icsLocal).join(',')}` : `\r\nEXDATE:${exdates.map(icsUtc).join(',')}`;
    }
    const cancelled = row.cancelled_at !== null || master.cancelled;
    cal.createEvent({
      ...common, start: master.start as never, end: master.end as never, summary: master.title, description: master.description || null, location: master.location,
      repeating, status: cancelled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED, alarms: cancelled ? [] : alarms,
    });
    if (!s.rrule) continue;
    for (const id of s.overrides.keys()) {
      const o = occurrenceById(s, id);
      cal.createEvent({
        ...common, start: o.start as never, end: o.end as never, recurrenceId: o.original as never, summary: o.title, description: o.description || null, location: o.location,
        status: row.cancelled_at ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED, alarms: row.cancelled_at ? [] : alarms,
      });
    }
  }
  return cal.toString();
}
