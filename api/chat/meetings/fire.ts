// What the scheduler does with a meeting's due reminder (job kind `meeting_reminder`, kept by
// projections/chat/meeting-jobs.ts). Decided from the log, not the job's copy: the meeting's
// stream is read, and the reminder fires only if that occurrence still starts then, is not
// cancelled, the offset is still one of the reminders, and the start is still ahead (a reminder
// missed while every instance was down is skipped once the meeting has started:
// `MeetingReminderSkipped`). Firing appends `MeetingReminderFired` to the reminder's own stream
// with `no_stream`, so two instances firing the same job append it once; its `recipient_ids`
// are the channel's members who had not declined that occurrence at that moment. The hub sends
// them `MeetingReminder` on /api/ws; web push reaches those with no socket.

import { asDomainEvent } from '../../../infra/commands.ts';
import type { FireContext, Job } from '../../../infra/scheduler/scheduler.ts';
import { meetingDecider, rsvpFor } from '../../../domain/chat/meetings/decider.ts';
import type { MeetingEvent } from '../../../domain/chat/meetings/events.ts';
import { meetingStream, reminderStream } from '../../../domain/chat/streams.ts';
import { occurrenceById } from '../../../domain/chat/meetings/occurrences.ts';
import { reminderDecider, reminderId, type DueReminder } from '../../../domain/chat/meetings/reminders.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { channelMembers } from '../../../projections/chat/channels.ts';
import { SCHEDULER_ACTOR, type FireDeps } from '../scheduled/fire.ts';

export function meetingReminderHandler(deps: FireDeps) {
  return async (job: Job, context: FireContext): Promise<void> => {
    const due = (job.data as { next?: DueReminder | null }).next;
    if (!due) return;
    const stream = meetingStream(job.subject_id);
    const history = await deps.commands.store.readStream(stream);
    if (!history.length) return;
    const state = history
      .map((e) => asDomainEvent<MeetingEvent>(e))
      .reduce(meetingDecider.evolve, meetingDecider.initialState());
    if (!state.id || state.cancelled || !state.reminders.includes(due.offset_minutes)) return; // the job is behind the log; the projection moves it
    const occ = occurrenceById(state, due.occurrence_id);
    if (occ.cancelled || occ.start.epochMilliseconds !== Date.parse(due.start)) return;
    const at = context.now.toISOString();
    const known = { state, revision: history.at(-1)!.revision };
    const skip = (reason: 'started' | 'already_fired') =>
      deps.commands.run(
        stream,
        meetingDecider,
        {
          type: 'SkipReminder',
          occurrence_id: due.occurrence_id,
          start: due.start,
          offset_minutes: due.offset_minutes,
          reason,
          at,
        },
        SCHEDULER_ACTOR,
        { awaitProjections: false, known },
      );
    if (context.now.getTime() >= occ.start.epochMilliseconds) {
      await skip('started');
      return;
    }
    const members = await context.memo(`members:${state.channel_id}`, () => channelMembers(deps.db, state.channel_id));
    const recipient_ids = members
      .map((m) => m.user_id)
      .filter((id) => rsvpFor(state, due.occurrence_id, id) !== 'declined');
    const id = reminderId(state.id, due.occurrence_id, due.offset_minutes);
    try {
      await deps.commands.run(
        reminderStream(id),
        reminderDecider,
        {
          type: 'Fire',
          data: {
            meeting_id: state.id,
            occurrence_id: due.occurrence_id,
            channel_id: state.channel_id,
            title: occ.title,
            start: due.start,
            offset_minutes: due.offset_minutes,
            recipient_ids,
            at,
          },
        },
        SCHEDULER_ACTOR,
        { awaitProjections: false, known: { state: reminderDecider.initialState(), revision: 'no_stream' } },
      );
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'reminder_fired')) throw error;
      // Fired already: by another instance for this very start (the projection moves the job on
      // when it applies that), or before the occurrence was moved (then it is done: skip it).
      if (error.details.start !== due.start) await skip('already_fired');
    }
  };
}
