// A channel meeting (`chat.meeting-<uuid>`): a series (one occurrence, or an RFC 5545 RRULE
// expanded in the meeting's IANA zone, domain/shared/recurrence.ts), its per-occurrence
// exceptions (cancelled, or changed), the members' RSVPs, and the reminders skipped by the
// scheduler. A reminder that fires is its own stream (reminders.ts), so it fires once.
//
// - An occurrence's id is its original start in UTC, `YYYYMMDDTHHmmssZ` (the iCalendar
//   RECURRENCE-ID), so it stays the same when that occurrence alone is moved.
// - A series edit that changes `start`, `time_zone` or `rrule` produces other occurrences: the
//   old exceptions and per-occurrence RSVPs no longer name any of them and are dropped
//   (`resets_occurrences`), as calendar apps do.
// - Writes (edit, cancel): the creator, a channel moderator and above, or an instance admin
//   (`allowed`, decided by the caller from the read models). RSVPs: any member.

import { DomainError, type Decider } from '../../shared/decider.ts';
import { isTimeZone, occurrenceId, occurrencesBetween, parseRule, zonedStart } from '../../shared/recurrence.ts';
import type { RsvpStatus, SeriesFields, OccurrenceChanges, MeetingEvent } from './events.ts';

export const TITLE_MAX = 200;
export const DESCRIPTION_MAX = 4000;
export const LOCATION_MAX = 500;
export const DURATION_MAX = 7 * 24 * 60;
export const REMINDERS_MAX = 5;
export const REMINDER_MAX_MINUTES = 7 * 24 * 60;
export type MeetingCommand =
  | ({ type: 'Schedule'; id: string; channel_id: string; creator_id: string; at: string } & SeriesFields)
  | { type: 'Update'; changes: Partial<SeriesFields>; allowed: boolean; by: string; at: string }
  | {
      type: 'UpdateOccurrence';
      occurrence_id: string;
      changes: OccurrenceChanges;
      allowed: boolean;
      by: string;
      at: string;
    }
  | { type: 'CancelOccurrence'; occurrence_id: string; allowed: boolean; by: string; at: string }
  | { type: 'Cancel'; allowed: boolean; by: string; at: string }
  | { type: 'Rsvp'; user_id: string; occurrence_id: string | null; status: RsvpStatus; at: string }
  | {
      type: 'SkipReminder';
      occurrence_id: string;
      start: string;
      offset_minutes: number;
      reason: 'started' | 'already_fired';
      at: string;
    };

/** A reminder's place in firing order: (fire time, occurrence start, offset), all in ms / minutes. */
export type ReminderCursor = [number, number, number];
export const reminderKey = (start: string, offset: number): ReminderCursor => [
  Date.parse(start) - offset * 60_000,
  Date.parse(start),
  offset,
];
export const cursorAfter = (a: ReminderCursor, b: ReminderCursor) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

export interface MeetingState extends SeriesFields {
  id: string | null;
  channel_id: string;
  creator_id: string;
  cancelled: boolean;
  sequence: number;
  created_at: string;
  /** Occurrence ids cancelled (EXDATE). */
  cancelled_occurrences: Set<string>;
  /** Occurrence id → what it changes. */
  overrides: Map<string, OccurrenceChanges>;
  /** user id → series answer. */
  rsvps: Map<string, RsvpStatus>;
  /** `<occurrence id>` → user id → that occurrence's answer. */
  occurrence_rsvps: Map<string, Map<string, RsvpStatus>>;
  /** The last reminder skipped (skips are decided once). */
  skipped_through: ReminderCursor | null;
}

const coded = (kind: ConstructorParameters<typeof DomainError>[0], code: string, message: string) =>
  new DomainError(kind, code, message, { code });
export const meetingNotFound = () => coded('not_found', 'meeting_not_found', 'no such meeting');
export const occurrenceNotFound = () =>
  coded('not_found', 'occurrence_not_found', 'no such occurrence of this meeting');
const invalid = (message: string) => coded('invalid', 'validation_failed', message);

const TIMING: (keyof SeriesFields)[] = ['start', 'time_zone', 'rrule'];

