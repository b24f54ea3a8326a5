// The users slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type Role = 'admin' | 'user' | 'readonly';

export type AuthSource = 'local' | 'forward_auth' | 'bootstrap' | 'service' | 'agent';

/** People have accounts; the runner is a service principal; spawned agents hold agent credentials. */
export type PrincipalType = 'account' | 'service' | 'agent';

export type UserEvent =
  | DomainEvent<
      'UserCreated',
      {
        user_id: string;
        username: string;
        email: string;
        role: Role;
        auth_source: AuthSource;
        principal_type: PrincipalType;
        api_key_hash: string;
        api_key_sealed: string;
        password_hash: string | null;
        at: string;
        created_by: string | null;
      }
    >
  | DomainEvent<
      'UserApiKeyRotated',
      {
        user_id: string;
        api_key_hash: string;
        api_key_sealed: string;
        rotated_by: string | null;
        reason: string;
        at: string;
      }
    >
  | DomainEvent<'UserRoleChanged', { user_id: string; role: Role; changed_by: string | null; at: string }>
  | DomainEvent<'UserDeactivated', { user_id: string; changed_by: string | null; at: string }>
  | DomainEvent<'UserReactivated', { user_id: string; changed_by: string | null; at: string }>;

export const USER_EVENT_TYPES = eventTypes<UserEvent>()([
  'UserCreated',
  'UserApiKeyRotated',
  'UserRoleChanged',
  'UserDeactivated',
  'UserReactivated',
]);

// Security audit events that belong to no aggregate: each is appended to its own `orch.audit-<uuid>`
// stream. Personal data (an email typed at login) is kept only as a hash.

export type RotationRefusalReason =
  | 'api_key_rotation_requires_interactive_session'
  | 'api_key_rotation_csrf'
  | 'api_key_rotation_requires_admin'
  | 'api_key_rotation_not_found'
  | 'api_key_rotation_service_principal'
  | 'api_key_rotation_agent_credential'
  | 'unauthenticated';

export type SecurityEvent =
  | DomainEvent<
      'LoginFailed',
      {
        user_id: string | null;
        email_hash: string;
        reason: 'bad_credentials' | 'locked' | 'rate_limited';
        peer: string;
        at: string;
      }
    >
  | DomainEvent<
      'ApiKeyRotationRefused',
      {
        actor_id: string | null;
        actor_kind: string;
        target_user_id: string | null;
        route: 'self' | 'admin' | 'cli';
        reason: RotationRefusalReason;
        at: string;
      }
    >;

export const SECURITY_EVENT_TYPES = eventTypes<SecurityEvent>()(['LoginFailed', 'ApiKeyRotationRefused']);

export type RegistrationEvent = DomainEvent<'LocalRegistrationClaimed', { user_id: string }>;

export const REGISTRATION_EVENT_TYPES = eventTypes<RegistrationEvent>()(['LocalRegistrationClaimed']);

export type SessionEvent =
  | DomainEvent<
      'SessionStarted',
      { session_hash: string; user_id: string; via: 'password' | 'forward_auth'; expires_at: string; at: string }
    >
  | DomainEvent<'SessionEnded', { session_hash: string; user_id: string; reason: 'logout'; at: string }>;

export const SESSION_EVENT_TYPES = eventTypes<SessionEvent>()(['SessionStarted', 'SessionEnded']);
