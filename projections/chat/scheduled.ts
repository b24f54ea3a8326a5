// Scheduled messages as their senders list them (`chat_scheduled_messages`), and the
// scheduler's jobs (`scheduled_jobs`): one row per thing due (a scheduled message, a poll's
// closing, a meeting's next reminder), kept from the log so that a restart or a rebuild loses
// nothing. The lease columns belong to the scheduler (infra/scheduler/scheduler.ts); a change of
// a job's time clears its lease, so the new time is honoured at once.

import type { ScheduledEvent } from '../../domain/chat/scheduled/decider.ts';
import type { PollEvent } from '../../domain/chat/polls/decider.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/projections/engine.ts';
import { applyMeetingJob, MEETING_JOB_EVENTS, type MeetingJobEvent } from './meeting-jobs.ts';

export const chatScheduledProjection = defineProjection<ScheduledEvent>({
  name: 'chat_scheduled_messages',
  handles: ['ScheduledMessageCreated', 'ScheduledMessageEdited', 'ScheduledMessageCancelled', 'ScheduledMessageHoldPlaced', 'ScheduledMessageFailed', 'ScheduledMessageDelivered'],
  tables: ['chat_scheduled_messages'],
  async apply(event: Recorded<ScheduledEvent>, tx: PoolClient) {
    const d = event.data;
    switch (event.type) {
      case 'ScheduledMessageCreated':
        await tx.query(`INSERT INTO chat_scheduled_messages (id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', NULL, $9, $9) ON CONFLICT DO NOTHING`,
        [d.scheduled_message_id, d.sender_id, d.channel_id, event.data.ciphertext, event.data.send_at, event.data.thread_root_id, event.data.mentions, event.data.file_ids, d.at]);
        return;
      case 'ScheduledMessageEdited': {
        const e = event.data;
        await tx.query(`UPDATE chat_scheduled_messages SET ciphertext = $2, send_at = $3, thread_root_id = $4, mentions = $5, file_ids = $6, updated_at = $7,
            status = CASE WHEN status = 'held' AND $8 THEN 'pending' ELSE status END, reason = CASE WHEN status = 'held' AND NOT $8 THEN reason ELSE NULL END
          WHERE id = $1`, [e.scheduled_message_id, e.ciphertext, e.send_at, e.thread_root_id, e.mentions, e.file_ids, e.at, e.changed.includes('ciphertext')]);
        return;
      }
      case 'ScheduledMessageCancelled':
        await tx.query(`UPDATE chat_scheduled_messages SET status = 'cancelled', updated_at = $2 WHERE id = $1`, [d.scheduled_message_id, d.at]);
        return;
      case 'ScheduledMessageHoldPlaced':
      case 'ScheduledMessageFailed':
        await tx.query('UPDATE chat_scheduled_messages SET status = $2, reason = $3, updated_at = $4 WHERE id = $1',
          [d.scheduled_message_id, event.type === 'ScheduledMessageHoldPlaced' ? 'held' : 'failed', event.data.reason, d.at]);
        return;
      case 'ScheduledMessageDelivered':
        await tx.query(`UPDATE chat_scheduled_messages SET status = 'delivered', delivered_at = $2, updated_at = $2 WHERE id = $1`, [d.scheduled_message_id, d.at]);
        return;
    }
  },
});

type JobEvent = ScheduledEvent | PollEvent | MeetingJobEvent;

/** The job kinds and their ids: one job per subject and kind. */
export const jobId = (kind: 'message' | 'poll_close' | 'meeting_reminder', subject: string) => `${kind}:${subject}`;

async function upsertJob(tx: PoolClient, kind: 'message' | 'poll_close' | 'meeting_reminder', subject: string, dueAt: string, data: Record<string, unknown> = {}): Promise<void> {
  await tx.query(`INSERT INTO scheduled_jobs (id, kind, subject_id, due_at, data) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (id) DO UPDATE SET due_at = EXCLUDED.due_at, data = EXCLUDED.data,
      lease_owner = CASE WHEN scheduled_jobs.due_at = EXCLUDED.due_at THEN scheduled_jobs.lease_owner END,
      lease_until = CASE WHEN scheduled_jobs.due_at = EXCLUDED.due_at THEN scheduled_jobs.lease_until END`, [jobId(kind, subject), kind, subject, dueAt, data]);
}

const dropJob = (tx: PoolClient, kind: 'message' | 'poll_close' | 'meeting_reminder', subject: string) => tx.query('DELETE FROM scheduled_jobs WHERE id = $1', [jobId(kind, subject)]);

export const scheduledJobsProjection = defineProjection<JobEvent>({
  name: 'scheduled_jobs',
  handles: [
    'ScheduledMessageCreated', 'ScheduledMessageEdited', 'ScheduledMessageCancelled', 'ScheduledMessageHoldPlaced', 'ScheduledMessageFailed', 'ScheduledMessageDelivered',
    'PollCreated', 'PollClosed',
    ...MEETING_JOB_EVENTS,
  ],
  tables: ['scheduled_jobs'],
  async apply(event, tx) {
    switch (event.type) {
      case 'ScheduledMessageCreated':
        return upsertJob(tx, 'message', event.data.scheduled_message_id, event.data.send_at);
      case 'ScheduledMessageEdited': {
        // A held message has no job until it is re-encrypted.
        const { rows } = await tx.query('SELECT 1 FROM scheduled_jobs WHERE id = $1', [jobId('message', event.data.scheduled_message_id)]);
        if (rows.length || event.data.changed.includes('ciphertext')) await upsertJob(tx, 'message', event.data.scheduled_message_id, event.data.send_at);
        return;
      }
      case 'ScheduledMessageCancelled':
      case 'ScheduledMessageHoldPlaced':
      case 'ScheduledMessageFailed':
      case 'ScheduledMessageDelivered':
        await dropJob(tx, 'message', event.data.scheduled_message_id);
        return;
      case 'PollCreated':
        if (event.data.closes_at) await upsertJob(tx, 'poll_close', event.data.poll_id, event.data.closes_at);
        return;
      case 'PollClosed':
        await dropJob(tx, 'poll_close', event.data.poll_id);
        return;
      case 'MeetingScheduled':
      case 'MeetingUpdated':
      case 'MeetingOccurrenceUpdated':
      case 'MeetingOccurrenceCancelled':
      case 'MeetingCancelled':
      case 'MeetingReminderSkipped':
      case 'MeetingReminderFired':
        return applyMeetingJob(event, tx, upsertJob, dropJob, jobId('meeting_reminder', event.data.meeting_id));
    }
  },
});

export interface ScheduledRow {
  id: string; sender_id: string; channel_id: string; ciphertext: string; send_at: Date; thread_root_id: string | null; mentions: string[]; file_ids: string[];
  status: string; reason: string | null; created_at: Date; updated_at: Date;
}

/** The sender's pending, held and failed messages, soonest first. */
export async function scheduledOf(db: Pool, senderId: string): Promise<ScheduledRow[]> {
  const { rows } = await db.query<ScheduledRow>(
    `SELECT id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at
     FROM chat_scheduled_messages WHERE sender_id = $1 AND status IN ('pending', 'held', 'failed') ORDER BY send_at, id`, [senderId]);
  return rows;
}

export async function scheduledById(db: Pool, id: string): Promise<ScheduledRow | null> {
  const { rows } = await db.query<ScheduledRow>(
    `SELECT id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at
     FROM chat_scheduled_messages WHERE id = $1`, [id]);
  return rows[0] ?? null;
}
