// The calendar-feeds slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

type Base = { token_id: string; user_id: string; at: string };

export type CalendarFeedEvent =
  | DomainEvent<
      'CalendarFeedTokenCreated',
      Base & { token_hash: string; channel_id: string | null; label: string | null }
    >
  | DomainEvent<'CalendarFeedTokenRevoked', Base>;

export const CALENDAR_FEED_EVENT_TYPES = eventTypes<CalendarFeedEvent>()([
  'CalendarFeedTokenCreated',
  'CalendarFeedTokenRevoked',
]);
