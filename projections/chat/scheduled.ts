// Scheduled messages as their senders list them (`chat_scheduled_messages`), and the
// scheduler's jobs (`scheduled_jobs`): one row per thing due (a scheduled message, a poll's
// closing, a meeting's next reminder), kept from the log so that a restart or a rebuild loses
// nothing. The lease columns belong to the scheduler (infra/scheduler/scheduler.ts); a change of
// a job's time clears its lease, so the new time is honoured at once.

import type { ScheduledEvent } from '../../domain/chat/scheduled/events.ts';
import type { PollEvent } from '../../domain/chat/polls/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';
import { applyMeetingJob, MEETING_JOB_EVENTS, type MeetingJobEvent } from './meeting-jobs.ts';

type Created = Recorded<Extract<ScheduledEvent, { type: 'ScheduledMessageCreated' }>>;
type Delivered = Recorded<Extract<ScheduledEvent, { type: 'ScheduledMessageDelivered' }>>;

/** The batch when every event is of `type` (so typed as the caller says), else null. */
function allOf<R>(events: Recorded<JobEvent>[], type: JobEvent['type']): R[] | null {
  return events.every((e) => e.type === type) ? (events as unknown as R[]) : null;
}

/** Ids of the events' subjects, or null when one repeats (a bulk upsert may touch a row once). */
function distinct(ids: string[]): string[] | null {
  return new Set(ids).size === ids.length ? ids : null;
}

async function applyScheduled(event: Recorded<ScheduledEvent>, tx: PoolClient): Promise<void> {
  const d = event.data;
  switch (event.type) {
    case 'ScheduledMessageCreated':
      await tx.query(
        `INSERT INTO chat_scheduled_messages (id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', NULL, $9, $9) ON CONFLICT DO NOTHING`,
        [
          d.scheduled_message_id,
          d.sender_id,
          d.channel_id,
          event.data.ciphertext,
          event.data.send_at,
          event.data.thread_root_id,
          event.data.mentions,
          event.data.file_ids,
          d.at,
        ],
      );
      return;
    case 'ScheduledMessageEdited': {
      const e = event.data;
      await tx.query(
        `UPDATE chat_scheduled_messages SET ciphertext = $2, send_at = $3, thread_root_id = $4, mentions = $5, file_ids = $6, updated_at = $7,
            status = CASE WHEN status = 'held' AND $8 THEN 'pending' ELSE status END, reason = CASE WHEN status = 'held' AND NOT $8 THEN reason ELSE NULL END
          WHERE id = $1`,
        [
          e.scheduled_message_id,
          e.ciphertext,
          e.send_at,
          e.thread_root_id,
          e.mentions,
          e.file_ids,
          e.at,
          e.changed.includes('ciphertext'),
        ],
      );
      return;
    }
    case 'ScheduledMessageCancelled':
      await tx.query(`UPDATE chat_scheduled_messages SET status = 'cancelled', updated_at = $2 WHERE id = $1`, [
        d.scheduled_message_id,
        d.at,
      ]);
      return;
    case 'ScheduledMessageHoldPlaced':
    case 'ScheduledMessageFailed':
      await tx.query('UPDATE chat_scheduled_messages SET status = $2, reason = $3, updated_at = $4 WHERE id = $1', [
        d.scheduled_message_id,
        event.type === 'ScheduledMessageHoldPlaced' ? 'held' : 'failed',
        event.data.reason,
        d.at,
      ]);
      return;
    case 'ScheduledMessageDelivered':
      await tx.query(
        `UPDATE chat_scheduled_messages SET status = 'delivered', delivered_at = $2, updated_at = $2 WHERE id = $1`,
        [d.scheduled_message_id, d.at],
      );
      return;
  }
}

export const chatScheduledProjection = defineProjection<ScheduledEvent>({
  name: 'chat_scheduled_messages',
  handles: [
    'ScheduledMessageCreated',
    'ScheduledMessageEdited',
    'ScheduledMessageCancelled',
    'ScheduledMessageHoldPlaced',
    'ScheduledMessageFailed',
    'ScheduledMessageDelivered',
  ],
  tables: ['chat_scheduled_messages'],
  apply: applyScheduled,
  // A burst of schedules, or of deliveries when they fall due, is one statement.
  async applyBatch(events, tx) {
    const created = allOf<Created>(events, 'ScheduledMessageCreated');
    const delivered = allOf<Delivered>(events, 'ScheduledMessageDelivered');
    if (created) {
      const col = <T>(f: (d: Created['data']) => T) => created.map((e) => f(e.data));
      await tx.query(
        `INSERT INTO chat_scheduled_messages (id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at)
        SELECT id, sender, channel, ciphertext, send_at, root, (SELECT coalesce(array_agg(x::uuid), '{}') FROM jsonb_array_elements_text(mentions) x),
          (SELECT coalesce(array_agg(x), '{}') FROM jsonb_array_elements_text(files) x), 'pending', NULL, at, at
        FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::uuid[], $7::jsonb[], $8::jsonb[], $9::timestamptz[])
          AS x(id, sender, channel, ciphertext, send_at, root, mentions, files, at)
        ON CONFLICT DO NOTHING`,
        [
          col((d) => d.scheduled_message_id),
          col((d) => d.sender_id),
          col((d) => d.channel_id),
          col((d) => d.ciphertext),
          col((d) => d.send_at),
          col((d) => d.thread_root_id),
          col((d) => JSON.stringify(d.mentions)),
          col((d) => JSON.stringify(d.file_ids)),
          col((d) => d.at),
        ],
      );
      return;
    }
    if (delivered) {
      await tx.query(
        `UPDATE chat_scheduled_messages m SET status = 'delivered', delivered_at = x.at, updated_at = x.at
        FROM unnest($1::uuid[], $2::timestamptz[]) AS x(id, at) WHERE m.id = x.id`,
        [delivered.map((e) => e.data.scheduled_message_id), delivered.map((e) => e.data.at)],
      );
      return;
    }
    for (const event of events) await applyScheduled(event, tx);
  },
});

