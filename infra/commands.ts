// The command handler of DESIGN.md "Commands": load the aggregate's stream, fold it, decide,
// append with the revision read, and retry a bounded number of times when another writer got
// there first (the decision is taken again on the new state, never blindly re-appended).

import { randomUUID } from 'node:crypto';
import type { Decider, DomainEvent } from '../domain/shared/decider.ts';
import type { Actor, AppendResult, EventStore, EventToAppend, RecordedEvent } from './eventstore/port.ts';
import { WrongExpectedRevisionError } from './eventstore/port.ts';
import { upcast } from './eventstore/upcasters.ts';

export interface CommandContext {
  actor: Actor;
  /** The request id. */
  correlationId: string | null;
  causationId?: string | null;
}

export interface CommandResult<State, Event> {
  events: Event[];
  state: State;
  /** Null when the command produced no events (nothing was appended). */
  appended: AppendResult | null;
}

const MAX_ATTEMPTS = 5;

/** Current schema version of each event type's data; events default to 1. */
const schemas = new Map<string, number>();
export function registerSchema(type: string, version: number): void {
  schemas.set(type, version);
}

export function toAppend(event: DomainEvent, context: CommandContext): EventToAppend {
  return {
    id: randomUUID(),
    type: event.type,
    data: event.data,
    metadata: {
      actor: context.actor,
      correlation_id: context.correlationId,
      causation_id: context.causationId ?? null,
      schema: schemas.get(event.type) ?? 1,
    },
  };
}

export function asDomainEvent<Event extends DomainEvent>(recorded: RecordedEvent): Event {
  const current = upcast(recorded);
  return { type: current.type, data: current.data } as Event;
}

export async function handleCommand<State, Command, Event extends DomainEvent>(
  store: EventStore,
  stream: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  context: CommandContext,
): Promise<CommandResult<State, Event>> {
  for (let attempt = 1; ; attempt++) {
    const history = await store.readStream(stream);
    let state = history.map((e) => asDomainEvent<Event>(e)).reduce(decider.evolve, decider.initialState());
    const events = decider.decide(command, state);
    if (events.length === 0) return { events, state, appended: null };
    const last = history.at(-1);
    try {
      const appended = await store.append(stream, events.map((e) => toAppend(e, context)), {
        expected: last ? last.revision : 'no_stream',
      });
      state = events.reduce(decider.evolve, state);
      return { events, state, appended };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}
