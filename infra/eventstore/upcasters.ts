// Upcasters turn an event's stored data shape into the current one at read time, keyed by
// (type, schema). The log is never rewritten; old events are lifted each time they are read.

import type { RecordedEvent } from './port.ts';

type Upcaster = (data: Record<string, unknown>) => Record<string, unknown>;

const upcasters = new Map<string, Upcaster>();

/** Register how `type` at schema `from` becomes schema `from + 1`. */
export function registerUpcaster(type: string, from: number, lift: Upcaster): void {
  upcasters.set(`${type}@${from}`, lift);
}

export function upcast(event: RecordedEvent): RecordedEvent {
  let schema = Number(event.metadata?.schema ?? 1);
  let data = event.data;
  for (let lift = upcasters.get(`${event.type}@${schema}`); lift; lift = upcasters.get(`${event.type}@${schema}`)) {
    data = lift(data);
    schema += 1;
  }
  return data === event.data ? event : { ...event, data, metadata: { ...event.metadata, schema } };
}
