// The auditors' views of a profile, read from its own stream in the log rather than from a read
// model: its change history, and the profile as it was at an instant.

import {
  SLUG_PATTERN,
  changedFields,
  profileDecider,
  profileNotFound,
} from '../../../domain/orchestration/profiles/decider.ts';
import type { AgentProfileStreamEvent, Profile } from '../../../domain/orchestration/profiles/events.ts';
import { profileStream } from '../../../domain/orchestration/streams.ts';
import { asDomainEvent } from '../../../infra/commands.ts';
import type { OrchDeps } from '../deps.ts';
import { profileView } from './commands.ts';

type HistoryDeps = Pick<OrchDeps, 'commands'>;

async function streamOf(deps: HistoryDeps, slug: string) {
  if (!SLUG_PATTERN.test(slug)) return []; // no profile can have it: no stream to read
  const recorded = await deps.commands.store.readStream(profileStream(slug));
  return recorded.map((r) => ({ recorded: r, event: asDomainEvent<AgentProfileStreamEvent>(r) }));
}

export interface HistoryEntry {
  revision: number;
  event_type: string;
  changed_fields: string[];
  actor: { kind: string; id: string | null };
  correlation_id: string | null;
  at: string;
}

/** Every change of the profile, oldest first (its knowledge events are left out: they change the knowledge). */
export async function profileHistory(deps: HistoryDeps, slug: string): Promise<HistoryEntry[]> {
  const events = await streamOf(deps, slug);
  if (events.length === 0) throw profileNotFound();
  return events.flatMap(({ recorded, event }) => {
    const changed = changedFields(event);
    if (!changed) return [];
    return [
      {
        revision: Number(recorded.revision),
        event_type: event.type,
        changed_fields: changed,
        actor: { kind: recorded.metadata.actor.kind, id: recorded.metadata.actor.id },
        correlation_id: recorded.metadata.correlation_id ?? null,
        at: new Date((event.data as { at: string }).at).toISOString(),
      },
    ];
  });
}

/** The profile as it was at `instant`: the stream folded up to its last event at or before it; 404 before the profile existed. */
export async function profileAsOf(deps: HistoryDeps, slug: string, instant: Date): Promise<Profile> {
  let state = profileDecider.initialState();
  for (const { event } of await streamOf(deps, slug)) {
    if (Date.parse((event.data as { at: string }).at) > instant.getTime()) break;
    state = profileDecider.evolve(state, event);
  }
  if (!state.profile) throw profileNotFound();
  return profileView(state.profile);
}
