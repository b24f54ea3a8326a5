// Meetings' use cases: schedule, update (the series or one occurrence), cancel, cancel an
// occurrence, answer (RSVP). The slice's application layer and the only caller of the command
// runner for these routes (reminders are fire.ts's): each function finds the meeting for a member
// of its channel and whether the caller may change it (the creator, a channel moderator and
// above, or an instance admin), runs the meeting decider, and reads the meeting back.

import { randomUUID } from 'node:crypto';
import { MANAGER } from '../../../domain/chat/channels/roles.ts';
import { meetingDecider } from '../../../domain/chat/meetings/decider.ts';
import type { RsvpStatus, SeriesFields } from '../../../domain/chat/meetings/events.ts';
import { meetingStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { meetingById, type MeetingRow } from '../../../projections/chat/meetings.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { memberChannel } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

type MeetingCommand = Parameters<typeof meetingDecider.decide>[0];

/** The caller: their id and whether they are an instance admin (or owner). */
/** 404 `meeting_not_found`: no meeting by that id, or one the caller may not see. */
export const meetingNotFound = () =>
  new ApiError(404, 'meeting_not_found', 'no such meeting', { code: 'meeting_not_found' });

export interface Caller {
  user_id: string;
  instance_admin: boolean;
}

/** The meeting, for a member of its channel (404 `meeting_not_found`, then 403); and whether the caller may change it. Reads use it too. */
export async function readableMeeting(
  db: Pool,
  id: string,
  caller: Caller,
): Promise<{ row: MeetingRow; allowed: boolean }> {
  const row = isUuid(id) ? await meetingById(db, id) : null;
  if (!row) throw meetingNotFound();
  const access = await memberChannel(db, row.channel_id, caller.user_id);
  return { row, allowed: caller.instance_admin || row.creator_id === caller.user_id || access.rank >= MANAGER };
}

const run = (deps: Deps, row: MeetingRow, command: MeetingCommand, context: CommandContext) =>
  deps.commands.run(meetingStream(row.id), meetingDecider, command, context);
const reread = async (db: Pool, id: string) => (await meetingById(db, id))!;

export interface ScheduleMeeting {
  channel_id: string;
  user_id: string;
  title: string;
  description: string;
  start: string;
  time_zone: string;
  duration_minutes: number;
  rrule?: string | null;
  reminders: number[];
  location?: string | null;
}

/** Schedules a meeting in a channel (members). */
export async function scheduleMeeting(
  deps: Deps,
  input: ScheduleMeeting,
  context: CommandContext,
): Promise<MeetingRow> {
  const access = await memberChannel(deps.db, input.channel_id, input.user_id);
  const id = randomUUID();
  await deps.commands.run(
    meetingStream(id),
    meetingDecider,
    {
      type: 'Schedule',
      id,
      channel_id: access.channel.id,
      creator_id: input.user_id,
      title: input.title,
      description: input.description,
      start: input.start,
      time_zone: input.time_zone,
      duration_minutes: input.duration_minutes,
      rrule: input.rrule?.replace(/^RRULE:/i, '').trim() ?? null,
      reminders: input.reminders,
      location: input.location ?? null,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return reread(deps.db, id);
}

/** Changes the series (`scope` series) or one occurrence (`scope` occurrence with `occurrence_id`: no series-only fields). */
export async function updateMeeting(
  deps: Deps,
  input: Caller & {
    meeting_id: string;
    scope: 'series' | 'occurrence';
    occurrence_id?: string;
    changes: Partial<SeriesFields>;
  },
  context: CommandContext,
): Promise<MeetingRow> {
  const { row, allowed } = await readableMeeting(deps.db, input.meeting_id, input);
  const { scope, occurrence_id, changes } = input;
  if (changes.rrule) changes.rrule = changes.rrule.replace(/^RRULE:/i, '').trim();
  const at = deps.clock.now().toISOString();
  if (scope === 'occurrence') {
    if (!occurrence_id)
      throw new ApiError(400, 'validation_failed', 'scope occurrence needs occurrence_id', {
        code: 'validation_failed',
      });
    const seriesOnly = (['time_zone', 'rrule', 'reminders'] as const).filter((k) => k in changes);
    if (seriesOnly.length)
      throw new ApiError(400, 'validation_failed', `${seriesOnly.join(', ')} apply to the series only`, {
        code: 'validation_failed',
      });
    await run(deps, row, { type: 'UpdateOccurrence', occurrence_id, changes, allowed, by: input.user_id, at }, context);
  } else {
    if (occurrence_id)
      throw new ApiError(400, 'validation_failed', 'occurrence_id goes with scope occurrence', {
        code: 'validation_failed',
      });
    await run(deps, row, { type: 'Update', changes, allowed, by: input.user_id, at }, context);
  }
  return reread(deps.db, row.id);
}

/** Cancels a meeting: every occurrence. */
export async function cancelMeeting(
  deps: Deps,
  input: Caller & { meeting_id: string },
  context: CommandContext,
): Promise<void> {
  const { row, allowed } = await readableMeeting(deps.db, input.meeting_id, input);
  await run(deps, row, { type: 'Cancel', allowed, by: input.user_id, at: deps.clock.now().toISOString() }, context);
}

/** Cancels one occurrence. */
export async function cancelOccurrence(
  deps: Deps,
  input: Caller & { meeting_id: string; occurrence_id: string },
  context: CommandContext,
): Promise<void> {
  const { row, allowed } = await readableMeeting(deps.db, input.meeting_id, input);
  await run(
    deps,
    row,
    {
      type: 'CancelOccurrence',
      occurrence_id: input.occurrence_id,
      allowed,
      by: input.user_id,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
}

/** Answers for the series, or for one occurrence (members). Returns the meeting. */
export async function rsvpMeeting(
  deps: Deps,
  input: Caller & { meeting_id: string; status: RsvpStatus; occurrence_id: string | null },
  context: CommandContext,
): Promise<MeetingRow> {
  const { row } = await readableMeeting(deps.db, input.meeting_id, input);
  await run(
    deps,
    row,
    {
      type: 'Rsvp',
      user_id: input.user_id,
      occurrence_id: input.occurrence_id,
      status: input.status,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return row;
}
