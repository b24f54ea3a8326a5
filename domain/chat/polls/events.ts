// The polls slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import { upcasters } from '../../shared/event-contract.ts';

export type PollOption = { option_id: string; text: string };

/** Votes per option, in the poll's order (an array: jsonb does not keep an object's key order), and how many members voted. */
export type PollTally = { results: { option_id: string; votes: number }[]; voters: number };

type Base = { poll_id: string; channel_id: string; at: string };

export type PollEvent =
  | DomainEvent<
      'PollCreated',
      Base & {
        creator_id: string;
        question: string;
        options: PollOption[];
        multiple_choice: boolean;
        anonymous: boolean;
        closes_at: string | null;
        encrypted: false;
      }
    >
  /** The member's whole choice (replacing the last; `[]` withdraws), with the tally after it. */
  | DomainEvent<'PollVoted', Base & { user_id: string; option_ids: string[]; anonymous: boolean } & PollTally>
  /** Version 2. `creator_id`, so a close by someone else reads as moderation (the audit log); null only on version 1 events (see `pollClosedFromV1`). */
  | DomainEvent<
      'PollClosed',
      Base & { closed_by: string | null; creator_id: string | null; reason: 'closed' | 'expired' } & PollTally
    >;

export const POLL_EVENT_TYPES = eventTypes<PollEvent>()(['PollCreated', 'PollVoted', 'PollClosed'], { PollClosed: 2 });

/** `PollClosed` as written before version 2: without `creator_id`. */
export type PollClosedV1 = Base & { closed_by: string | null; reason: 'closed' | 'expired' } & PollTally;

/**
 * Version 1 → 2. A version 1 event does not say who created the poll (that is in the poll's
 * `PollCreated`, and an upcaster sees the event alone), so `creator_id` is null: unknown. The one
 * consumer that needs it, the chat admin audit log (projections/chat/admin-audit.ts), cannot
 * tell a close by someone else from the creator's own on such an event and leaves it out.
 */
export const pollClosedFromV1 = (v1: PollClosedV1): Extract<PollEvent, { type: 'PollClosed' }>['data'] => ({
  ...v1,
  creator_id: null,
});

export const POLL_UPCASTERS = upcasters<PollEvent>()({
  PollClosed: { 1: (data) => pollClosedFromV1(data as PollClosedV1) },
});
