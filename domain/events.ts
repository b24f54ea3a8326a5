// The event catalog: every event type the platform writes, by the union it belongs to. Each
// list is checked complete against its union at compile time (`eventTypes`). A test checks that
// every type here has a projection consuming it or is listed in AUDIT_ONLY with the reason.

import { ESTATE_EVENT_TYPES } from './orchestration/estate/decider.ts';
import { REGISTRATION_EVENT_TYPES } from './orchestration/users/registration.ts';
import { SECURITY_EVENT_TYPES } from './orchestration/users/audit.ts';
import { SESSION_EVENT_TYPES } from './orchestration/users/session.ts';
import { USER_EVENT_TYPES } from './orchestration/users/decider.ts';
import { RESERVATION_EVENT_TYPES } from './shared/reservation.ts';

export const EVENT_TYPES: readonly string[] = [
  ...USER_EVENT_TYPES,
  ...SESSION_EVENT_TYPES,
  ...SECURITY_EVENT_TYPES,
  ...REGISTRATION_EVENT_TYPES,
  ...RESERVATION_EVENT_TYPES,
  ...ESTATE_EVENT_TYPES,
];

/** Event types no read model consumes, and why: they are read back only from their own stream or by auditors. */
export const AUDIT_ONLY: Readonly<Record<string, string>> = {
  UniqueValueReserved: 'the reservation stream itself is the state; the command that reserves reads it back',
  LocalRegistrationClaimed: 'the claim stream itself is the state; kept for auditors',
};