/** Checks a whole series (refusals are 400: `validation_failed`, or `unsupported_rrule` from the recurrence module). */
export function checkSeries(s: SeriesFields): void {
  if (s.title.length < 1 || s.title.length > TITLE_MAX) throw invalid(`title is 1-${TITLE_MAX} characters`);
  if (s.description.length > DESCRIPTION_MAX) throw invalid(`description is at most ${DESCRIPTION_MAX} characters`);
  if (s.location !== null && s.location.length > LOCATION_MAX)
    throw invalid(`location is at most ${LOCATION_MAX} characters`);
  if (!Number.isInteger(s.duration_minutes) || s.duration_minutes < 1 || s.duration_minutes > DURATION_MAX)
    throw invalid(`duration_minutes is 1-${DURATION_MAX}`);
  if (s.reminders.length > REMINDERS_MAX) throw invalid(`at most ${REMINDERS_MAX} reminders`);
  if (s.reminders.some((m) => !Number.isInteger(m) || m < 1 || m > REMINDER_MAX_MINUTES))
    throw invalid(`a reminder is 1-${REMINDER_MAX_MINUTES} minutes before the start`);
  if (new Set(s.reminders).size !== s.reminders.length) throw invalid('reminders must be distinct');
  if (!isTimeZone(s.time_zone)) throw invalid('time_zone is not an IANA time zone');
  const start = zonedStart(s.start, s.time_zone);
  if (s.rrule !== null) parseRule(s.rrule, start);
}

/** Whether `occurrence_id` is an occurrence the series produces. */
export function isOccurrenceOf(
  series: Pick<SeriesFields, 'start' | 'time_zone' | 'rrule'>,
  occurrence_id: string,
): boolean {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(occurrence_id);
  if (!m) return false;
  const at = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  if (Number.isNaN(at)) return false;
  return occurrencesBetween(series, new Date(at), new Date(at + 1)).some((z) => occurrenceId(z) === occurrence_id);
}

const sortedReminders = (r: number[]) => [...r].sort((a, b) => a - b);

