// The registry service's stream categories (`registry.*`): one table, with the id each stream is
// named by and the event types it carries (see domain/shared/streams.ts, and
// docs/reference/streams.md, generated from it).

import { RESERVATION_EVENT_TYPES } from '../shared/reservation.ts';
import { only, streamCategory } from '../shared/streams.ts';
import { CUSTOMER_EVENT_TYPES } from './customers/events.ts';
import { DEPLOYMENT_EVENT_TYPES } from './deployments/events.ts';
import { REGISTRY_SESSION_EVENT_TYPES } from './sessions/events.ts';
import { SUBSCRIPTION_EVENT_TYPES } from './subscriptions/events.ts';
import { TOKEN_EVENT_TYPES } from './tokens/events.ts';

export const REGISTRY_STREAMS = {
  customer: streamCategory('registry.customer', {
    id: 'customer uuid',
    events: CUSTOMER_EVENT_TYPES,
    description: 'A customer record and everything filed under it.',
  }),
  deployment: streamCategory('registry.deployment', {
    id: 'deployment uuid',
    events: DEPLOYMENT_EVENT_TYPES,
    description: 'Who runs which product at which version, where.',
  }),
  subscription: streamCategory('registry.subscription', {
    id: 'subscription uuid',
    events: SUBSCRIPTION_EVENT_TYPES,
    description: 'Recurring revenue of one customer for one product.',
  }),
  session: streamCategory('registry.session', {
    id: 'sha256 of the session id',
    events: REGISTRY_SESSION_EVENT_TYPES,
    description: 'An interactive registry session.',
  }),
  token: streamCategory('registry.token', {
    id: 'token uuid',
    events: only(TOKEN_EVENT_TYPES, 'RegistryTokenCreated', 'RegistryTokenRevoked'),
    description: 'A machine token: created, revoked.',
  }),
  token_use: streamCategory('registry.token_use', {
    id: 'token uuid',
    events: only(TOKEN_EVENT_TYPES, 'RegistryTokenUsed'),
    description: 'Uses of a token, coalesced to one a minute per token and process; no decision reads it.',
  }),
  customer_slug_reservation: streamCategory('registry.customer_slug_reservation', {
    id: 'customer slug',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of a customer slug (kind `customer_slug`).',
  }),
  lead_email_reservation: streamCategory('registry.lead_email_reservation', {
    id: 'sha256 of the lowercased e-mail',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of a lead e-mail address (kind `lead_email`).',
  }),
} as const;

/** The reservation category of each reservation kind the registry reserves. */
export const REGISTRY_RESERVATIONS = {
  customer_slug: REGISTRY_STREAMS.customer_slug_reservation,
  lead_email: REGISTRY_STREAMS.lead_email_reservation,
} as const;

export const customerStream = REGISTRY_STREAMS.customer.stream;
export const deploymentStream = REGISTRY_STREAMS.deployment.stream;
export const subscriptionStream = REGISTRY_STREAMS.subscription.stream;
export const registrySessionStream = REGISTRY_STREAMS.session.stream;
export const tokenStream = REGISTRY_STREAMS.token.stream;
export const tokenUseStream = REGISTRY_STREAMS.token_use.stream;
