// Calendar feed tokens (`chat_calendar_feed_tokens`): looked up by the SHA-256 of the presented
// token; the plaintext is never stored.

import type { CalendarFeedEvent } from '../../domain/chat/calendar-feeds/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatCalendarFeedsProjection = defineProjection<CalendarFeedEvent>({
  name: 'chat_calendar_feed_tokens',
  handles: ['CalendarFeedTokenCreated', 'CalendarFeedTokenRevoked'],
  tables: ['chat_calendar_feed_tokens'],
  async apply(event, tx) {
    const d = event.data;
    switch (event.type) {
      case 'CalendarFeedTokenCreated':
        await tx.query(
          `INSERT INTO chat_calendar_feed_tokens (id, user_id, token_hash, channel_id, label, created_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
          [d.token_id, d.user_id, event.data.token_hash, event.data.channel_id, event.data.label, d.at],
        );
        return;
      case 'CalendarFeedTokenRevoked':
        await tx.query('UPDATE chat_calendar_feed_tokens SET revoked_at = $2 WHERE id = $1', [d.token_id, d.at]);
        return;
    }
  },
});

export interface FeedTokenRow {
  id: string;
  user_id: string;
  channel_id: string | null;
  label: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = 'id, user_id, channel_id, label, created_at, revoked_at';

export async function liveFeedTokenByHash(db: Pool, hash: string): Promise<FeedTokenRow | null> {
  const { rows } = await db.query<FeedTokenRow>(
    `SELECT ${COLUMNS} FROM chat_calendar_feed_tokens WHERE token_hash = $1 AND revoked_at IS NULL`,
    [hash],
  );
  return rows[0] ?? null;
}

export async function liveFeedTokensOf(db: Pool, userId: string): Promise<FeedTokenRow[]> {
  const { rows } = await db.query<FeedTokenRow>(
    `SELECT ${COLUMNS} FROM chat_calendar_feed_tokens WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`,
    [userId],
  );
  return rows;
}
