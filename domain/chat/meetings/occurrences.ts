// A meeting's occurrences as members see them: the series expanded (domain/shared/recurrence.ts),
// then its exceptions applied: a cancelled occurrence stays listed with `cancelled`, a changed
// one takes its own title, time, duration and place (and is listed where its new start falls).
// Pure: the routes feed it from the read model, the reminder firing from the log.

import { Temporal } from 'temporal-polyfill';
import { nextOccurrence, occurrenceId, occurrencesBetween, zonedStart } from '../../shared/recurrence.ts';
import type { OccurrenceChanges, SeriesFields } from './events.ts';

export interface Schedule extends SeriesFields {
  cancelled_occurrences: ReadonlySet<string>;
  overrides: ReadonlyMap<string, OccurrenceChanges>;
}

export interface Occurrence {
  occurrence_id: string;
  /** The start the series gives it (its RECURRENCE-ID). */
  original: Temporal.ZonedDateTime;
  start: Temporal.ZonedDateTime;
  end: Temporal.ZonedDateTime;
  cancelled: boolean;
  title: string;
  description: string;
  location: string | null;
  overridden: boolean;
}

const originalOf = (id: string, timeZone: string) =>
  Temporal.Instant.from(
    `${id.slice(0, 4)}-${id.slice(4, 6)}-${id.slice(6, 8)}T${id.slice(9, 11)}:${id.slice(11, 13)}:${id.slice(13, 15)}Z`,
  ).toZonedDateTimeISO(timeZone);

function build(s: Schedule, original: Temporal.ZonedDateTime): Occurrence {
  const id = occurrenceId(original);
  const o = s.overrides.get(id);
  const start = o?.start ? zonedStart(o.start, s.time_zone) : original;
  return {
    occurrence_id: id,
    original,
    start,
    end: start.add({ minutes: o?.duration_minutes ?? s.duration_minutes }),
    cancelled: s.cancelled_occurrences.has(id),
    title: o?.title ?? s.title,
    description: o?.description ?? s.description,
    location: o?.location !== undefined ? o.location : s.location,
    overridden: !!o,
  };
}

/** Occurrences whose (actual) start is in [from, to), in start order; cancelled ones included. */
export function occurrencesIn(s: Schedule, from: Date, to: Date): Occurrence[] {
  const found = occurrencesBetween(s, from, to)
    .map((z) => build(s, z))
    .filter((o) => !s.overrides.get(o.occurrence_id)?.start || inRange(o, from, to));
  const seen = new Set(found.map((o) => o.occurrence_id));
  // Moved occurrences whose new start falls in the range while their original does not.
  for (const [id, o] of s.overrides) {
    if (!o.start || seen.has(id)) continue;
    const occ = build(s, originalOf(id, s.time_zone));
    if (inRange(occ, from, to)) found.push(occ);
  }
  return found.sort(
    (a, b) => a.start.epochMilliseconds - b.start.epochMilliseconds || a.occurrence_id.localeCompare(b.occurrence_id),
  );
}

const inRange = (o: Occurrence, from: Date, to: Date) =>
  o.start.epochMilliseconds >= from.getTime() && o.start.epochMilliseconds < to.getTime();

/** One occurrence by id (whether the series produces it is the caller's check), with its exceptions. */
export const occurrenceById = (s: Schedule, id: string): Occurrence => build(s, originalOf(id, s.time_zone));

/** The first occurrence, not cancelled, starting at or after `at`; null once the series has ended. */
export function nextLiveOccurrence(s: Schedule, at: Date): Occurrence | null {
  let best: Occurrence | null = null;
  for (const [id, o] of s.overrides) {
    if (!o.start) continue;
    const occ = build(s, originalOf(id, s.time_zone));
    if (
      !occ.cancelled &&
      occ.start.epochMilliseconds >= at.getTime() &&
      (!best || occ.start.epochMilliseconds < best.start.epochMilliseconds)
    )
      best = occ;
  }
  // The series, skipping cancelled and moved occurrences (moved ones were weighed above).
  let cursor = at;
  for (let i = 0; i < 10_000; i++) {
    const z = nextOccurrence(s, cursor);
    if (!z || (best && z.epochMilliseconds >= best.start.epochMilliseconds)) break;
    const occ = build(s, z);
    if (!occ.cancelled && !s.overrides.get(occ.occurrence_id)?.start) return occ;
    cursor = new Date(z.epochMilliseconds + 1);
  }
  return best;
}
