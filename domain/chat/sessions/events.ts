// The sessions slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type SessionOrigin = 'register' | 'login' | 'recovery';

export type RevokeReason =
  'revoked' | 'revoke_all' | 'refresh_token_reuse' | 'password_changed' | 'recovery' | 'account_deleted';

export type ChatSessionEvent =
  | DomainEvent<
      'ChatSessionStarted',
      {
        session_id: string;
        user_id: string;
        refresh_hash: string;
        origin: SessionOrigin;
        user_agent: string | null;
        at: string;
      }
    >
  | DomainEvent<'RefreshTokenRotated', { session_id: string; user_id: string; refresh_hash: string; at: string }>
  | DomainEvent<'SessionRevoked', { session_id: string; user_id: string; reason: RevokeReason; at: string }>;

export const CHAT_SESSION_EVENT_TYPES = eventTypes<ChatSessionEvent>()([
  'ChatSessionStarted',
  'RefreshTokenRotated',
  'SessionRevoked',
]);
