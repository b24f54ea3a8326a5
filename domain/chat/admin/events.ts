// The admin slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its projection and the API
// import them from here.
//
// Instance administration facts with no aggregate to decide them (no decider): purges. A `Purged`
// event names what was hard-deleted from the read models (a message, a user's messages, a
// channel) and who did it, and keeps no content; the read models drop the rows when they apply it.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type PurgeTarget = 'message' | 'user_messages' | 'channel';

export type PurgeEvent = DomainEvent<
  'Purged',
  { purge_id: string; target_type: PurgeTarget; target_id: string; by: string; at: string }
>;

export const PURGE_EVENT_TYPES = eventTypes<PurgeEvent>()(['Purged']);

/** An instance admin's verdict on a report (`chat.report-<uuid>`, after its ReportFiled). */
export type ReportReviewEvent = DomainEvent<
  'ReportReviewed',
  { report_id: string; status: 'resolved' | 'dismissed'; note: string | null; by: string; at: string }
>;

export const REPORT_REVIEW_EVENT_TYPES = eventTypes<ReportReviewEvent>()(['ReportReviewed']);

/** Instance announcements (`chat.announcement-<uuid>`), and a user dismissing one for themselves. */
export type AnnouncementEvent =
  | DomainEvent<
      'AnnouncementPublished',
      { announcement_id: string; title: string; body: string; expires_at: string | null; by: string; at: string }
    >
  | DomainEvent<'AnnouncementDismissed', { announcement_id: string; user_id: string; at: string }>;

export const ANNOUNCEMENT_EVENT_TYPES = eventTypes<AnnouncementEvent>()([
  'AnnouncementPublished',
  'AnnouncementDismissed',
]);

/**
 * Feedback (`chat.feedback-<uuid>`): the local row is written first; a mirror to an issue tracker
 * that succeeded is recorded after it (`forwarded_to`); admins triage it. The screenshot's bytes
 * are a blob, referenced by key.
 */
export type FeedbackStatus = 'new' | 'triaged' | 'closed';

export type FeedbackEvent =
  | DomainEvent<
      'FeedbackSubmitted',
      {
        feedback_id: string;
        user_id: string;
        description: string;
        screenshot: { blob: string; mime_type: string; bytes: number } | null;
        at: string;
      }
    >
  | DomainEvent<'FeedbackForwarded', { feedback_id: string; target: string; at: string }>
  | DomainEvent<'FeedbackStatusChanged', { feedback_id: string; status: FeedbackStatus; by: string; at: string }>;

export const FEEDBACK_EVENT_TYPES = eventTypes<FeedbackEvent>()([
  'FeedbackSubmitted',
  'FeedbackForwarded',
  'FeedbackStatusChanged',
]);
