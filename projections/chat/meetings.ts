// Meetings as members read them: the series (`chat_meetings`), the occurrences that differ from
// it (`chat_meeting_occurrences`: cancelled, or changed), and the RSVPs (`chat_meeting_rsvps`,
// occurrence '' for a series answer). Occurrences themselves are expanded at read time
// (domain/chat/meetings/occurrences.ts), never stored: a series has no end.

import type { MeetingEvent, OccurrenceChanges, RsvpStatus, SeriesFields } from '../../domain/chat/meetings/events.ts';
import type { Schedule } from '../../domain/chat/meetings/occurrences.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

const COLUMN: Record<string, string> = {
  title: 'title',
  description: 'description',
  start: 'start_local',
  time_zone: 'time_zone',
  duration_minutes: 'duration_minutes',
  rrule: 'rrule',
  reminders: 'reminders',
  location: 'location',
};

export const chatMeetingsProjection = defineProjection<MeetingEvent>({
  name: 'chat_meetings',
  handles: [
    'MeetingScheduled',
    'MeetingUpdated',
    'MeetingOccurrenceUpdated',
    'MeetingOccurrenceCancelled',
    'MeetingCancelled',
    'MeetingRsvpRecorded',
  ],
  tables: ['chat_meetings', 'chat_meeting_occurrences', 'chat_meeting_rsvps'],
  async apply(event: Recorded<MeetingEvent>, tx: PoolClient) {
    switch (event.type) {
      case 'MeetingScheduled': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_meetings (id, channel_id, creator_id, title, description, start_local, time_zone, duration_minutes, rrule, reminders, location, sequence, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 0, $12, $12) ON CONFLICT DO NOTHING`,
          [
            d.meeting_id,
            d.channel_id,
            d.creator_id,
            d.title,
            d.description,
            d.start,
            d.time_zone,
            d.duration_minutes,
            d.rrule,
            d.reminders,
            d.location,
            d.at,
          ],
        );
        return;
      }
      case 'MeetingUpdated': {
        const d = event.data;
        const entries = Object.entries(d.changes);
        const sets = entries.map(([k], i) => `${COLUMN[k]} = $${i + 4}`);
        await tx.query(
          `UPDATE chat_meetings SET sequence = $2, updated_at = $3${sets.length ? ', ' + sets.join(', ') : ''} WHERE id = $1`,
          [d.meeting_id, d.sequence, d.at, ...entries.map(([, v]) => v)],
        );
        if (d.resets_occurrences) {
          await tx.query('DELETE FROM chat_meeting_occurrences WHERE meeting_id = $1', [d.meeting_id]);
          await tx.query(`DELETE FROM chat_meeting_rsvps WHERE meeting_id = $1 AND occurrence_id <> ''`, [
            d.meeting_id,
          ]);
        }
        return;
      }
      case 'MeetingOccurrenceUpdated': {
        const d = event.data;
        const c = d.changes;
        const has = (k: keyof OccurrenceChanges) => k in c;
        await tx.query(
          `INSERT INTO chat_meeting_occurrences AS o (meeting_id, occurrence_id, title, description, start_local, duration_minutes, location, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
          ON CONFLICT (meeting_id, occurrence_id) DO UPDATE SET
            title = CASE WHEN $9 THEN EXCLUDED.title ELSE o.title END, description = CASE WHEN $10 THEN EXCLUDED.description ELSE o.description END,
            start_local = CASE WHEN $11 THEN EXCLUDED.start_local ELSE o.start_local END, duration_minutes = CASE WHEN $12 THEN EXCLUDED.duration_minutes ELSE o.duration_minutes END,
            location = CASE WHEN $13 THEN EXCLUDED.location ELSE o.location END, updated_at = EXCLUDED.updated_at`,
          [
            d.meeting_id,
            d.occurrence_id,
            c.title ?? null,
            c.description ?? null,
            c.start ?? null,
            c.duration_minutes ?? null,
            c.location ?? null,
            d.at,
            has('title'),
            has('description'),
            has('start'),
            has('duration_minutes'),
            has('location'),
          ],
        );
        // A location cleared on one occurrence is kept as '' (NULL means "the series'").
        if (has('location') && c.location === null)
          await tx.query(
            `UPDATE chat_meeting_occurrences SET location = '' WHERE meeting_id = $1 AND occurrence_id = $2`,
            [d.meeting_id, d.occurrence_id],
          );
        await tx.query('UPDATE chat_meetings SET sequence = $2, updated_at = $3 WHERE id = $1', [
          d.meeting_id,
          d.sequence,
          d.at,
        ]);
        return;
      }
      case 'MeetingOccurrenceCancelled': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_meeting_occurrences (meeting_id, occurrence_id, cancelled, updated_at) VALUES ($1, $2, true, $3)
          ON CONFLICT (meeting_id, occurrence_id) DO UPDATE SET cancelled = true, title = NULL, description = NULL, start_local = NULL, duration_minutes = NULL, location = NULL, updated_at = EXCLUDED.updated_at`,
          [d.meeting_id, d.occurrence_id, d.at],
        );
        await tx.query('UPDATE chat_meetings SET sequence = $2, updated_at = $3 WHERE id = $1', [
          d.meeting_id,
          d.sequence,
          d.at,
        ]);
        return;
      }
      case 'MeetingCancelled': {
        const d = event.data;
        await tx.query('UPDATE chat_meetings SET sequence = $2, updated_at = $3, cancelled_at = $3 WHERE id = $1', [
          d.meeting_id,
          d.sequence,
          d.at,
        ]);
        return;
      }
      case 'MeetingRsvpRecorded': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_meeting_rsvps (meeting_id, occurrence_id, user_id, status, updated_at) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT (meeting_id, occurrence_id, user_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`,
          [d.meeting_id, d.occurrence_id ?? '', d.user_id, d.status, d.at],
        );
        return;
      }
    }
  },
});

export interface MeetingRow {
  id: string;
  channel_id: string;
  creator_id: string;
  title: string;
  description: string;
  start_local: string;
  time_zone: string;
  duration_minutes: number;
  rrule: string | null;
  reminders: number[];
  location: string | null;
  sequence: number;
  cancelled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}
export interface ExceptionRow {
  meeting_id: string;
  occurrence_id: string;
  cancelled: boolean;
  title: string | null;
  description: string | null;
  start_local: string | null;
  duration_minutes: number | null;
  location: string | null;
}
export interface RsvpRow {
  meeting_id: string;
  occurrence_id: string;
  user_id: string;
  status: RsvpStatus;
  updated_at: Date;
}

const MEETING_COLUMNS =
  'id, channel_id, creator_id, title, description, start_local, time_zone, duration_minutes, rrule, reminders, location, sequence, cancelled_at, created_at, updated_at';

export async function meetingById(db: Pool, id: string): Promise<MeetingRow | null> {
  const { rows } = await db.query<MeetingRow>(`SELECT ${MEETING_COLUMNS} FROM chat_meetings WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** The meetings of these channels, oldest first; cancelled ones only when asked (calendar feeds show them as cancelled). */
export async function meetingsOfChannels(
  db: Pool,
  channelIds: string[],
  withCancelled: boolean,
): Promise<MeetingRow[]> {
  const { rows } = await db.query<MeetingRow>(
    `SELECT ${MEETING_COLUMNS} FROM chat_meetings WHERE channel_id = ANY($1::uuid[]) ${withCancelled ? '' : 'AND cancelled_at IS NULL'} ORDER BY created_at, id`,
    [channelIds],
  );
  return rows;
}

export async function meetingExceptions(db: Pool, meetingIds: string[]): Promise<ExceptionRow[]> {
  const { rows } = await db.query<ExceptionRow>(
    'SELECT meeting_id, occurrence_id, cancelled, title, description, start_local, duration_minutes, location FROM chat_meeting_occurrences WHERE meeting_id = ANY($1::uuid[])',
    [meetingIds],
  );
  return rows;
}

export async function meetingRsvps(db: Pool, meetingIds: string[]): Promise<RsvpRow[]> {
  const { rows } = await db.query<RsvpRow>(
    'SELECT meeting_id, occurrence_id, user_id, status, updated_at FROM chat_meeting_rsvps WHERE meeting_id = ANY($1::uuid[]) ORDER BY updated_at, user_id',
    [meetingIds],
  );
  return rows;
}

export const seriesOf = (m: MeetingRow): SeriesFields => ({
  title: m.title,
  description: m.description,
  start: m.start_local,
  time_zone: m.time_zone,
  duration_minutes: m.duration_minutes,
  rrule: m.rrule,
  reminders: m.reminders,
  location: m.location,
});

/** The meeting's schedule (series and exceptions) from the read model. */
export function scheduleOf(m: MeetingRow, exceptions: ExceptionRow[]): Schedule {
  const mine = exceptions.filter((e) => e.meeting_id === m.id);
  const overrides = new Map<string, OccurrenceChanges>();
  for (const e of mine) {
    if (e.cancelled) continue;
    const o: OccurrenceChanges = {};
    if (e.title !== null) o.title = e.title;
    if (e.description !== null) o.description = e.description;
    if (e.start_local !== null) o.start = e.start_local;
    if (e.duration_minutes !== null) o.duration_minutes = e.duration_minutes;
    if (e.location !== null) o.location = e.location === '' ? null : e.location;
    overrides.set(e.occurrence_id, o);
  }
  return {
    ...seriesOf(m),
    cancelled_occurrences: new Set(mine.filter((e) => e.cancelled).map((e) => e.occurrence_id)),
    overrides,
  };
}
