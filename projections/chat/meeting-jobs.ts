// A meeting's one scheduler job (`scheduled_jobs`, kind `meeting_reminder`, applied by the
// `scheduled_jobs` projection in scheduled.ts): due at its next reminder, with what the firing
// needs in `data.next`. The job also carries the schedule and the reminder cursor, since the
// next reminder is worked out from them on every meeting event (the projection may not read
// another projection's tables: they are applied in no set order). A meeting with no reminder
// left keeps its row, due at 'infinity' (never claimed), until an edit gives it one.

import { type ReminderCursor, cursorAfter, reminderKey } from '../../domain/chat/meetings/decider.ts';
import type {
  MeetingEvent,
  OccurrenceChanges,
  SeriesFields,
  ReminderEvent,
} from '../../domain/chat/meetings/events.ts';
import type { Schedule } from '../../domain/chat/meetings/occurrences.ts';
import { nextReminder, type DueReminder } from '../../domain/chat/meetings/reminders.ts';
import type { PoolClient } from '../../infra/db/pool.ts';
import type { Recorded } from '../../infra/processors/projection.ts';

export const MEETING_JOB_EVENTS = [
  'MeetingScheduled',
  'MeetingUpdated',
  'MeetingOccurrenceUpdated',
  'MeetingOccurrenceCancelled',
  'MeetingCancelled',
  'MeetingReminderSkipped',
  'MeetingReminderFired',
] as const;
export type MeetingJobEvent = Exclude<MeetingEvent, { type: 'MeetingRsvpRecorded' }> | ReminderEvent;

export interface MeetingJobData {
  schedule: SeriesFields & { cancelled_occurrences: string[]; overrides: Record<string, OccurrenceChanges> };
  cursor: ReminderCursor;
  floor: number;
  next: DueReminder | null;
}

type Upsert = (
  tx: PoolClient,
  kind: 'meeting_reminder',
  subject: string,
  dueAt: string,
  data: Record<string, unknown>,
) => Promise<void>;
type Drop = (tx: PoolClient, kind: 'meeting_reminder', subject: string) => Promise<unknown>;

const NEVER = 'infinity';
const later = (a: ReminderCursor, b: ReminderCursor) => (cursorAfter(a, b) >= 0 ? a : b);
/** A cursor at an instant: every reminder due later follows it. */
const at = (iso: string): ReminderCursor => [Date.parse(iso), Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

const toSchedule = (s: MeetingJobData['schedule']): Schedule => ({
  ...s,
  cancelled_occurrences: new Set(s.cancelled_occurrences),
  overrides: new Map(Object.entries(s.overrides)),
});

export async function applyMeetingJob(
  event: Recorded<MeetingJobEvent>,
  tx: PoolClient,
  upsert: Upsert,
  drop: Drop,
  jobId: string,
): Promise<void> {
  const meetingId = event.data.meeting_id;
  if (event.type === 'MeetingCancelled') {
    await drop(tx, 'meeting_reminder', meetingId);
    return;
  }
  let job: MeetingJobData;
  if (event.type === 'MeetingScheduled') {
    const { meeting_id: _m, channel_id: _c, creator_id: _cr, at: when, ...series } = event.data;
    job = { schedule: { ...series, cancelled_occurrences: [], overrides: {} }, cursor: at(when), floor: 0, next: null };
  } else {
    const { rows } = await tx.query<{ data: MeetingJobData }>('SELECT data FROM scheduled_jobs WHERE id = $1', [jobId]);
    if (!rows[0]) return; // cancelled already
    job = rows[0].data;
    const s = job.schedule;
    switch (event.type) {
      case 'MeetingUpdated': {
        const d = event.data;
        job.schedule = {
          ...s,
          ...d.changes,
          ...(d.resets_occurrences ? { cancelled_occurrences: [], overrides: {} } : {}),
        };
        job.cursor = later(job.cursor, at(d.at));
        break;
      }
      case 'MeetingOccurrenceUpdated': {
        const d = event.data;
        job.schedule = {
          ...s,
          overrides: { ...s.overrides, [d.occurrence_id]: { ...s.overrides[d.occurrence_id], ...d.changes } },
        };
        job.cursor = later(job.cursor, at(d.at));
        break;
      }
      case 'MeetingOccurrenceCancelled': {
        const { [event.data.occurrence_id]: _gone, ...overrides } = s.overrides;
        job.schedule = {
          ...s,
          overrides,
          cancelled_occurrences: [...s.cancelled_occurrences, event.data.occurrence_id],
        };
        break;
      }
      case 'MeetingReminderSkipped':
        job.cursor = later(job.cursor, reminderKey(event.data.start, event.data.offset_minutes));
        job.floor = Math.max(job.floor, Date.parse(event.data.at));
        break;
      case 'MeetingReminderFired':
        job.cursor = later(job.cursor, reminderKey(event.data.start, event.data.offset_minutes));
        break;
    }
  }
  job.next = nextReminder(toSchedule(job.schedule), job.cursor, job.floor);
  await upsert(
    tx,
    'meeting_reminder',
    meetingId,
    job.next?.fire_at ?? NEVER,
    job as unknown as Record<string, unknown>,
  );
}
