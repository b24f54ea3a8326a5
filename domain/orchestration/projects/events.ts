// The projects slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type ProjectFields = {
  name: string;
  repo_path: string | null;
  max_concurrent_agents: number;
};

export type ProjectEvent =
  | DomainEvent<'ProjectCreated', ProjectFields & { project_id: string; owner_id: string; at: string }>
  /** Only the fields that changed, with their new values. */
  | DomainEvent<'ProjectUpdated', Partial<ProjectFields> & { project_id: string; at: string }>;

export const PROJECT_EVENT_TYPES = eventTypes<ProjectEvent>()(['ProjectCreated', 'ProjectUpdated']);
