// In tests, every event the platform appends is checked against the recorded shape of its type
// at the version it carries (domain/event-shapes.json): data the TypeScript union does not
// describe (a field an `as` cast let through, an undefined where the type says null) fails the
// append, and so the test, instead of reaching an auditor years later.

import { Ajv, type ValidateFunction } from 'ajv';
import type { EventStore, EventToAppend } from '../../infra/eventstore/port.ts';
import { readShapes } from './event-shapes.ts';

let validators: Map<string, ValidateFunction> | null = null;
const ajv = new Ajv({ allErrors: true, strict: false });

let recorded: Set<string> | null = null;

function validatorFor(type: string, version: number): ValidateFunction | null {
  validators ??= new Map(
    Object.entries(readShapes()).flatMap(([t, byVersion]) =>
      Object.entries(byVersion).map(([v, schema]) => [`${t}@${v}`, ajv.compile(schema)] as const),
    ),
  );
  return validators.get(`${type}@${version}`) ?? null;
}

/** Why `event` does not match its recorded shape, or null when it does. */
export function shapeProblem(event: Pick<EventToAppend, 'type' | 'data' | 'metadata'>): string | null {
  // A type the platform does not write is a test's own (a suite appending `Numbered` to exercise the log): not checked.
  recorded ??= new Set(Object.keys(readShapes()));
  if (!recorded.has(event.type)) return null;
  const validate = validatorFor(event.type, event.metadata.schema);
  if (!validate) return `${event.type} v${event.metadata.schema} has no recorded shape`;
  // JSON is what is stored: an undefined field is dropped, as the store drops it.
  if (validate(JSON.parse(JSON.stringify(event.data)))) return null;
  const details = (validate.errors ?? []).map(
    (e) =>
      `${e.instancePath || '/'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
  );
  return `${event.type} v${event.metadata.schema}: ${details.join('; ')}`;
}

const unchecked = new WeakMap<EventStore, EventStore['append']>();

/** Append without the check: for a suite that writes a malformed event on purpose (to see a projection fail on it). */
export function appendUnchecked(
  store: EventStore,
  ...args: Parameters<EventStore['append']>
): ReturnType<EventStore['append']> {
  return (unchecked.get(store) ?? store.append.bind(store))(...args);
}

/** Wrap the store's appends so each event is checked before it is written. */
export function validateAppends(store: EventStore): void {
  const check = (events: EventToAppend[]) => {
    for (const e of events) {
      const problem = shapeProblem(e);
      if (problem) throw new Error(`event data does not match its recorded shape: ${problem}`);
    }
  };
  const append = store.append.bind(store);
  unchecked.set(store, append);
  const appendMany = store.appendMany.bind(store);
  store.append = (stream, events, options) => {
    check(events);
    return append(stream, events, options);
  };
  store.appendMany = (appends, options) => {
    for (const a of appends) check(a.events);
    return appendMany(appends, options);
  };
}