type JobEvent = ScheduledEvent | PollEvent | MeetingJobEvent;

/** The job kinds and their ids: one job per subject and kind. */
export const jobId = (kind: 'message' | 'poll_close' | 'meeting_reminder', subject: string) => `${kind}:${subject}`;

async function upsertJob(
  tx: PoolClient,
  kind: 'message' | 'poll_close' | 'meeting_reminder',
  subject: string,
  dueAt: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await tx.query(
    `INSERT INTO scheduled_jobs (id, kind, subject_id, due_at, data) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (id) DO UPDATE SET due_at = EXCLUDED.due_at, data = EXCLUDED.data,
      lease_owner = CASE WHEN scheduled_jobs.due_at = EXCLUDED.due_at THEN scheduled_jobs.lease_owner END,
      lease_until = CASE WHEN scheduled_jobs.due_at = EXCLUDED.due_at THEN scheduled_jobs.lease_until END`,
    [jobId(kind, subject), kind, subject, dueAt, data],
  );
}

const dropJob = (tx: PoolClient, kind: 'message' | 'poll_close' | 'meeting_reminder', subject: string) =>
  tx.query('DELETE FROM scheduled_jobs WHERE id = $1', [jobId(kind, subject)]);

export const scheduledJobsProjection = defineProjection<JobEvent>({
  name: 'scheduled_jobs',
  handles: [
    'ScheduledMessageCreated',
    'ScheduledMessageEdited',
    'ScheduledMessageCancelled',
    'ScheduledMessageHoldPlaced',
    'ScheduledMessageFailed',
    'ScheduledMessageDelivered',
    'PollCreated',
    'PollClosed',
    ...MEETING_JOB_EVENTS,
  ],
  tables: ['scheduled_jobs'],
  apply: applyJob,
  // The bursts (many scheduled at once, many delivered when they fall due) are one statement each.
  async applyBatch(events, tx) {
    const created = allOf<Created>(events, 'ScheduledMessageCreated');
    const createdIds = created && distinct(created.map((e) => e.data.scheduled_message_id));
    if (created && createdIds) {
      await tx.query(
        `INSERT INTO scheduled_jobs (id, kind, subject_id, due_at, data)
        SELECT 'message:' || subject, 'message', subject, due, '{}'::jsonb FROM unnest($1::uuid[], $2::timestamptz[]) AS x(subject, due)
        ON CONFLICT (id) DO UPDATE SET due_at = EXCLUDED.due_at, data = EXCLUDED.data,
          lease_owner = CASE WHEN scheduled_jobs.due_at = EXCLUDED.due_at THEN scheduled_jobs.lease_owner END,
          lease_until = CASE WHEN scheduled_jobs.due_at = EXCLUDED.due_at THEN scheduled_jobs.lease_until END`,
        [createdIds, created.map((e) => e.data.send_at)],
      );
      return;
    }
    const delivered = allOf<Delivered>(events, 'ScheduledMessageDelivered');
    if (delivered) {
      await tx.query('DELETE FROM scheduled_jobs WHERE id = ANY($1::text[])', [
        delivered.map((e) => jobId('message', e.data.scheduled_message_id)),
      ]);
      return;
    }
    for (const event of events) await applyJob(event, tx);
  },
});

async function applyJob(event: Recorded<JobEvent>, tx: PoolClient): Promise<void> {
  switch (event.type) {
    case 'ScheduledMessageCreated':
      return upsertJob(tx, 'message', event.data.scheduled_message_id, event.data.send_at);
    case 'ScheduledMessageEdited': {
      // A held message has no job until it is re-encrypted.
      const { rows } = await tx.query('SELECT 1 FROM scheduled_jobs WHERE id = $1', [
        jobId('message', event.data.scheduled_message_id),
      ]);
      if (rows.length || event.data.changed.includes('ciphertext'))
        await upsertJob(tx, 'message', event.data.scheduled_message_id, event.data.send_at);
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
}

export interface ScheduledRow {
  id: string;
  sender_id: string;
  channel_id: string;
  ciphertext: string;
  send_at: Date;
  thread_root_id: string | null;
  mentions: string[];
  file_ids: string[];
  status: string;
  reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The sender's pending, held and failed messages, soonest first. */
export async function scheduledOf(db: Pool, senderId: string): Promise<ScheduledRow[]> {
  const { rows } = await db.query<ScheduledRow>(
    `SELECT id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at
     FROM chat_scheduled_messages WHERE sender_id = $1 AND status IN ('pending', 'held', 'failed') ORDER BY send_at, id`,
    [senderId],
  );
  return rows;
}

export async function scheduledById(db: Pool, id: string): Promise<ScheduledRow | null> {
  const { rows } = await db.query<ScheduledRow>(
    `SELECT id, sender_id, channel_id, ciphertext, send_at, thread_root_id, mentions, file_ids, status, reason, created_at, updated_at
     FROM chat_scheduled_messages WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}
