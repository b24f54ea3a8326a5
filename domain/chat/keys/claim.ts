// Handing out one one-time prekey (`chat_prekey-<user uuid>_<key id>`): a claim that only the
// first fetch wins. The fetch that loses the append race gets `prekey_taken` and tries the
// next prekey. `remaining` is how many were left unconsumed when the fetch looked (less this
// one): the number the owner's sockets are told in KeysLow.

import { DomainError, eventTypes, type Decider, type DomainEvent } from '../../shared/decider.ts';

export type PrekeyClaimEvent = DomainEvent<'PrekeyConsumed', { user_id: string; key_id: number; public_key: string; remaining: number; fetched_by: string; at: string }>;

export const PREKEY_CLAIM_EVENT_TYPES = eventTypes<PrekeyClaimEvent>()(['PrekeyConsumed']);

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

export const prekeyClaimStream = (userId: string, keyId: number) => `chat_prekey-${userId}_${keyId}`;
