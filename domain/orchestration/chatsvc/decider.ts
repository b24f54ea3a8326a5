// The chat-service integration of an agent profile (spec 1, "Chat integration status"): one
// aggregate per profile on `orch.integration-<profile id>`.
//
//   none ──connect──▶ active ──chat 401 to the bot token──▶ revoked_externally ──connect──▶ active
//   any ──delete──▶ none
//
// A connect from revoked_externally with the same bot keeps the integration id (and so the
// device state hung off it: identity, prekeys, sessions); only the token changes. A 401 is
// therefore matched to the token that met it (its prefix), so a late refusal of the revoked
// token cannot revoke the fresh one.
//
// The bot token is in the log only sealed (`token_sealed`, under ORCH_INTEGRATION_ENCRYPTION_KEY,
// bound to the profile and integration ids); the provision token never is. The bot's private
// keys, ratchet sessions and sender-key states are never in the log: forward secrecy needs old
// keys deleted, which an append-only log cannot do. They live in the sealed device-state tables
// (infra/db/migrations/018_chatsvc.sql), updated in place.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { ConnectedData, IntegrationEvent } from './events.ts';

export type IntegrationStatusValue = 'active' | 'revoked_externally';

export const botTokenSealContext = (profileId: string, integrationId: string) =>
  `chatsvc_bot_token:${profileId}:${integrationId}`;

export interface IntegrationState {
  status: IntegrationStatusValue | null;
  integration_id: string | null;
  token_prefix: string | null;
}

export type IntegrationCommand =
  | { type: 'Connect'; data: ConnectedData }
  /** `token_prefix`: of the token the chat service refused. */
  | {
      type: 'MarkRevoked';
      integration_id: string;
      token_prefix: string;
      discovered_by: string;
      chatsvc_status: number;
      at: string;
    }
  | { type: 'Delete'; at: string };

const initialState = (): IntegrationState => ({ status: null, integration_id: null, token_prefix: null });

function evolve(state: IntegrationState, event: IntegrationEvent): IntegrationState {
  switch (event.type) {
    case 'ChatIntegrationConnected':
      return { status: 'active', integration_id: event.data.integration_id, token_prefix: event.data.token_prefix };
    case 'IntegrationRevokedExternally':
      return { ...state, status: 'revoked_externally' };
    case 'ChatIntegrationDeleted':
      return initialState();
  }
}

function decide(command: IntegrationCommand, state: IntegrationState): IntegrationEvent[] {
  switch (command.type) {
    case 'Connect':
      if (state.status === 'active')
        throw new DomainError(
          'conflict',
          'already_connected',
          'this profile already has an active chat-service integration; delete it first',
        );
      return [{ type: 'ChatIntegrationConnected', data: { ...command.data } }];
    case 'MarkRevoked':
      // Only the integration and token that met the 401, and only once: a stale discovery changes nothing.
      if (
        state.status !== 'active' ||
        state.integration_id !== command.integration_id ||
        state.token_prefix !== command.token_prefix
      )
        return [];
      return [
        {
          type: 'IntegrationRevokedExternally',
          data: {
            profile_id: '',
            integration_id: command.integration_id,
            discovered_by: command.discovered_by,
            chatsvc_status: command.chatsvc_status,
            at: command.at,
          },
        },
      ];
    case 'Delete':
      if (state.status === null)
        throw new DomainError('not_found', 'not_configured', 'this profile has no chat-service integration');
      return [
        {
          type: 'ChatIntegrationDeleted',
          data: { profile_id: '', integration_id: state.integration_id!, at: command.at },
        },
      ];
  }
}

/** The decider of one profile's integration; `profile_id` is filled in from the stream's profile. */
export function integrationDecider(profileId: string): Decider<IntegrationState, IntegrationCommand, IntegrationEvent> {
  return {
    initialState,
    evolve,
    decide: (command, state) =>
      decide(command, state).map((e) => ({ ...e, data: { ...e.data, profile_id: profileId } }) as IntegrationEvent),
  };
}
