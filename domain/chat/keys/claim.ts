// Handing out one one-time prekey (`chat.prekey-<user uuid>_<key id>`): a claim that only the
// first fetch wins. The fetch that loses the append race gets `prekey_taken` and tries the
// next prekey. `remaining` is how many were left unconsumed when the fetch looked (less this
// one): the number the owner's sockets are told in KeysLow.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { PrekeyClaimEvent } from './events.ts';

export type PrekeyClaimCommand = { type: 'Claim' } & PrekeyClaimEvent['data'];

export const prekeyClaimDecider: Decider<{ claimed: boolean }, PrekeyClaimCommand, PrekeyClaimEvent> = {
  initialState: () => ({ claimed: false }),
  evolve: () => ({ claimed: true }),
  decide(command, state) {
    if (state.claimed) throw new DomainError('conflict', 'prekey_taken', 'this one-time prekey was already handed out');
    const { type: _type, ...data } = command;
    return [{ type: 'PrekeyConsumed', data }];
  },
};
