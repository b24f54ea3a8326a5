// The user account aggregate (`orch.user-<uuid>`): creation, the API key and its rotations, role and
// activation. Secrets arrive already hashed or sealed; this module never sees a key in clear.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { Role, AuthSource, PrincipalType, UserEvent } from './events.ts';

export const ROLES: readonly Role[] = ['admin', 'user', 'readonly'];
/** The account created from ADMIN_API_KEY at start has this fixed id, so a restart finds it. */
export const BOOTSTRAP_ADMIN_ID = '00000000-0000-4000-8000-000000000001';
/** The runner's service principal, registered from ORCH_RUNNER_API_KEY. */
export const RUNNER_ID = '00000000-0000-4000-8000-000000000002';

export interface KeyMaterial {
  api_key_hash: string;
  api_key_sealed: string;
}

export type UserCommand =
  | {
      type: 'CreateUser';
      user_id: string;
      username: string;
      email: string;
      role: Role;
      auth_source: AuthSource;
      principal_type?: PrincipalType;
      key: KeyMaterial;
      password_hash: string | null;
      by: string | null;
      at: string;
    }
  /** Create the bootstrap admin, or rotate its key when ADMIN_API_KEY changed; else nothing. */
  | { type: 'EnsureBootstrapAdmin'; key: KeyMaterial; at: string }
  /** Register the runner's service principal, or rotate its key when ORCH_RUNNER_API_KEY changed. */
  | { type: 'EnsureRunner'; key: KeyMaterial; at: string }
  | { type: 'RotateApiKey'; key: KeyMaterial; by: string | null; reason: string; at: string }
  | { type: 'ChangeRole'; role: Role; by: string | null; at: string }
  | { type: 'SetActive'; is_active: boolean; by: string | null; at: string };

export interface UserState {
  exists: boolean;
  user_id: string | null;
  principal_type: PrincipalType | null;
  role: Role | null;
  is_active: boolean;
  api_key_hash: string | null;
}

const initialState = (): UserState => ({
  exists: false,
  user_id: null,
  principal_type: null,
  role: null,
  is_active: false,
  api_key_hash: null,
});

function evolve(state: UserState, event: UserEvent): UserState {
  switch (event.type) {
    case 'UserCreated':
      return {
        exists: true,
        user_id: event.data.user_id,
        principal_type: event.data.principal_type ?? 'account',
        role: event.data.role,
        is_active: true,
        api_key_hash: event.data.api_key_hash,
      };
    case 'UserApiKeyRotated':
      return { ...state, api_key_hash: event.data.api_key_hash };
    case 'UserRoleChanged':
      return { ...state, role: event.data.role };
    case 'UserDeactivated':
      return { ...state, is_active: false };
    case 'UserReactivated':
      return { ...state, is_active: true };
  }
}

/** The one not-found of a user, here and in the slice's commands. */
export const userNotFound = () => new DomainError('not_found', 'user_not_found', 'no such user');

function mustExist(state: UserState): asserts state is UserState & { user_id: string } {
  if (!state.exists || !state.user_id) throw userNotFound();
}

function decide(command: UserCommand, state: UserState): UserEvent[] {
  switch (command.type) {
    case 'CreateUser': {
      if (state.exists) throw new DomainError('conflict', 'user_exists', 'user already exists');
      const { user_id, username, email, role, auth_source, key, password_hash, by, at } = command;
      const principal_type = command.principal_type ?? 'account';
      return [
        {
          type: 'UserCreated',
          data: {
            user_id,
            username,
            email,
            role,
            auth_source,
            principal_type,
            ...key,
            password_hash,
            at,
            created_by: by,
          },
        },
      ];
    }
    case 'EnsureBootstrapAdmin':
      return ensureKeyed(
        state,
        command,
        {
          user_id: BOOTSTRAP_ADMIN_ID,
          username: 'admin',
          email: 'admin@localhost',
          role: 'admin',
          auth_source: 'bootstrap',
          principal_type: 'account',
        },
        'admin_api_key_changed',
      );
    case 'EnsureRunner':
      // The runner acts for the platform but is never an admin: role `user`.
      return ensureKeyed(
        state,
        command,
        {
          user_id: RUNNER_ID,
          username: 'runner',
          email: 'runner@localhost',
          role: 'user',
          auth_source: 'service',
          principal_type: 'service',
        },
        'runner_api_key_changed',
      );
    case 'RotateApiKey': {
      mustExist(state);
      return [
        {
          type: 'UserApiKeyRotated',
          data: {
            user_id: state.user_id,
            ...command.key,
            rotated_by: command.by,
            reason: command.reason,
            at: command.at,
          },
        },
      ];
    }
    case 'ChangeRole': {
      mustExist(state);
      if (state.role === command.role) return [];
      return [
        {
          type: 'UserRoleChanged',
          data: { user_id: state.user_id, role: command.role, changed_by: command.by, at: command.at },
        },
      ];
    }
    case 'SetActive': {
      mustExist(state);
      if (state.is_active === command.is_active) return [];
      const data = { user_id: state.user_id, changed_by: command.by, at: command.at };
      return [command.is_active ? { type: 'UserReactivated', data } : { type: 'UserDeactivated', data }];
    }
  }
}

/** A principal whose key comes from configuration: created once, rotated when the key changes. */
function ensureKeyed(
  state: UserState,
  command: { key: KeyMaterial; at: string },
  identity: {
    user_id: string;
    username: string;
    email: string;
    role: Role;
    auth_source: AuthSource;
    principal_type: PrincipalType;
  },
  reason: string,
): UserEvent[] {
  if (!state.exists) {
    return [
      {
        type: 'UserCreated',
        data: { ...identity, ...command.key, password_hash: null, at: command.at, created_by: null },
      },
    ];
  }
  if (state.api_key_hash === command.key.api_key_hash) return [];
  return [
    {
      type: 'UserApiKeyRotated',
      data: { user_id: identity.user_id, ...command.key, rotated_by: null, reason, at: command.at },
    },
  ];
}

export const userDecider: Decider<UserState, UserCommand, UserEvent> = { initialState, evolve, decide };
