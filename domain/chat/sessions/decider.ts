// A chat login session (`chat.session-<uuid>`): one refresh token at a time, rotated on every
// use. The log keeps only SHA-256 hashes of refresh tokens. Presenting a token this session
// already rotated away is theft detection: the whole session is revoked (the caller answers 401).

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { SessionOrigin, RevokeReason, ChatSessionEvent } from './events.ts';

export type ChatSessionCommand =
  | {
      type: 'Start';
      session_id: string;
      user_id: string;
      refresh_hash: string;
      origin: SessionOrigin;
      user_agent: string | null;
      at: string;
    }
  | { type: 'Refresh'; presented_hash: string; new_hash: string; at: string }
  | { type: 'Revoke'; reason: RevokeReason; at: string };

export interface ChatSessionState {
  session_id: string | null;
  user_id: string | null;
  current_hash: string | null;
  /** Every refresh token this session has rotated away. */
  used_hashes: string[];
  revoked: boolean;
}

const initialState = (): ChatSessionState => ({
  session_id: null,
  user_id: null,
  current_hash: null,
  used_hashes: [],
  revoked: false,
});

function evolve(state: ChatSessionState, event: ChatSessionEvent): ChatSessionState {
  switch (event.type) {
    case 'ChatSessionStarted':
      return {
        ...state,
        session_id: event.data.session_id,
        user_id: event.data.user_id,
        current_hash: event.data.refresh_hash,
      };
    case 'RefreshTokenRotated':
      return {
        ...state,
        current_hash: event.data.refresh_hash,
        used_hashes: state.current_hash ? [...state.used_hashes, state.current_hash] : state.used_hashes,
      };
    case 'SessionRevoked':
      return { ...state, revoked: true, current_hash: null };
  }
}

export const invalidRefreshToken = () =>
  new DomainError('unauthorized', 'invalid_refresh_token', 'invalid or revoked refresh token');

function decide(command: ChatSessionCommand, state: ChatSessionState): ChatSessionEvent[] {
  switch (command.type) {
    case 'Start': {
      if (state.session_id) throw new DomainError('conflict', 'session_exists', 'session already started');
      const { type: _type, ...data } = command;
      return [{ type: 'ChatSessionStarted', data }];
    }
    case 'Refresh': {
      if (!state.session_id || !state.user_id || state.revoked) throw invalidRefreshToken();
      if (command.presented_hash === state.current_hash) {
        return [
          {
            type: 'RefreshTokenRotated',
            data: {
              session_id: state.session_id,
              user_id: state.user_id,
              refresh_hash: command.new_hash,
              at: command.at,
            },
          },
        ];
      }
      if (state.used_hashes.includes(command.presented_hash)) {
        // A token used twice: one of the two holders stole it. End the session for both.
        return [
          {
            type: 'SessionRevoked',
            data: {
              session_id: state.session_id,
              user_id: state.user_id,
              reason: 'refresh_token_reuse',
              at: command.at,
            },
          },
        ];
      }
      throw invalidRefreshToken();
    }
    case 'Revoke':
      if (!state.session_id || !state.user_id || state.revoked) return [];
      return [
        {
          type: 'SessionRevoked',
          data: { session_id: state.session_id, user_id: state.user_id, reason: command.reason, at: command.at },
        },
      ];
  }
}

export const chatSessionDecider: Decider<ChatSessionState, ChatSessionCommand, ChatSessionEvent> = {
  initialState,
  evolve,
  decide,
};
