// An interactive registry session (`registry.session-<sha256 of the session id>`), started at the
// end of an OIDC sign-in and ended at logout. The session id lives only in the cookie; the log
// keeps its hash. The role is fixed at sign-in from the identity provider's groups.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { InteractiveRole, RegistrySessionEvent } from './events.ts';

/** Absolute session lifetime: twelve hours, like the orchestration service's sessions. */
export const REGISTRY_SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export type RegistrySessionCommand =
  | {
      type: 'StartSession';
      session_hash: string;
      subject: string;
      name: string;
      email: string | null;
      role: InteractiveRole;
      at: string;
    }
  | { type: 'EndSession'; at: string };

export interface RegistrySessionState {
  session_hash: string | null;
  ended: boolean;
}

function decide(command: RegistrySessionCommand, state: RegistrySessionState): RegistrySessionEvent[] {
  switch (command.type) {
    case 'StartSession': {
      if (state.session_hash) throw new DomainError('conflict', 'session_exists', 'session already started');
      const { session_hash, subject, name, email, role, at } = command;
      const expires_at = new Date(Date.parse(at) + REGISTRY_SESSION_TTL_MS).toISOString();
      return [
        {
          type: 'RegistrySessionStarted',
          data: { session_hash, subject, name, email, role, via: 'oidc', expires_at, at },
        },
      ];
    }
    case 'EndSession':
      if (!state.session_hash || state.ended) return [];
      return [
        { type: 'RegistrySessionEnded', data: { session_hash: state.session_hash, reason: 'logout', at: command.at } },
      ];
  }
}

function evolve(state: RegistrySessionState, event: RegistrySessionEvent): RegistrySessionState {
  switch (event.type) {
    case 'RegistrySessionStarted':
      return { session_hash: event.data.session_hash, ended: false };
    case 'RegistrySessionEnded':
      return { ...state, ended: true };
  }
}

export const registrySessionDecider: Decider<RegistrySessionState, RegistrySessionCommand, RegistrySessionEvent> = {
  initialState: () => ({ session_hash: null, ended: false }),
  evolve,
  decide,
};
