// Registration invites (`chat.invite-<uuid>`), minted by an instance admin for
// CHATSVC_REGISTRATION=invite: each code registers one account, until it expires or is revoked.
// The code itself never reaches the log, only its SHA-256 hash.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { InviteEvent } from './events.ts';

export type InviteCommand =
  | { type: 'Create'; invite_id: string; code_hash: string; created_by: string; expires_at: string | null; at: string }
  | { type: 'Redeem'; user_id: string; at: string }
  | { type: 'Revoke'; by: string; at: string };

export interface InviteState {
  invite_id: string | null;
  expires_at: string | null;
  redeemed_by: string | null;
  revoked: boolean;
}

export const invalidInvite = () =>
  new DomainError('forbidden', 'invalid_invite', 'a valid invite_code is required to register');

export const inviteDecider: Decider<InviteState, InviteCommand, InviteEvent> = {
  initialState: () => ({ invite_id: null, expires_at: null, redeemed_by: null, revoked: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'RegistrationInviteCreated':
        return { ...state, invite_id: event.data.invite_id, expires_at: event.data.expires_at };
      case 'RegistrationInviteRedeemed':
        return { ...state, redeemed_by: event.data.user_id };
      case 'RegistrationInviteRevoked':
        return { ...state, revoked: true };
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'Create':
        if (state.invite_id) throw new DomainError('conflict', 'invite_exists', 'invite already exists');
        return [
          {
            type: 'RegistrationInviteCreated',
            data: {
              invite_id: command.invite_id,
              code_hash: command.code_hash,
              created_by: command.created_by,
              expires_at: command.expires_at,
              at: command.at,
            },
          },
        ];
      case 'Redeem':
        // The same registration again (it failed after redeeming, before its account): done already.
        if (state.invite_id && !state.revoked && state.redeemed_by === command.user_id) return [];
        if (!state.invite_id || state.revoked || state.redeemed_by) throw invalidInvite();
        if (state.expires_at && Date.parse(state.expires_at) <= Date.parse(command.at)) throw invalidInvite();
        return [
          {
            type: 'RegistrationInviteRedeemed',
            data: { invite_id: state.invite_id, user_id: command.user_id, at: command.at },
          },
        ];
      case 'Revoke':
        if (!state.invite_id) throw new DomainError('not_found', 'invite_not_found', 'no such invite');
        if (state.revoked || state.redeemed_by) return [];
        return [
          {
            type: 'RegistrationInviteRevoked',
            data: { invite_id: state.invite_id, revoked_by: command.by, at: command.at },
          },
        ];
    }
  },
};
