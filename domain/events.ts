// The event catalog: every event type the platform writes, by the union it belongs to. Each
// list is checked complete against its union at compile time (`eventTypes`). A test checks that
// every type here has a projection consuming it or is listed in AUDIT_ONLY with the reason.

import { ACCOUNT_EVENT_TYPES } from './chat/accounts/decider.ts';
import { INVITE_EVENT_TYPES } from './chat/invites/decider.ts';
import { PREKEY_CLAIM_EVENT_TYPES } from './chat/keys/claim.ts';
import { KEYS_EVENT_TYPES } from './chat/keys/decider.ts';
import { CHAT_SESSION_EVENT_TYPES } from './chat/sessions/decider.ts';
import { TOTP_EVENT_TYPES } from './chat/totp/decider.ts';
import { BLOCK_EVENT_TYPES, REPORT_EVENT_TYPES } from './chat/users/decider.ts';
import { ESTATE_EVENT_TYPES } from './orchestration/estate/decider.ts';
import { REGISTRATION_EVENT_TYPES } from './orchestration/users/registration.ts';
import { SECURITY_EVENT_TYPES } from './orchestration/users/audit.ts';
import { SESSION_EVENT_TYPES } from './orchestration/users/session.ts';
import { USER_EVENT_TYPES } from './orchestration/users/decider.ts';
import { RESERVATION_EVENT_TYPES } from './shared/reservation.ts';
import { PROFILE_EVENT_TYPES } from './orchestration/profiles/decider.ts';
import { KNOWLEDGE_EVENT_TYPES } from './orchestration/knowledge/decider.ts';
import { CUSTOMER_EVENT_TYPES } from './registry/customers/decider.ts';
import { DEPLOYMENT_EVENT_TYPES } from './registry/deployments/decider.ts';
import { REGISTRY_SESSION_EVENT_TYPES } from './registry/sessions/decider.ts';
import { SUBSCRIPTION_EVENT_TYPES } from './registry/subscriptions/decider.ts';
import { TOKEN_EVENT_TYPES } from './registry/tokens/decider.ts';

export const EVENT_TYPES: readonly string[] = [
  ...USER_EVENT_TYPES,
  ...SESSION_EVENT_TYPES,
  ...SECURITY_EVENT_TYPES,
  ...REGISTRATION_EVENT_TYPES,
  ...RESERVATION_EVENT_TYPES,
  ...PROFILE_EVENT_TYPES,
  ...KNOWLEDGE_EVENT_TYPES,
  ...CUSTOMER_EVENT_TYPES,
  ...DEPLOYMENT_EVENT_TYPES,
  ...SUBSCRIPTION_EVENT_TYPES,
  ...TOKEN_EVENT_TYPES,
  ...REGISTRY_SESSION_EVENT_TYPES,
  ...ACCOUNT_EVENT_TYPES,
  ...CHAT_SESSION_EVENT_TYPES,
  ...TOTP_EVENT_TYPES,
  ...KEYS_EVENT_TYPES,
  ...PREKEY_CLAIM_EVENT_TYPES,
  ...BLOCK_EVENT_TYPES,
  ...REPORT_EVENT_TYPES,
  ...INVITE_EVENT_TYPES,
  ...ESTATE_EVENT_TYPES,
];

/** Event types no read model consumes, and why: they are read back only from their own stream or by auditors. */
export const AUDIT_ONLY: Readonly<Record<string, string>> = {
  UniqueValueReserved: 'the reservation stream itself is the state; the command that reserves reads it back',
  LocalRegistrationClaimed: 'the claim stream itself is the state; kept for auditors',
};
