// The invites slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type InviteEvent =
  | DomainEvent<
      'RegistrationInviteCreated',
      { invite_id: string; code_hash: string; created_by: string; expires_at: string | null; at: string }
    >
  | DomainEvent<'RegistrationInviteRedeemed', { invite_id: string; user_id: string; at: string }>
  | DomainEvent<'RegistrationInviteRevoked', { invite_id: string; revoked_by: string; at: string }>;

export const INVITE_EVENT_TYPES = eventTypes<InviteEvent>()([
  'RegistrationInviteCreated',
  'RegistrationInviteRedeemed',
  'RegistrationInviteRevoked',
]);