export const meetingDecider: Decider<MeetingState, MeetingCommand, MeetingEvent> = {
  initialState: () => ({
    id: null,
    channel_id: '',
    creator_id: '',
    title: '',
    description: '',
    start: '',
    time_zone: 'UTC',
    duration_minutes: 30,
    rrule: null,
    reminders: [],
    location: null,
    cancelled: false,
    sequence: 0,
    created_at: '',
    cancelled_occurrences: new Set(),
    overrides: new Map(),
    rsvps: new Map(),
    occurrence_rsvps: new Map(),
    skipped_through: null,
  }),
  evolve(state, event) {
    switch (event.type) {
      case 'MeetingScheduled': {
        const e = event.data;
        return {
          ...state,
          id: e.meeting_id,
          channel_id: e.channel_id,
          creator_id: e.creator_id,
          title: e.title,
          description: e.description,
          start: e.start,
          time_zone: e.time_zone,
          duration_minutes: e.duration_minutes,
          rrule: e.rrule,
          reminders: e.reminders,
          location: e.location,
          created_at: e.at,
        };
      }
      case 'MeetingUpdated': {
        const e = event.data;
        const next = { ...state, ...e.changes, sequence: e.sequence };
        if (e.resets_occurrences)
          return { ...next, cancelled_occurrences: new Set(), overrides: new Map(), occurrence_rsvps: new Map() };
        return next;
      }
      case 'MeetingOccurrenceUpdated': {
        const e = event.data;
        const overrides = new Map(state.overrides);
        overrides.set(e.occurrence_id, { ...overrides.get(e.occurrence_id), ...e.changes });
        return { ...state, overrides, sequence: e.sequence };
      }
      case 'MeetingOccurrenceCancelled': {
        const e = event.data;
        const overrides = new Map(state.overrides);
        overrides.delete(e.occurrence_id);
        return {
          ...state,
          overrides,
          cancelled_occurrences: new Set(state.cancelled_occurrences).add(e.occurrence_id),
          sequence: e.sequence,
        };
      }
      case 'MeetingCancelled':
        return { ...state, cancelled: true, sequence: event.data.sequence };
      case 'MeetingRsvpRecorded': {
        const e = event.data;
        if (e.occurrence_id === null) return { ...state, rsvps: new Map(state.rsvps).set(e.user_id, e.status) };
        const all = new Map(state.occurrence_rsvps);
        all.set(e.occurrence_id, new Map(all.get(e.occurrence_id)).set(e.user_id, e.status));
        return { ...state, occurrence_rsvps: all };
      }
      case 'MeetingReminderSkipped':
        return { ...state, skipped_through: reminderKey(event.data.start, event.data.offset_minutes) };
    }
  },
  decide(command, state) {
    if (command.type === 'Schedule') {
      if (state.id) throw coded('conflict', 'meeting_exists', 'meeting already exists');
      const { type: _t, id, channel_id, creator_id, at, ...series } = command;
      const fields: SeriesFields = { ...series, reminders: sortedReminders(series.reminders) };
      checkSeries(fields);
      return [{ type: 'MeetingScheduled', data: { meeting_id: id, channel_id, creator_id, ...fields, at } }];
    }
    if (!state.id) throw meetingNotFound();
    const base = { meeting_id: state.id, channel_id: state.channel_id, at: command.at };
    if (command.type === 'SkipReminder') {
      const key = reminderKey(command.start, command.offset_minutes);
      if (state.skipped_through && cursorAfter(key, state.skipped_through) <= 0) return [];
      return [
        {
          type: 'MeetingReminderSkipped',
          data: {
            ...base,
            occurrence_id: command.occurrence_id,
            start: command.start,
            offset_minutes: command.offset_minutes,
            reason: command.reason,
          },
        },
      ];
    }
    if (state.cancelled) throw coded('conflict', 'meeting_cancelled', 'the meeting is cancelled');
    const mayWrite = (allowed: boolean) => {
      if (!allowed)
        throw coded(
          'forbidden',
          'insufficient_role',
          'only the creator, a channel moderator or an instance admin changes a meeting',
        );
    };
    const knownOccurrence = (id: string) => {
      if (!isOccurrenceOf(state, id)) throw occurrenceNotFound();
      if (state.cancelled_occurrences.has(id))
        throw coded('conflict', 'occurrence_cancelled', 'this occurrence is cancelled');
    };
    switch (command.type) {
      case 'Update': {
        mayWrite(command.allowed);
        const changes: Partial<SeriesFields> = {};
        for (const [k, v] of Object.entries(command.changes) as [keyof SeriesFields, unknown][]) {
          const value = k === 'reminders' ? sortedReminders(v as number[]) : v;
          if (JSON.stringify(value) !== JSON.stringify(state[k])) (changes as Record<string, unknown>)[k] = value;
        }
        if (!Object.keys(changes).length) return [];
        checkSeries({ ...state, ...changes });
        const resets =
          TIMING.some((k) => k in changes) &&
          (state.cancelled_occurrences.size > 0 || state.overrides.size > 0 || state.occurrence_rsvps.size > 0);
        return [
          {
            type: 'MeetingUpdated',
            data: { ...base, changes, resets_occurrences: resets, sequence: state.sequence + 1, by: command.by },
          },
        ];
      }
      case 'UpdateOccurrence': {
        mayWrite(command.allowed);
        knownOccurrence(command.occurrence_id);
        const current = state.overrides.get(command.occurrence_id) ?? {};
        const changes: OccurrenceChanges = {};
        for (const [k, v] of Object.entries(command.changes) as [keyof OccurrenceChanges, unknown][]) {
          const was = k in current ? current[k] : state[k];
          if (JSON.stringify(v) !== JSON.stringify(was)) (changes as Record<string, unknown>)[k] = v;
        }
        if (!Object.keys(changes).length) return [];
        checkSeries({ ...state, ...current, ...changes, rrule: null });
        return [
          {
            type: 'MeetingOccurrenceUpdated',
            data: {
              ...base,
              occurrence_id: command.occurrence_id,
              changes,
              sequence: state.sequence + 1,
              by: command.by,
            },
          },
        ];
      }
      case 'CancelOccurrence':
        mayWrite(command.allowed);
        knownOccurrence(command.occurrence_id);
        return [
          {
            type: 'MeetingOccurrenceCancelled',
            data: { ...base, occurrence_id: command.occurrence_id, sequence: state.sequence + 1, by: command.by },
          },
        ];
      case 'Cancel':
        mayWrite(command.allowed);
        return [{ type: 'MeetingCancelled', data: { ...base, sequence: state.sequence + 1, by: command.by } }];
      case 'Rsvp': {
        if (command.occurrence_id !== null) knownOccurrence(command.occurrence_id);
        const was =
          command.occurrence_id === null
            ? state.rsvps.get(command.user_id)
            : state.occurrence_rsvps.get(command.occurrence_id)?.get(command.user_id);
        if (was === command.status) return [];
        return [
          {
            type: 'MeetingRsvpRecorded',
            data: { ...base, user_id: command.user_id, occurrence_id: command.occurrence_id, status: command.status },
          },
        ];
      }
    }
  },
};

/** A member's answer for one occurrence: its own beats the series'. */
export function rsvpFor(
  state: Pick<MeetingState, 'rsvps' | 'occurrence_rsvps'>,
  occurrence_id: string,
  user_id: string,
): RsvpStatus | null {
  return state.occurrence_rsvps.get(occurrence_id)?.get(user_id) ?? state.rsvps.get(user_id) ?? null;
}
