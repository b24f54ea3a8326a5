// What the meeting routes answer, from the read model: the meeting record and its occurrences
// with the caller's RSVP and the counts (an occurrence's own answer beats the series').

import { z } from '@hono/zod-openapi';
import type { RsvpStatus } from '../../../domain/chat/meetings/events.ts';
import { nextLiveOccurrence, type Occurrence, type Schedule } from '../../../domain/chat/meetings/occurrences.ts';
import { recurrenceText } from '../../../domain/shared/recurrence.ts';
import type { MeetingRow, RsvpRow } from '../../../projections/chat/meetings.ts';

const local = (o: Occurrence['start']) => o.toPlainDateTime().toString({ smallestUnit: 'minute' });
const utc = (o: Occurrence['start']) => o.toInstant().toString();

export const OccurrenceTime = z.object({
  occurrence_id: z.string(),
  start: z.iso.datetime(),
  end: z.iso.datetime(),
  start_local: z.string(),
});
export const Meeting = z
  .object({
    id: z.uuid(),
    channel_id: z.uuid(),
    creator_id: z.uuid(),
    title: z.string(),
    description: z.string(),
    start: z.string().openapi({ description: 'local YYYY-MM-DDTHH:mm in time_zone' }),
    time_zone: z.string(),
    duration_minutes: z.number().int(),
    rrule: z.string().nullable(),
    reminders: z.array(z.number().int()),
    location: z.string().nullable(),
    recurrence_text: z.string(),
    next_occurrence: OccurrenceTime.nullable(),
    sequence: z.number().int(),
    cancelled: z.boolean(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Meeting');
export const RsvpCounts = z.object({ going: z.number().int(), maybe: z.number().int(), declined: z.number().int() });
export const MeetingOccurrence = z
  .object({
    meeting_id: z.uuid(),
    occurrence_id: z.string(),
    title: z.string(),
    start: z.iso.datetime(),
    end: z.iso.datetime(),
    start_local: z.string(),
    location: z.string().nullable(),
    cancelled: z.boolean(),
    my_rsvp: z.enum(['going', 'maybe', 'declined']).nullable(),
    rsvp_counts: RsvpCounts,
  })
  .openapi('MeetingOccurrence');

export const occurrenceTime = (o: Occurrence) => ({
  occurrence_id: o.occurrence_id,
  start: utc(o.start),
  end: utc(o.end),
  start_local: local(o.start),
});

export function meetingView(m: MeetingRow, s: Schedule, now: Date): z.infer<typeof Meeting> {
  const next = m.cancelled_at ? null : nextLiveOccurrence(s, now);
  return {
    id: m.id,
    channel_id: m.channel_id,
    creator_id: m.creator_id,
    title: m.title,
    description: m.description,
    start: m.start_local,
    time_zone: m.time_zone,
    duration_minutes: m.duration_minutes,
    rrule: m.rrule,
    reminders: m.reminders,
    location: m.location,
    recurrence_text: recurrenceText(s),
    next_occurrence: next ? occurrenceTime(next) : null,
    sequence: m.sequence,
    cancelled: m.cancelled_at !== null,
    created_at: m.created_at.toISOString(),
    updated_at: m.updated_at.toISOString(),
  };
}

/** Each user's answer for one occurrence (its own beats the series'). */
export function answersFor(
  rsvps: RsvpRow[],
  meetingId: string,
  occurrenceId: string,
): Map<string, { status: RsvpStatus; scope: 'series' | 'occurrence'; updated_at: Date }> {
  const answers = new Map<string, { status: RsvpStatus; scope: 'series' | 'occurrence'; updated_at: Date }>();
  for (const r of rsvps)
    if (r.meeting_id === meetingId && r.occurrence_id === '')
      answers.set(r.user_id, { status: r.status, scope: 'series', updated_at: r.updated_at });
  for (const r of rsvps)
    if (r.meeting_id === meetingId && r.occurrence_id === occurrenceId)
      answers.set(r.user_id, { status: r.status, scope: 'occurrence', updated_at: r.updated_at });
  return answers;
}

export function occurrenceView(
  meetingId: string,
  o: Occurrence,
  rsvps: RsvpRow[],
  userId: string,
): z.infer<typeof MeetingOccurrence> {
  const answers = answersFor(rsvps, meetingId, o.occurrence_id);
  const counts = { going: 0, maybe: 0, declined: 0 };
  for (const a of answers.values()) counts[a.status] += 1;
  return {
    meeting_id: meetingId,
    ...occurrenceTime(o),
    title: o.title,
    location: o.location,
    cancelled: o.cancelled,
    my_rsvp: answers.get(userId)?.status ?? null,
    rsvp_counts: counts,
  };
}
