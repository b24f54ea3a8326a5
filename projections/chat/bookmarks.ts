// Members' bookmarks (`chat_bookmarks`), newest first by log position.

import type { BookmarkEvent } from '../../domain/chat/bookmarks/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { MESSAGE_COLUMNS, type MessageRow } from './messages.ts';

export const chatBookmarksProjection = defineProjection<BookmarkEvent>({
  name: 'chat_bookmarks',
  handles: ['BookmarkAdded', 'BookmarkRemoved'],
  tables: ['chat_bookmarks'],
  async apply(event, tx) {
    if (event.type === 'BookmarkAdded') {
      await tx.query(
        `INSERT INTO chat_bookmarks (user_id, message_id, channel_id, created_at, log_commit, log_prepare) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [
          event.data.user_id,
          event.data.message_id,
          event.data.channel_id,
          event.data.at,
          event.position.commit.toString(),
          event.position.prepare.toString(),
        ],
      );
    } else {
      await tx.query('DELETE FROM chat_bookmarks WHERE user_id = $1 AND message_id = $2', [
        event.data.user_id,
        event.data.message_id,
      ]);
    }
  },
});

/** Readable: the message is live and the user a member of its live channel. */
const READABLE = `m.deleted_at IS NULL AND EXISTS (
  SELECT 1 FROM chat_channel_members cm JOIN chat_channels ch ON ch.id = cm.channel_id AND ch.deleted_at IS NULL
  WHERE cm.channel_id = m.channel_id AND cm.user_id = b.user_id)`;

export interface BookmarkPage {
  items: (MessageRow & { bookmarked_at: Date })[];
  total: number;
  unavailable: number;
}

/** The user's readable bookmarks, newest first; `unavailable` counts those they can no longer read. */
export async function bookmarksOf(db: Pool, userId: string, limit: number, offset: number): Promise<BookmarkPage> {
  const [items, counts] = await Promise.all([
    db.query<MessageRow & { bookmarked_at: Date }>(
      `SELECT ${MESSAGE_COLUMNS}, b.created_at AS bookmarked_at
       FROM chat_bookmarks b JOIN chat_messages m ON m.id = b.message_id
       WHERE b.user_id = $1 AND ${READABLE} ORDER BY b.log_commit DESC, b.log_prepare DESC LIMIT $2 OFFSET $3`,
      [userId, limit, offset],
    ),
    db.query<{ total: string; readable: string }>(
      `SELECT count(*) AS total, count(*) FILTER (WHERE m.id IS NOT NULL AND ${READABLE}) AS readable
       FROM chat_bookmarks b LEFT JOIN chat_messages m ON m.id = b.message_id WHERE b.user_id = $1`,
      [userId],
    ),
  ]);
  const total = Number(counts.rows[0]!.total);
  const readable = Number(counts.rows[0]!.readable);
  return { items: items.rows, total: readable, unavailable: total - readable };
}
