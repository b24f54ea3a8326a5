// The accounts slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type Profile = {
  display_name: string;
  avatar_url: string | null;
  bio: string | null;
  pronouns: string | null;
};

export type AccountEvent =
  | DomainEvent<
      'UserRegistered',
      {
        user_id: string;
        username: string;
        display_name: string;
        email: string;
        password_hash: string;
        recovery_code_hash: string;
        is_owner: boolean;
        is_admin: boolean;
        invite_id: string | null;
        at: string;
      }
    >
  | DomainEvent<'PasswordChanged', { user_id: string; password_hash: string; at: string }>
  | DomainEvent<'AccountRecovered', { user_id: string; password_hash: string; recovery_code_hash: string; at: string }>
  | DomainEvent<'AccountProfileUpdated', { user_id: string } & Profile & { at: string }>
  | DomainEvent<'AccountDeleted', { user_id: string; at: string }>
  // Bots (issue 16): an account with no password, no email and no keys until it registers them.
  | DomainEvent<
      'BotRegistered',
      {
        user_id: string;
        username: string;
        display_name: string;
        created_by: string | null;
        integration: string | null;
        at: string;
      }
    >
  // Instance administration.
  | DomainEvent<'UserSuspended', { user_id: string; reason: string; by: string; at: string }>
  | DomainEvent<'UserUnsuspended', { user_id: string; by: string; at: string }>
  | DomainEvent<'AdminRoleChanged', { user_id: string; is_admin: boolean; by: string; at: string }>
  | DomainEvent<'PasswordReplaced', { user_id: string; password_hash: string; by: string; at: string }>;

export const ACCOUNT_EVENT_TYPES = eventTypes<AccountEvent>()([
  'UserRegistered',
  'PasswordChanged',
  'AccountRecovered',
  'AccountProfileUpdated',
  'AccountDeleted',
  'BotRegistered',
  'UserSuspended',
  'UserUnsuspended',
  'AdminRoleChanged',
  'PasswordReplaced',
]);
