// A machine token of the registry (`registry.token-<uuid>`): created by an interactive admin with
// scopes and an expiry, revoked by one. Only the token's SHA-256 hash and a short display prefix
// reach the log; the plaintext is shown once, in the creation answer. Uses are facts recorded
// coalesced on their own stream (`RegistryTokenUsed`, at most once a minute per token and
// process), so `last_used_at` is kept without an event per request.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { Scope } from '../catalog.ts';
import type { TokenEvent } from './events.ts';

export const TOKEN_PREFIX = 'registry_sk_';
export const TOKEN_DAYS = { min: 1, max: 365, default: 90 } as const;

export type TokenCommand =
  | {
      type: 'CreateToken';
      token_id: string;
      name: string;
      token_hash: string;
      token_prefix: string;
      scopes: Scope[];
      days: number;
      by: string | null;
      at: string;
    }
  | { type: 'RevokeToken'; by: string | null; at: string };

export interface TokenState {
  token_id: string | null;
  revoked: boolean;
}

function decide(command: TokenCommand, state: TokenState): TokenEvent[] {
  switch (command.type) {
    case 'CreateToken': {
      if (state.token_id) throw new DomainError('conflict', 'token_exists', 'token already exists');
      if (!Number.isInteger(command.days) || command.days < TOKEN_DAYS.min || command.days > TOKEN_DAYS.max) {
        throw new DomainError(
          'invalid',
          'validation_failed',
          `expires_in_days must be an integer from ${TOKEN_DAYS.min} to ${TOKEN_DAYS.max}`,
        );
      }
      if (command.scopes.length === 0)
        throw new DomainError('invalid', 'validation_failed', 'a token needs at least one scope');
      const expires_at = new Date(Date.parse(command.at) + command.days * 86_400_000).toISOString();
      const { token_id, name, token_hash, token_prefix, scopes, by, at } = command;
      return [
        {
          type: 'RegistryTokenCreated',
          data: { token_id, name, token_hash, token_prefix, scopes, expires_at, created_by: by, at },
        },
      ];
    }
    case 'RevokeToken':
      if (!state.token_id) throw new DomainError('not_found', 'token_not_found', 'no such token');
      if (state.revoked) return [];
      return [
        { type: 'RegistryTokenRevoked', data: { token_id: state.token_id, revoked_by: command.by, at: command.at } },
      ];
  }
}

function evolve(state: TokenState, event: TokenEvent): TokenState {
  switch (event.type) {
    case 'RegistryTokenCreated':
      return { token_id: event.data.token_id, revoked: false };
    case 'RegistryTokenRevoked':
      return { ...state, revoked: true };
    case 'RegistryTokenUsed':
      return state;
  }
}

export const tokenDecider: Decider<TokenState, TokenCommand, TokenEvent> = {
  initialState: () => ({ token_id: null, revoked: false }),
  evolve,
  decide,
};
