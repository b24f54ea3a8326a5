// The admin surface's read models: announcements and their dismissals, the feedback queue, and
// the queries of the admin routes (the audit log is ./admin-audit.ts).

import type { AnnouncementEvent, FeedbackEvent } from '../../domain/chat/admin/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatAnnouncementsProjection = defineProjection<AnnouncementEvent>({
  name: 'chat_announcements',
  handles: ['AnnouncementPublished', 'AnnouncementDismissed'],
  tables: ['chat_announcements', 'chat_announcement_dismissals'],
  async apply(event, tx) {
    if (event.type === 'AnnouncementPublished') {
      const d = event.data;
      await tx.query(
        'INSERT INTO chat_announcements (id, title, body, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
        [d.announcement_id, d.title, d.body, d.by, d.at, d.expires_at],
      );
      return;
    }
    await tx.query(
      'INSERT INTO chat_announcement_dismissals (announcement_id, user_id, dismissed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [event.data.announcement_id, event.data.user_id, event.data.at],
    );
  },
});

export const chatFeedbackProjection = defineProjection<FeedbackEvent>({
  name: 'chat_feedback',
  handles: ['FeedbackSubmitted', 'FeedbackForwarded', 'FeedbackStatusChanged'],
  tables: ['chat_feedback'],
  async apply(event, tx) {
    switch (event.type) {
      case 'FeedbackSubmitted': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_feedback (id, user_id, description, screenshot_blob, screenshot_mime, screenshot_bytes, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
          [
            d.feedback_id,
            d.user_id,
            d.description,
            d.screenshot?.blob ?? null,
            d.screenshot?.mime_type ?? null,
            d.screenshot?.bytes ?? null,
            d.at,
          ],
        );
        return;
      }
      case 'FeedbackForwarded':
        await tx.query(
          'UPDATE chat_feedback SET forwarded_to = array_append(forwarded_to, $2) WHERE id = $1 AND NOT ($2 = ANY(forwarded_to))',
          [event.data.feedback_id, event.data.target],
        );
        return;
      case 'FeedbackStatusChanged':
        await tx.query('UPDATE chat_feedback SET status = $2, triaged_at = $3, triaged_by = $4 WHERE id = $1', [
          event.data.feedback_id,
          event.data.status,
          event.data.at,
          event.data.by,
        ]);
    }
  },
});

export interface AnnouncementRow {
  id: string;
  title: string;
  body: string;
  created_by: string;
  created_at: Date;
  expires_at: Date | null;
}

export async function announcements(db: Pool): Promise<AnnouncementRow[]> {
  const { rows } = await db.query<AnnouncementRow>(
    'SELECT id, title, body, created_by, created_at, expires_at FROM chat_announcements ORDER BY created_at DESC, id',
  );
  return rows;
}

/** Live announcements the user has not dismissed, newest first. */
export async function announcementsFor(db: Pool, userId: string, now: Date): Promise<AnnouncementRow[]> {
  const { rows } = await db.query<AnnouncementRow>(
    `SELECT a.id, a.title, a.body, a.created_by, a.created_at, a.expires_at FROM chat_announcements a
     WHERE (a.expires_at IS NULL OR a.expires_at > $2) AND NOT EXISTS (SELECT 1 FROM chat_announcement_dismissals d WHERE d.announcement_id = a.id AND d.user_id = $1)
     ORDER BY a.created_at DESC, a.id`,
    [userId, now],
  );
  return rows;
}

export async function announcementExists(db: Pool, id: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM chat_announcements WHERE id = $1', [id]);
  return rows.length > 0;
}

export interface FeedbackRow {
  id: string;
  user_id: string;
  description: string;
  screenshot_blob: string | null;
  screenshot_mime: string | null;
  screenshot_bytes: number | null;
  status: string;
  triaged_at: Date | null;
  triaged_by: string | null;
  forwarded_to: string[];
  created_at: Date;
}

const FEEDBACK_COLUMNS =
  'id, user_id, description, screenshot_blob, screenshot_mime, screenshot_bytes, status, triaged_at, triaged_by, forwarded_to, created_at';

