// The meetings slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export const RSVP_STATUSES = ['going', 'maybe', 'declined'] as const;

export type RsvpStatus = (typeof RSVP_STATUSES)[number];

export type SeriesFields = {
  title: string;
  description: string;
  /** Local wall-clock `YYYY-MM-DDTHH:mm` in `time_zone`. */
  start: string;
  time_zone: string;
  duration_minutes: number;
  rrule: string | null;
  /** Minutes before each occurrence's start, ascending, distinct. */
  reminders: number[];
  location: string | null;
};

/** What one occurrence may change (its time in the series' zone). */
export type OccurrenceChanges = Partial<
  Pick<SeriesFields, 'title' | 'description' | 'start' | 'duration_minutes' | 'location'>
>;

type Base = { meeting_id: string; channel_id: string; at: string };

export type MeetingEvent =
  | DomainEvent<'MeetingScheduled', Base & SeriesFields & { creator_id: string }>
  | DomainEvent<
      'MeetingUpdated',
      Base & { changes: Partial<SeriesFields>; resets_occurrences: boolean; sequence: number; by: string }
    >
  | DomainEvent<
      'MeetingOccurrenceUpdated',
      Base & { occurrence_id: string; changes: OccurrenceChanges; sequence: number; by: string }
    >
  | DomainEvent<'MeetingOccurrenceCancelled', Base & { occurrence_id: string; sequence: number; by: string }>
  | DomainEvent<'MeetingCancelled', Base & { sequence: number; by: string }>
  | DomainEvent<'MeetingRsvpRecorded', Base & { user_id: string; occurrence_id: string | null; status: RsvpStatus }>
  /** The scheduler found a reminder it could not fire: the occurrence had started (missed while down), or it fired before the occurrence moved. */
  | DomainEvent<
      'MeetingReminderSkipped',
      Base & { occurrence_id: string; start: string; offset_minutes: number; reason: 'started' | 'already_fired' }
    >;

export const MEETING_EVENT_TYPES = eventTypes<MeetingEvent>()([
  'MeetingScheduled',
  'MeetingUpdated',
  'MeetingOccurrenceUpdated',
  'MeetingOccurrenceCancelled',
  'MeetingCancelled',
  'MeetingRsvpRecorded',
  'MeetingReminderSkipped',
]);

export type ReminderEvent = DomainEvent<
  'MeetingReminderFired',
  {
    meeting_id: string;
    occurrence_id: string;
    channel_id: string;
    title: string;
    /** The occurrence's start (UTC). */
    start: string;
    offset_minutes: number;
    /** The stream's suffix, `<meeting>-<occurrence>-<offset>`: one per reminder (web push uses it as the Topic). */
    reminder_id: string;
    /** Channel members who had not declined this occurrence when it fired. */
    recipient_ids: string[];
    at: string;
  }
>;

export const REMINDER_EVENT_TYPES = eventTypes<ReminderEvent>()(['MeetingReminderFired']);
