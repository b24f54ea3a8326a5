// Polls of every channel (`chat_polls`) and each member's current choice (`chat_poll_votes`).

import type { PollEvent, PollOption } from '../../domain/chat/polls/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatPollsProjection = defineProjection<PollEvent>({
  name: 'chat_polls',
  handles: ['PollCreated', 'PollVoted', 'PollClosed'],
  tables: ['chat_polls', 'chat_poll_votes'],
  async apply(event, tx) {
    switch (event.type) {
      case 'PollCreated': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_polls (id, channel_id, creator_id, question, options, multiple_choice, anonymous, closes_at, created_at, log_commit, log_prepare)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
          [
            d.poll_id,
            d.channel_id,
            d.creator_id,
            d.question,
            JSON.stringify(d.options),
            d.multiple_choice,
            d.anonymous,
            d.closes_at,
            d.at,
            event.position.commit.toString(),
            event.position.prepare.toString(),
          ],
        );
        return;
      }
      case 'PollVoted':
        await tx.query('DELETE FROM chat_poll_votes WHERE poll_id = $1 AND user_id = $2', [
          event.data.poll_id,
          event.data.user_id,
        ]);
        if (event.data.option_ids.length) {
          await tx.query(
            'INSERT INTO chat_poll_votes (poll_id, user_id, option_id, voted_at) SELECT $1, $2, o, $4 FROM unnest($3::text[]) AS o',
            [event.data.poll_id, event.data.user_id, event.data.option_ids, event.data.at],
          );
        }
        return;
      case 'PollClosed':
        await tx.query('UPDATE chat_polls SET closed_at = $2, closed_by = $3 WHERE id = $1', [
          event.data.poll_id,
          event.data.at,
          event.data.closed_by,
        ]);
        return;
    }
  },
});

export interface PollRow {
  id: string;
  channel_id: string;
  creator_id: string;
  question: string;
  options: PollOption[];
  multiple_choice: boolean;
  anonymous: boolean;
  closes_at: Date | null;
  closed_at: Date | null;
  closed_by: string | null;
  created_at: Date;
}

export interface PollVoteRow {
  poll_id: string;
  user_id: string;
  option_id: string;
}

const COLUMNS =
  'id, channel_id, creator_id, question, options, multiple_choice, anonymous, closes_at, closed_at, closed_by, created_at';

export async function pollById(db: Pool, id: string): Promise<PollRow | null> {
  const { rows } = await db.query<PollRow>(`SELECT ${COLUMNS} FROM chat_polls WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

/** A channel's polls: open ones first, newest first within each. `now` decides which have passed their `closes_at`. */
export async function channelPolls(db: Pool, channelId: string, now: Date): Promise<PollRow[]> {
  const { rows } = await db.query<PollRow>(
    `SELECT ${COLUMNS} FROM chat_polls WHERE channel_id = $1
     ORDER BY (closed_at IS NOT NULL OR (closes_at IS NOT NULL AND closes_at <= $2)), log_commit DESC, log_prepare DESC`,
    [channelId, now],
  );
  return rows;
}

export async function pollVotes(db: Pool, pollIds: string[]): Promise<PollVoteRow[]> {
  if (!pollIds.length) return [];
  const { rows } = await db.query<PollVoteRow>(
    'SELECT poll_id, user_id, option_id FROM chat_poll_votes WHERE poll_id = ANY($1::uuid[]) ORDER BY voted_at, user_id',
    [pollIds],
  );
  return rows;
}
