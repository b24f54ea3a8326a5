// The users slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type BlockEvent =
  | DomainEvent<'UserBlocked', { user_id: string; blocked_user_id: string; at: string }>
  | DomainEvent<'UserUnblocked', { user_id: string; blocked_user_id: string; at: string }>;

export type ReportTarget = 'user' | 'message';

export type ReportEvent = DomainEvent<
  'ReportFiled',
  { report_id: string; reporter_id: string; target_type: ReportTarget; target_id: string; reason: string; at: string }
>;

export const BLOCK_EVENT_TYPES = eventTypes<BlockEvent>()(['UserBlocked', 'UserUnblocked']);

export const REPORT_EVENT_TYPES = eventTypes<ReportEvent>()(['ReportFiled']);
