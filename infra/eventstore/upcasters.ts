// Old events are lifted to their type's current version at read time, by the contract the
// slices declare (domain/shared/event-contract.ts, composed in domain/events.ts). The log is
// never rewritten: the stored event keeps its data and `metadata.schema`.

import { EVENT_CONTRACT } from '../../domain/events.ts';
import type { EventContract } from '../../domain/shared/event-contract.ts';
import type { RecordedEvent } from './port.ts';

/** The event with its data at the current version (and `metadata.schema` saying so); the same object when it already is. */
export const upcast = (event: RecordedEvent): RecordedEvent => upcastWith(EVENT_CONTRACT, event);

/** `upcast` by another contract (a test's). */
export function upcastWith(contract: EventContract, event: RecordedEvent): RecordedEvent {
  const stored = { type: event.type, schema: Number(event.metadata?.schema ?? 1), data: event.data };
  const current = contract.upcast(stored);
  return current === stored
    ? event
    : { ...event, data: current.data, metadata: { ...event.metadata, schema: current.schema } };
}

/** The version an event of `type` is written at. */
export const schemaVersion = (type: string): number => EVENT_CONTRACT.versionOf(type);
