// The bookmarks slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

type Base = { user_id: string; message_id: string; at: string };

export type BookmarkEvent =
  DomainEvent<'BookmarkAdded', Base & { channel_id: string }> | DomainEvent<'BookmarkRemoved', Base>;

export const BOOKMARK_EVENT_TYPES = eventTypes<BookmarkEvent>()(['BookmarkAdded', 'BookmarkRemoved']);
