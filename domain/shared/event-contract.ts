// Events as a versioned contract. Each event type's data has a version (1 unless its slice
// declares more, beside its union: `eventTypes<E>()([...], { MessageDeleted: 2 })`); every
// appended event carries it in `metadata.schema`. When a shape changes, the version goes up and
// the slice adds an upcaster from the old version: a pure function from the old data to the next
// version's. The log is never rewritten; old events are lifted each time they are read.
//
// The slices declare; the catalog (domain/events.ts) composes the declarations into the one
// contract the command runner and the processors read with. The stored shape of every version
// (domain/event-shapes.json) and the tests in tests/platform/event-shapes.test.ts keep the
// declarations honest: a changed shape without a new version fails there.

import type { DomainEvent } from './decider.ts';

/** Data of version `from` to data of version `from + 1`. Pure: it sees the event's data alone. */
export type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

/** A slice's upcasters: per event type, per version lifted from. */
export type Upcasters<Event extends DomainEvent = DomainEvent> = {
  readonly [T in Event['type']]?: Readonly<Record<number, Upcaster>>;
};

/** A slice's upcasters, checked against its union: `upcasters<MessageEvent>()({ MessageDeleted: { 1: lift } })`. */
export const upcasters =
  <Event extends DomainEvent>() =>
  (declared: Upcasters<Event>): Upcasters =>
    declared as Upcasters;

/** Versions above 1, per event type. */
export type EventVersions = Readonly<Record<string, number>>;

export interface StoredEventShape {
  type: string;
  /** The version the data is at, `metadata.schema` (absent: 1). */
  schema: number;
  data: Record<string, unknown>;
}

export interface EventContract {
  /** Every event type the platform writes. */
  readonly types: readonly string[];
  /** The version new events of `type` are written at. */
  versionOf(type: string): number;
  /** The data lifted to the current version; the same object when it already is. */
  upcast<E extends StoredEventShape>(event: E): E;
}

/**
 * The contract from the slices' declarations. Throws when a declaration is inconsistent (a
 * version without upcasters from each older version, an upcaster for a version that is not
 * older, or for a type nobody declared), so a slip fails every test at import, not an auditor.
 */
export function eventContract(declared: {
  types: readonly string[];
  versions: EventVersions;
  upcasters: readonly Upcasters[];
}): EventContract {
  const types = new Set(declared.types);
  const lifts = new Map<string, Upcaster>();
  for (const set of declared.upcasters) {
    for (const [type, byVersion] of Object.entries(set)) {
      for (const [from, lift] of Object.entries(byVersion ?? {})) {
        const version = declared.versions[type] ?? 1;
        if (!types.has(type)) throw new Error(`upcaster for ${type}, which no slice declares`);
        if (!(Number(from) >= 1 && Number(from) < version))
          throw new Error(`upcaster for ${type} from version ${from}, but its current version is ${version}`);
        if (lifts.has(`${type}@${from}`)) throw new Error(`two upcasters for ${type} from version ${from}`);
        lifts.set(`${type}@${from}`, lift);
      }
    }
  }
  for (const [type, version] of Object.entries(declared.versions)) {
    if (!types.has(type)) throw new Error(`version declared for ${type}, which is not in its union's type list`);
    if (!Number.isInteger(version) || version < 1)
      throw new Error(`${type}: a version is an integer from 1, not ${version}`);
    for (let from = 1; from < version; from++) {
      if (!lifts.has(`${type}@${from}`))
        throw new Error(`${type} is at version ${version} but has no upcaster from version ${from}`);
    }
  }
  const versionOf = (type: string) => declared.versions[type] ?? 1;
  return {
    types: [...declared.types],
    versionOf,
    upcast(event) {
      const target = versionOf(event.type);
      let schema = event.schema;
      if (schema >= target) return event;
      let data = event.data;
      for (; schema < target; schema++) data = lifts.get(`${event.type}@${schema}`)!(data);
      return { ...event, data, schema };
    },
  };
}
