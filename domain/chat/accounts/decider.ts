// A chat account (`chat.user-<uuid>`): registration, password changes and recovery, the
// profile, deletion. Secrets arrive hashed (the password with scrypt, the recovery code with
// SHA-256: it carries 100 random bits); this module never sees one in clear.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { Profile, AccountEvent } from './events.ts';

export type AccountCommand =
  | {
      type: 'Register';
      user_id: string;
      username: string;
      display_name: string;
      email: string;
      password_hash: string;
      recovery_code_hash: string;
      is_owner: boolean;
      invite_id: string | null;
      at: string;
    }
  | { type: 'ChangePassword'; password_hash: string; at: string }
  /** The presented code's hash must match; the new one replaces it. */
  | { type: 'Recover'; presented_code_hash: string; password_hash: string; new_recovery_code_hash: string; at: string }
  | { type: 'UpdateProfile'; changes: Partial<Profile>; at: string }
  | { type: 'Delete'; at: string }
  | {
      type: 'RegisterBot';
      user_id: string;
      username: string;
      display_name: string;
      created_by: string | null;
      integration: string | null;
      at: string;
    }
  | { type: 'Suspend'; reason: string; by: string; at: string }
  | { type: 'Unsuspend'; by: string; at: string }
  | { type: 'SetAdmin'; is_admin: boolean; by: string; at: string }
  | { type: 'ResetPassword'; password_hash: string; by: string; at: string };

export interface AccountState {
  user_id: string | null;
  deleted: boolean;
  recovery_code_hash: string | null;
  profile: Profile;
  is_bot: boolean;
  is_owner: boolean;
  is_admin: boolean;
  suspended: boolean;
}

const initialState = (): AccountState => ({
  user_id: null,
  deleted: false,
  recovery_code_hash: null,
  profile: { display_name: '', avatar_url: null, bio: null, pronouns: null },
  is_bot: false,
  is_owner: false,
  is_admin: false,
  suspended: false,
});

function evolve(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'UserRegistered':
      return {
        ...state,
        user_id: event.data.user_id,
        recovery_code_hash: event.data.recovery_code_hash,
        profile: { ...state.profile, display_name: event.data.display_name },
        is_owner: event.data.is_owner,
        is_admin: event.data.is_admin,
      };
    case 'BotRegistered':
      return {
        ...state,
        user_id: event.data.user_id,
        is_bot: true,
        profile: { ...state.profile, display_name: event.data.display_name },
      };
    case 'UserSuspended':
      return { ...state, suspended: true };
    case 'UserUnsuspended':
      return { ...state, suspended: false };
    case 'AdminRoleChanged':
      return { ...state, is_admin: event.data.is_admin };
    case 'PasswordReplaced':
      return state;
    case 'PasswordChanged':
      return state;
    case 'AccountRecovered':
      return { ...state, recovery_code_hash: event.data.recovery_code_hash };
    case 'AccountProfileUpdated': {
      const { display_name, avatar_url, bio, pronouns } = event.data;
      return { ...state, profile: { display_name, avatar_url, bio, pronouns } };
    }
    case 'AccountDeleted':
      return { ...state, deleted: true, recovery_code_hash: null, is_admin: false };
  }
}

/** Unknown and deleted accounts read the same to callers. */
function live(state: AccountState): string {
  if (!state.user_id || state.deleted) throw new DomainError('not_found', 'user_not_found', 'no such user');
  return state.user_id;
}

function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  switch (command.type) {
    case 'Register': {
      if (state.user_id) throw new DomainError('conflict', 'user_exists', 'user already exists');
      const { type: _type, ...data } = command;
      return [{ type: 'UserRegistered', data: { ...data, is_admin: command.is_owner } }];
    }
    case 'ChangePassword':
      return [
        {
          type: 'PasswordChanged',
          data: { user_id: live(state), password_hash: command.password_hash, at: command.at },
        },
      ];
    case 'Recover': {
      // Wrong code, unknown and deleted accounts answer alike.
      if (!state.user_id || state.deleted || state.recovery_code_hash !== command.presented_code_hash) {
        throw new DomainError('unauthorized', 'invalid_recovery', 'invalid username or recovery code');
      }
      return [
        {
          type: 'AccountRecovered',
          data: {
            user_id: state.user_id,
            password_hash: command.password_hash,
            recovery_code_hash: command.new_recovery_code_hash,
            at: command.at,
          },
        },
      ];
    }
    case 'UpdateProfile': {
      const user_id = live(state);
      const next = { ...state.profile, ...command.changes };
      if (JSON.stringify(next) === JSON.stringify(state.profile)) return [];
      return [{ type: 'AccountProfileUpdated', data: { user_id, ...next, at: command.at } }];
    }
    case 'Delete':
      return [{ type: 'AccountDeleted', data: { user_id: live(state), at: command.at } }];
    case 'RegisterBot': {
      if (state.user_id) throw new DomainError('conflict', 'user_exists', 'user already exists');
      const { type: _type, ...data } = command;
      return [{ type: 'BotRegistered', data }];
    }
    case 'Suspend': {
      const user_id = live(state);
      if (state.is_owner)
        throw new DomainError('forbidden', 'owner_protected', 'the instance owner cannot be suspended');
      if (user_id === command.by)
        throw new DomainError('invalid', 'cannot_suspend_self', 'you cannot suspend yourself');
      if (state.suspended) return [];
      return [{ type: 'UserSuspended', data: { user_id, reason: command.reason, by: command.by, at: command.at } }];
    }
    case 'Unsuspend': {
      const user_id = live(state);
      return state.suspended ? [{ type: 'UserUnsuspended', data: { user_id, by: command.by, at: command.at } }] : [];
    }
    case 'SetAdmin': {
      const user_id = live(state);
      if (state.is_bot) throw new DomainError('invalid', 'bot_account', 'a bot cannot be an instance admin');
      if (state.is_owner && !command.is_admin)
        throw new DomainError('forbidden', 'owner_protected', 'the instance owner stays an admin');
      if (state.is_admin === command.is_admin) return [];
      return [
        { type: 'AdminRoleChanged', data: { user_id, is_admin: command.is_admin, by: command.by, at: command.at } },
      ];
    }
    case 'ResetPassword': {
      const user_id = live(state);
      if (state.is_bot) throw new DomainError('invalid', 'bot_account', 'a bot has no password');
      return [
        {
          type: 'PasswordReplaced',
          data: { user_id, password_hash: command.password_hash, by: command.by, at: command.at },
        },
      ];
    }
  }
}

export const accountDecider: Decider<AccountState, AccountCommand, AccountEvent> = { initialState, evolve, decide };

/** Usernames: mentions (`@username`) depend on this exact alphabet. */
export const USERNAME_PATTERN = /^[A-Za-z0-9_]{3,32}$/;
