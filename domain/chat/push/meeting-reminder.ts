// `MeetingReminderFired`: a meeting occurrence's reminder fired (appended by the scheduler to
// `meeting_reminder-<meeting>-<occurrence>-<offset>` with `no_stream`, so once). The data
// contract agreed with the meetings slice, which declares the same event: the push sender
// (api/chat/push/sender.ts) pushes it to each of `recipient_ids` with no socket on any instance.
// On merge, one declaration stays (the meetings slice's).

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type MeetingReminderFiredEvent = DomainEvent<'MeetingReminderFired', {
  meeting_id: string;
  occurrence_id: string;
  channel_id: string;
  title: string;
  /** The occurrence's start, an ISO instant. */
  start: string;
  offset_minutes: number;
  /** Unique per reminder (meeting, occurrence, offset); a resend carries the same one. */
  reminder_id: string;
  /** Members who have not declined. */
  recipient_ids: string[];
}>;

export const MEETING_REMINDER_EVENT_TYPES = eventTypes<MeetingReminderFiredEvent>()(['MeetingReminderFired']);
