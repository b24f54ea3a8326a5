// First-run registration (`POST /auth/register`) is open only until one local password account
// exists. Two racing registrations both pass the read-model check; the claim stream
// `orch.registration-local` lets exactly one through (the second gets `already_registered`).

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { RegistrationEvent } from './events.ts';

export const registrationClosed = () =>
  new DomainError('conflict', 'already_registered', 'registration is closed: a local account already exists');

export const registrationDecider: Decider<
  { claimed_by: string | null },
  { type: 'ClaimLocalRegistration'; user_id: string },
  RegistrationEvent
> = {
  initialState: () => ({ claimed_by: null }),
  evolve: (_state, event) => ({ claimed_by: event.data.user_id }),
  decide(command, state) {
    // The same user again: a registration that failed after its claim, completed by its retry.
    if (state.claimed_by === command.user_id) return [];
    if (state.claimed_by) throw registrationClosed();
    return [{ type: 'LocalRegistrationClaimed', data: { user_id: command.user_id } }];
  },
};
