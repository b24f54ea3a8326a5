// The deployments slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { Changes, Channel, Product } from '../catalog.ts';

export type DeploymentFields = {
  version: string;
  channel: Channel;
  endpoint_url: string | null;
  instance_id: string | null;
  first_deployed_at: string;
  last_seen_at: string | null;
};

export type Ref = { deployment_id: string; customer_id: string; customer_slug: string; product: Product };

export type DeploymentEvent =
  | DomainEvent<'DeploymentRegistered', Ref & DeploymentFields & { at: string }>
  | DomainEvent<'DeploymentUpdated', Ref & { changes: Changes; at: string }>;

export const DEPLOYMENT_EVENT_TYPES = eventTypes<DeploymentEvent>()(['DeploymentRegistered', 'DeploymentUpdated']);
