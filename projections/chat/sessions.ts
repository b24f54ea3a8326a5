// Chat login sessions (`chat_sessions`): listed on /api/account/sessions and checked on every
// request carrying an access token, so a revoked session's tokens stop working at once. Refresh
// token hashes stay in the session's stream (the aggregate decides rotation and reuse).

import type { ChatSessionEvent } from '../../domain/chat/sessions/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatSessionsProjection = defineProjection<ChatSessionEvent>({
  name: 'chat_sessions',
  handles: ['ChatSessionStarted', 'RefreshTokenRotated', 'SessionRevoked'],
  tables: ['chat_sessions'],
  async apply(event, tx) {
    switch (event.type) {
      case 'ChatSessionStarted': {
        const d = event.data;
        await tx.query(
          'INSERT INTO chat_sessions (id, user_id, origin, user_agent, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $5)',
          [d.session_id, d.user_id, d.origin, d.user_agent, d.at],
        );
        return;
      }
      case 'RefreshTokenRotated':
        await tx.query('UPDATE chat_sessions SET last_used_at = $2 WHERE id = $1', [
          event.data.session_id,
          event.data.at,
        ]);
        return;
      case 'SessionRevoked':
        await tx.query(
          'UPDATE chat_sessions SET revoked_at = $2, revoke_reason = $3 WHERE id = $1 AND revoked_at IS NULL',
          [event.data.session_id, event.data.at, event.data.reason],
        );
        return;
    }
  },
});

export interface ChatSessionRow {
  id: string;
  user_id: string;
  origin: string;
  user_agent: string | null;
  created_at: Date;
  last_used_at: Date;
}

/** The live sessions of a user, newest first. */
export async function liveSessionsOf(db: Pool, userId: string): Promise<ChatSessionRow[]> {
  const { rows } = await db.query<ChatSessionRow>(
    `SELECT id, user_id, origin, user_agent, created_at, last_used_at FROM chat_sessions
     WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id`,
    [userId],
  );
  return rows;
}

export interface SessionPrincipalRow {
  user_id: string;
  username: string;
  is_admin: boolean;
  is_owner: boolean;
}

/** The account behind a live session of a live, unsuspended account, or null (revoked, unknown, deleted, suspended). */
export async function sessionPrincipal(
  db: Pool,
  sessionId: string,
  userId: string,
): Promise<SessionPrincipalRow | null> {
  const { rows } = await db.query<SessionPrincipalRow>(
    `SELECT u.id AS user_id, u.username, u.is_admin, u.is_owner FROM chat_sessions s JOIN chat_users u ON u.id = s.user_id
     WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND u.deleted_at IS NULL AND u.suspended_at IS NULL`,
    [sessionId, userId],
  );
  return rows[0] ?? null;
}
