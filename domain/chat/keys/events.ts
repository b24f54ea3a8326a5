// The keys slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type PublicPrekey = { key_id: number; public_key: string };

export type SignedPrekeyRecord = PublicPrekey & { signature: string };

export type KeysEvent =
  | DomainEvent<'IdentityKeyRegistered', { user_id: string; identity_key: string; at: string }>
  | DomainEvent<
      'SignedPrekeyUploaded',
      SignedPrekeyRecord & {
        user_id: string;
        previous_key_id: number | null;
        previous_valid_until: string | null;
        at: string;
      }
    >
  | DomainEvent<'PrekeysUploaded', { user_id: string; prekeys: PublicPrekey[]; at: string }>
  | DomainEvent<'KeysRemoved', { user_id: string; at: string }>;

export const KEYS_EVENT_TYPES = eventTypes<KeysEvent>()([
  'IdentityKeyRegistered',
  'SignedPrekeyUploaded',
  'PrekeysUploaded',
  'KeysRemoved',
]);

export type PrekeyClaimEvent = DomainEvent<
  'PrekeyConsumed',
  { user_id: string; key_id: number; public_key: string; remaining: number; fetched_by: string; at: string }
>;

export const PREKEY_CLAIM_EVENT_TYPES = eventTypes<PrekeyClaimEvent>()(['PrekeyConsumed']);
