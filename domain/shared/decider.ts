// The shape of every aggregate's decision logic: pure, no I/O. Commands are decided against the
// state folded from the aggregate's stream; the result is the events to append, or a DomainError.

export interface DomainEvent<
  Type extends string = string,
  Data extends Record<string, unknown> = Record<string, unknown>,
> {
  type: Type;
  data: Data;
}

export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** Returns the events the command produces (possibly none), or throws a DomainError. */
  decide(command: Command, state: State): Event[];
}

/**
 * A rejection the caller can act on. `kind` tells the API which status family applies;
 * `code` is the machine-readable reason the spec names.
 */
export type DomainErrorKind =
  'invalid' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'rate_limited' | 'unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export function fold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  events: Event[],
): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState());
}

/**
 * The runtime list of an event union's type names, checked complete at compile time: leaving a
 * member of the union out of the list is a type error. The event catalog (domain/events.ts) is
 * built from these lists, so a test can check that every event type has a consumer.
 *
 * The second argument declares the types whose data is past version 1 (see event-contract.ts);
 * the list carries it as `versions`.
 *
 *   export const USER_EVENT_TYPES = eventTypes<UserEvent>()(['UserCreated', ...]);
 *   export const MESSAGE_EVENT_TYPES = eventTypes<MessageEvent>()(['MessagePosted', ...], { MessageDeleted: 2 });
 */
export function eventTypes<Event extends DomainEvent>() {
  return <const Types extends readonly Event['type'][]>(
    types: Types &
      ([Exclude<Event['type'], Types[number]>] extends [never]
        ? unknown
        : { missing: Exclude<Event['type'], Types[number]> }),
    versions: { readonly [T in Types[number]]?: number } = {},
  ): Types & { readonly versions: Readonly<Record<string, number>> } =>
    Object.assign(types, { versions: versions as Readonly<Record<string, number>> });
}
