// The tokens slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { Scope } from '../catalog.ts';

export type TokenEvent =
  | DomainEvent<
      'RegistryTokenCreated',
      {
        token_id: string;
        name: string;
        token_hash: string;
        token_prefix: string;
        scopes: Scope[];
        expires_at: string;
        created_by: string | null;
        at: string;
      }
    >
  | DomainEvent<'RegistryTokenRevoked', { token_id: string; revoked_by: string | null; at: string }>
  | DomainEvent<'RegistryTokenUsed', { token_id: string; at: string }>;

export const TOKEN_EVENT_TYPES = eventTypes<TokenEvent>()([
  'RegistryTokenCreated',
  'RegistryTokenRevoked',
  'RegistryTokenUsed',
]);
