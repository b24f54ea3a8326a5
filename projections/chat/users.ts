// Who a chat user may see, and what they did about others: blocks (`chat_blocks`) and reports
// (`chat_reports`). Visibility (spec: "User search and profiles need shared community membership
// (or instance owner status)") is answered here in one place: a user sees themselves, members of
// the communities they belong to, and the owner sees all.

import type { ReportReviewEvent } from '../../domain/chat/admin/events.ts';
import type { BlockEvent, ReportEvent } from '../../domain/chat/users/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import type { ChatUserRow } from './accounts.ts';

export const chatBlocksProjection = defineProjection<BlockEvent>({
  name: 'chat_blocks',
  handles: ['UserBlocked', 'UserUnblocked'],
  tables: ['chat_blocks'],
  async apply(event, tx) {
    const { user_id, blocked_user_id, at } = event.data;
    if (event.type === 'UserBlocked') {
      await tx.query(
        'INSERT INTO chat_blocks (user_id, blocked_user_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [user_id, blocked_user_id, at],
      );
    } else {
      await tx.query('DELETE FROM chat_blocks WHERE user_id = $1 AND blocked_user_id = $2', [user_id, blocked_user_id]);
    }
  },
});

export const chatReportsProjection = defineProjection<ReportEvent | ReportReviewEvent>({
  name: 'chat_reports',
  handles: ['ReportFiled', 'ReportReviewed'],
  tables: ['chat_reports'],
  async apply(event, tx) {
    if (event.type === 'ReportReviewed') {
      const r = event.data;
      await tx.query(
        'UPDATE chat_reports SET status = $2, review_note = $3, reviewed_by = $4, reviewed_at = $5 WHERE id = $1',
        [r.report_id, r.status, r.note, r.by, r.at],
      );
      return;
    }
    const d = event.data;
    await tx.query(
      'INSERT INTO chat_reports (id, reporter_id, target_type, target_id, reason, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [d.report_id, d.reporter_id, d.target_type, d.target_id, d.reason, d.at],
    );
  },
});

export interface Viewer {
  user_id: string;
  is_owner: boolean;
}

/** SQL condition: the row `u` is visible to viewer $1 (viewer_is_owner $2). */
const VISIBLE = `u.deleted_at IS NULL AND ($2::boolean OR u.id = $1 OR EXISTS (
  SELECT 1 FROM chat_community_members x JOIN chat_community_members y ON y.community_id = x.community_id AND y.user_id = u.id
  JOIN chat_communities c ON c.id = x.community_id AND c.deleted_at IS NULL WHERE x.user_id = $1))`;

const COLUMNS =
  'u.id, u.username, u.display_name, u.email, u.password_hash, u.is_owner, u.is_admin, u.is_bot, u.avatar_url, u.bio, u.pronouns, u.created_at, u.updated_at, u.deleted_at';

export async function visibleUser(db: Pool, viewer: Viewer, userId: string): Promise<ChatUserRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(userId)) return null;
  const { rows } = await db.query<ChatUserRow>(`SELECT ${COLUMNS} FROM chat_users u WHERE u.id = $3 AND ${VISIBLE}`, [
    viewer.user_id,
    viewer.is_owner,
    userId,
  ]);
  return rows[0] ?? null;
}

/** Visible users whose username or display name contains `q` (case-insensitive), usernames first by prefix. */
export async function searchUsers(db: Pool, viewer: Viewer, q: string, limit: number): Promise<ChatUserRow[]> {
  const pattern = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const { rows } = await db.query<ChatUserRow>(
    `SELECT ${COLUMNS} FROM chat_users u
     WHERE ${VISIBLE} AND (lower(u.username) LIKE $3 OR lower(u.display_name) LIKE $3)
     ORDER BY (lower(u.username) LIKE $4) DESC, lower(u.username) LIMIT $5`,
    [viewer.user_id, viewer.is_owner, pattern, `${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`, limit],
  );
  return rows;
}

export async function blockedBy(db: Pool, userId: string): Promise<(ChatUserRow & { blocked_at: Date })[]> {
  const { rows } = await db.query<ChatUserRow & { blocked_at: Date }>(
    `SELECT ${COLUMNS}, b.created_at AS blocked_at FROM chat_blocks b JOIN chat_users u ON u.id = b.blocked_user_id
     WHERE b.user_id = $1 ORDER BY b.created_at, u.id`,
    [userId],
  );
  return rows;
}

/** Whether `blocker` blocked `userId`. */
export async function isBlockedBy(db: Pool, userId: string, blocker: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM chat_blocks WHERE user_id = $1 AND blocked_user_id = $2', [
    blocker,
    userId,
  ]);
  return rows.length > 0;
}
