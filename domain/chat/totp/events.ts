// The totp slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type TotpEvent =
  | DomainEvent<'TotpSetupStarted', { user_id: string; secret_sealed: string; at: string }>
  | DomainEvent<'TotpEnabled', { user_id: string; counter: number; backup_code_hashes: string[]; at: string }>
  | DomainEvent<'TotpDisabled', { user_id: string; at: string }>
  | DomainEvent<'TotpCodeUsed', { user_id: string; counter: number; at: string }>
  | DomainEvent<'BackupCodeUsed', { user_id: string; code_hash: string; at: string }>;

export const TOTP_EVENT_TYPES = eventTypes<TotpEvent>()([
  'TotpSetupStarted',
  'TotpEnabled',
  'TotpDisabled',
  'TotpCodeUsed',
  'BackupCodeUsed',
]);
