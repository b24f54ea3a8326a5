// Bot tokens (`chat.bot_token-<uuid>`): minted for a bot account (a `chat.user-<uuid>` stream
// whose first event is BotRegistered), active until revoked (admin JWT only) or past their
// expiry. The token itself (`cb_` + 64 lowercase hex) is shown once at minting: the log keeps
// only its SHA-256 and an 11-character prefix. Use is recorded on a stream of its own
// (`chat.bot_token_use-<uuid>`), coalesced by the API to one event per token per minute, never one
// per request.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { BotScope, BotTokenEvent } from './events.ts';

/** The spec's per-token limit: 60 requests in any 10 seconds, unless the token overrides the count. */
export const BOT_RATE_WINDOW_MS = 10_000;
export const BOT_RATE_DEFAULT = 60;
/** Characters of a token kept for display (`cb_` + 8 hex). */
export const BOT_TOKEN_PREFIX_LENGTH = 11;
export const BOT_TOKEN_PATTERN = /^cb_[0-9a-f]{64}$/;

export type BotTokenCommand =
  | {
      type: 'Mint';
      token_id: string;
      bot_id: string;
      token_hash: string;
      prefix: string;
      scope: BotScope;
      label: string | null;
      expires_at: string | null;
      rate_limit_per_window: number | null;
      created_by: string | null;
      at: string;
    }
  | { type: 'Revoke'; bot_id: string; by: string; at: string };

export interface BotTokenState {
  token_id: string | null;
  bot_id: string | null;
  revoked: boolean;
}

export const botTokenNotFound = () => new DomainError('not_found', 'token_not_found', 'no such token for this bot');

export const botTokenDecider: Decider<BotTokenState, BotTokenCommand, BotTokenEvent> = {
  initialState: () => ({ token_id: null, bot_id: null, revoked: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'BotTokenMinted':
        return { token_id: event.data.token_id, bot_id: event.data.bot_id, revoked: false };
      case 'BotTokenRevoked':
        return { ...state, revoked: true };
    }
  },
  decide(command, state) {
    if (command.type === 'Mint') {
      if (state.token_id) throw new DomainError('conflict', 'token_exists', 'token already exists');
      if (
        command.rate_limit_per_window !== null &&
        (!Number.isInteger(command.rate_limit_per_window) || command.rate_limit_per_window < 1)
      ) {
        throw new DomainError('invalid', 'invalid_rate_limit', 'rate_limit_per_window must be a positive integer');
      }
      const { type: _type, ...data } = command;
      return [{ type: 'BotTokenMinted', data }];
    }
    if (!state.token_id || state.bot_id !== command.bot_id) throw botTokenNotFound();
    if (state.revoked) return [];
    return [
      {
        type: 'BotTokenRevoked',
        data: { token_id: state.token_id, bot_id: state.bot_id, by: command.by, at: command.at },
      },
    ];
  },
};

/** `integration-<label>`: lowercase letters, digits and underscores, at most 40 characters of label. */
export function integrationUsername(label: string): string {
  const clean =
    label
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 40) || 'bot';
  return `integration-${clean}`;
}
