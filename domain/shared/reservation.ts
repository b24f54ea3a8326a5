// Uniqueness across aggregates (a username, an email, later a slug): a reservation stream per
// value. Whoever reserves first owns the value; reserving again for the same owner is a no-op,
// and for another owner the typed `<kind>_taken` conflict (the API's 409). The command runner
// appends the first reservation with `no_stream`, so two racing writers cannot both win.
// Personal data (an email) names its stream by a hash, computed by the caller.

import { DomainError, eventTypes, type Decider, type DomainEvent } from './decider.ts';
import type { StreamCategory } from './streams.ts';

export type ReservationEvent = DomainEvent<'UniqueValueReserved', { kind: string; owner_id: string }>;
export const RESERVATION_EVENT_TYPES = eventTypes<ReservationEvent>()(['UniqueValueReserved']);

export type ReservationCommand = { type: 'Reserve'; kind: string; owner_id: string };
export type ReservationState = { owner_id: string | null };

export const reservationDecider: Decider<ReservationState, ReservationCommand, ReservationEvent> = {
  initialState: () => ({ owner_id: null }),
  evolve: (_state, event) => ({ owner_id: event.data.owner_id }),
  decide(command, state) {
    if (state.owner_id === command.owner_id) return [];
    if (state.owner_id) throw new DomainError('conflict', `${command.kind}_taken`, `${command.kind} is already taken`);
    return [{ type: 'UniqueValueReserved', data: { kind: command.kind, owner_id: command.owner_id } }];
  },
};

/**
 * `<service>.<kind>_reservation-<key>`: a stream of a reservation category declared in its
 * service's table (domain/<service>/streams.ts); the key is the normalised value, or its hash for personal data.
 */
export function reservationStream(category: StreamCategory, key: string): string {
  if (!category.category.endsWith('_reservation'))
    throw new Error(`${category.category} is not a reservation category`);
  return category.stream(key);
}
