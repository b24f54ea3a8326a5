// Meeting reminders.
//
// - Which is next: reminders are ordered by (fire time, occurrence start, offset); the next one
//   after a cursor, for an occurrence not cancelled that starts after `floor`, is what the
//   `scheduled_jobs` projection keeps as the meeting's one job (projections/chat/meeting-jobs.ts).
//   The cursor moves on to each reminder fired or skipped, and to the time of each edit, so a
//   reminder whose time had passed before it existed never fires.
// - Firing: each reminder is its own stream, `chat.meeting_reminder-<meeting>-<occurrence>-<offset>`,
//   whose one event `MeetingReminderFired` is appended with `no_stream`: two instances firing the
//   same job append it once.

import { DomainError, type Decider } from '../../shared/decider.ts';
import { nextOccurrence, occurrenceId } from '../../shared/recurrence.ts';
import { cursorAfter, reminderKey, type ReminderCursor } from './decider.ts';
import { occurrenceById, type Schedule } from './occurrences.ts';
import type { ReminderEvent } from './events.ts';

export interface DueReminder {
  occurrence_id: string;
  start: string;
  offset_minutes: number;
  fire_at: string;
}

/** The first reminder strictly after `cursor` whose occurrence is live and starts after `floorMs`. */
export function nextReminder(s: Schedule, cursor: ReminderCursor, floorMs: number): DueReminder | null {
  if (!s.reminders.length) return null;
  const maxOffsetMs = Math.max(...s.reminders) * 60_000;
  let best: { key: ReminderCursor; due: DueReminder } | null = null;
  const weigh = (occurrence_id: string, startMs: number) => {
    if (startMs <= floorMs) return;
    const start = new Date(startMs).toISOString();
    for (const offset of s.reminders) {
      const key = reminderKey(start, offset);
      if (cursorAfter(key, cursor) <= 0 || (best && cursorAfter(key, best.key) >= 0)) continue;
      best = { key, due: { occurrence_id, start, offset_minutes: offset, fire_at: new Date(key[0]).toISOString() } };
    }
  };
  for (const [id, o] of s.overrides) {
    if (o.start && !s.cancelled_occurrences.has(id)) weigh(id, occurrenceById(s, id).start.epochMilliseconds);
  }
  // Series occurrences from the first that could follow the cursor, until none can beat the best.
  let at = new Date(Math.max(cursor[0], floorMs));
  for (let i = 0; i < 10_000; i++) {
    const z = nextOccurrence(s, at);
    if (!z) break;
    const current = best as { key: ReminderCursor } | null;
    if (current && z.epochMilliseconds - maxOffsetMs > current.key[0]) break;
    const occ = occurrenceById(s, occurrenceId(z));
    if (!occ.cancelled && !s.overrides.get(occ.occurrence_id)?.start) weigh(occ.occurrence_id, z.epochMilliseconds);
    at = new Date(z.epochMilliseconds + 1);
  }
  return (best as { due: DueReminder } | null)?.due ?? null;
}

export type ReminderCommand = { type: 'Fire'; data: Omit<ReminderEvent['data'], 'reminder_id'> };
export interface ReminderState {
  fired: { start: string } | null;
}

export const reminderId = (meetingId: string, occurrenceId: string, offset: number) =>
  `${meetingId}-${occurrenceId}-${offset}`;
export const reminderDecider: Decider<ReminderState, ReminderCommand, ReminderEvent> = {
  initialState: () => ({ fired: null }),
  evolve: (_state, event) => ({ fired: { start: event.data.start } }),
  decide(command, state) {
    if (state.fired)
      throw new DomainError('conflict', 'reminder_fired', 'this reminder has fired', {
        code: 'reminder_fired',
        start: state.fired.start,
      });
    const d = command.data;
    return [
      {
        type: 'MeetingReminderFired',
        data: { ...d, reminder_id: reminderId(d.meeting_id, d.occurrence_id, d.offset_minutes) },
      },
    ];
  },
};
