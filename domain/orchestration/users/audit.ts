// Security audit events that belong to no aggregate: each is appended to its own `audit-<uuid>`
// stream. Personal data (an email typed at login) is kept only as a hash.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type RotationRefusalReason =
  | 'api_key_rotation_requires_interactive_session'
  | 'api_key_rotation_csrf'
  | 'api_key_rotation_requires_admin'
  | 'api_key_rotation_not_found'
  | 'api_key_rotation_service_principal'
  | 'api_key_rotation_agent_credential'
  | 'unauthenticated';

export type SecurityEvent =
  | DomainEvent<'LoginFailed', { user_id: string | null; email_hash: string; reason: 'bad_credentials' | 'locked' | 'rate_limited'; peer: string; at: string }>
  | DomainEvent<'ApiKeyRotationRefused', {
    actor_id: string | null; actor_kind: string; target_user_id: string | null; route: 'self' | 'admin' | 'cli'; reason: RotationRefusalReason; at: string;
  }>;

export const SECURITY_EVENT_TYPES = eventTypes<SecurityEvent>()(['LoginFailed', 'ApiKeyRotationRefused']);

export const auditStream = (id: string) => `audit-${id}`;
