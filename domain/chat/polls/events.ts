// The polls slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type PollOption = { option_id: string; text: string };

/** Votes per option, in the poll's order (an array: jsonb does not keep an object's key order), and how many members voted. */
export type PollTally = { results: { option_id: string; votes: number }[]; voters: number };

type Base = { poll_id: string; channel_id: string; at: string };

export type PollEvent =
  | DomainEvent<'PollCreated', Base & { creator_id: string; question: string; options: PollOption[]; multiple_choice: boolean; anonymous: boolean; closes_at: string | null; encrypted: false }>
  /** The member's whole choice (replacing the last; `[]` withdraws), with the tally after it. */
  | DomainEvent<'PollVoted', Base & { user_id: string; option_ids: string[]; anonymous: boolean } & PollTally>
  /** `creator_id`, so a close by someone else reads as moderation (the audit log); absent on events written before it was added. */
  | DomainEvent<'PollClosed', Base & { closed_by: string | null; creator_id?: string; reason: 'closed' | 'expired' } & PollTally>;

export const POLL_EVENT_TYPES = eventTypes<PollEvent>()(['PollCreated', 'PollVoted', 'PollClosed']);
