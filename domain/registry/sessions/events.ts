// The sessions slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type InteractiveRole = 'admin' | 'readonly';

export type RegistrySessionEvent =
  | DomainEvent<
      'RegistrySessionStarted',
      {
        session_hash: string;
        subject: string;
        name: string;
        email: string | null;
        role: InteractiveRole;
        via: 'oidc';
        expires_at: string;
        at: string;
      }
    >
  | DomainEvent<'RegistrySessionEnded', { session_hash: string; reason: 'logout'; at: string }>;

export const REGISTRY_SESSION_EVENT_TYPES = eventTypes<RegistrySessionEvent>()([
  'RegistrySessionStarted',
  'RegistrySessionEnded',
]);