export async function feedbackQueue(
  db: Pool,
  status: string | null,
  limit: number,
  offset: number,
): Promise<{ rows: FeedbackRow[]; total: number; counts: Record<string, number> }> {
  const [{ rows }, total, counts] = await Promise.all([
    db.query<FeedbackRow>(
      `SELECT ${FEEDBACK_COLUMNS} FROM chat_feedback WHERE ($1::text IS NULL OR status = $1) ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
      [status, limit, offset],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_feedback WHERE ($1::text IS NULL OR status = $1)', [
      status,
    ]),
    db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM chat_feedback GROUP BY status'),
  ]);
  const byStatus: Record<string, number> = { new: 0, triaged: 0, closed: 0 };
  for (const r of counts.rows) byStatus[r.status] = r.n;
  return { rows, total: total.rows[0]!.n, counts: byStatus };
}

export async function feedbackById(db: Pool, id: string): Promise<FeedbackRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  const { rows } = await db.query<FeedbackRow>(`SELECT ${FEEDBACK_COLUMNS} FROM chat_feedback WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export interface AdminUserRow {
  id: string;
  username: string;
  display_name: string;
  email: string | null;
  is_admin: boolean;
  is_owner: boolean;
  is_bot: boolean;
  suspended_at: Date | null;
  suspend_reason: string | null;
  created_at: Date;
}

/** Live accounts, by username; `q` matches username, display name or email (case-insensitive). */
export async function adminUsers(
  db: Pool,
  q: string | null,
  limit: number,
  offset: number,
): Promise<{ rows: AdminUserRow[]; total: number }> {
  const pattern = q ? `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = `deleted_at IS NULL AND ($1::text IS NULL OR lower(username) LIKE $1 OR lower(display_name) LIKE $1 OR lower(coalesce(email, '')) LIKE $1)`;
  const [{ rows }, count] = await Promise.all([
    db.query<AdminUserRow>(
      `SELECT id, username, display_name, email, is_admin, is_owner, is_bot, suspended_at, suspend_reason, created_at FROM chat_users
      WHERE ${where} ORDER BY lower(username), id LIMIT $2 OFFSET $3`,
      [pattern, limit, offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM chat_users WHERE ${where}`, [pattern]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export interface ReportRow {
  id: string;
  reporter_id: string;
  target_type: string;
  target_id: string;
  reason: string;
  status: string;
  reviewed_by: string | null;
  reviewed_at: Date | null;
  review_note: string | null;
  created_at: Date;
}

export async function reports(
  db: Pool,
  status: string | null,
  limit: number,
  offset: number,
): Promise<{ rows: ReportRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    db.query<ReportRow>(
      `SELECT id, reporter_id, target_type, target_id, reason, status, reviewed_by, reviewed_at, review_note, created_at FROM chat_reports
      WHERE ($1::text IS NULL OR status = $1) ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
      [status, limit, offset],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_reports WHERE ($1::text IS NULL OR status = $1)', [
      status,
    ]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export async function reportById(db: Pool, id: string): Promise<ReportRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  const { rows } = await db.query<ReportRow>(
    'SELECT id, reporter_id, target_type, target_id, reason, status, reviewed_by, reviewed_at, review_note, created_at FROM chat_reports WHERE id = $1',
    [id],
  );
  return rows[0] ?? null;
}

/** A message by id (any channel, quarantined or not), for admin actions. */
export async function anyMessage(
  db: Pool,
  id: string,
): Promise<{ id: string; channel_id: string; sender_id: string; quarantined: boolean } | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  const { rows } = await db.query<{ id: string; channel_id: string; sender_id: string; quarantined: boolean }>(
    'SELECT id, channel_id, sender_id, quarantined_at IS NOT NULL AS quarantined FROM chat_messages WHERE id = $1 AND deleted_at IS NULL',
    [id],
  );
  return rows[0] ?? null;
}

export async function messageCount(db: Pool, where: 'sender' | 'channel', id: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chat_messages WHERE ${where === 'sender' ? 'sender_id' : 'channel_id'} = $1`,
    [id],
  );
  return rows[0]!.n;
}

export async function channelExists(db: Pool, id: string): Promise<boolean> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return false;
  const { rows } = await db.query('SELECT 1 FROM chat_channels WHERE id = $1', [id]);
  return rows.length > 0;
}
