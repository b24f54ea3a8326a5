// A browser session (`orch.session-<sha256 of the session id>`): started at login or forward-auth
// sign-in, ended at logout. The session id itself never reaches the log, only its hash.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { SessionEvent } from './events.ts';

/** Cookie lifetime: the spec leaves it open; twelve hours of absolute lifetime. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export type SessionCommand =
  | { type: 'StartSession'; session_hash: string; user_id: string; via: 'password' | 'forward_auth'; at: string }
  | { type: 'EndSession'; at: string };

export interface SessionState {
  session_hash: string | null;
  user_id: string | null;
  ended: boolean;
}

function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  switch (command.type) {
    case 'StartSession': {
      if (state.session_hash) throw new DomainError('conflict', 'session_exists', 'session already started');
      const expires_at = new Date(Date.parse(command.at) + SESSION_TTL_MS).toISOString();
      return [
        {
          type: 'SessionStarted',
          data: {
            session_hash: command.session_hash,
            user_id: command.user_id,
            via: command.via,
            expires_at,
            at: command.at,
          },
        },
      ];
    }
    case 'EndSession':
      if (!state.session_hash || !state.user_id || state.ended) return [];
      return [
        {
          type: 'SessionEnded',
          data: { session_hash: state.session_hash, user_id: state.user_id, reason: 'logout', at: command.at },
        },
      ];
  }
}

function evolve(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionStarted':
      return { session_hash: event.data.session_hash, user_id: event.data.user_id, ended: false };
    case 'SessionEnded':
      return { ...state, ended: true };
  }
}

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = {
  initialState: () => ({ session_hash: null, user_id: null, ended: false }),
  evolve,
  decide,
};
