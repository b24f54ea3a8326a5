// The chat accounts read model (`chat_users`): one row per account, deleted ones included (their
// messages keep an author; the row loses its email, password and profile). Rows and queries
// live here with the writes.

import type { AccountEvent } from '../../domain/chat/accounts/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatUsersProjection = defineProjection<AccountEvent>({
  name: 'chat_users',
  handles: [
    'UserRegistered',
    'PasswordChanged',
    'AccountRecovered',
    'AccountProfileUpdated',
    'AccountDeleted',
    'BotRegistered',
    'UserSuspended',
    'UserUnsuspended',
    'AdminRoleChanged',
    'PasswordReplaced',
  ],
  tables: ['chat_users'],
  async apply(event, tx) {
    const d = event.data;
    switch (event.type) {
      case 'UserRegistered': {
        const r = event.data;
        await tx.query(
          `INSERT INTO chat_users (id, username, display_name, email, password_hash, is_owner, is_admin, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [r.user_id, r.username, r.display_name, r.email, r.password_hash, r.is_owner, r.is_admin, r.at],
        );
        return;
      }
      case 'BotRegistered': {
        const b = event.data;
        await tx.query(
          `INSERT INTO chat_users (id, username, display_name, is_bot, bot_created_by, bot_integration, created_at, updated_at)
           VALUES ($1, $2, $3, true, $4, $5, $6, $6)`,
          [b.user_id, b.username, b.display_name, b.created_by, b.integration, b.at],
        );
        return;
      }
      case 'UserSuspended':
        await tx.query('UPDATE chat_users SET suspended_at = $2, suspend_reason = $3, updated_at = $2 WHERE id = $1', [
          d.user_id,
          d.at,
          event.data.reason,
        ]);
        return;
      case 'UserUnsuspended':
        await tx.query(
          'UPDATE chat_users SET suspended_at = NULL, suspend_reason = NULL, updated_at = $2 WHERE id = $1',
          [d.user_id, d.at],
        );
        return;
      case 'AdminRoleChanged':
        await tx.query('UPDATE chat_users SET is_admin = $2, updated_at = $3 WHERE id = $1', [
          d.user_id,
          event.data.is_admin,
          d.at,
        ]);
        return;
      case 'PasswordChanged':
      case 'PasswordReplaced':
      case 'AccountRecovered':
        await tx.query('UPDATE chat_users SET password_hash = $2, updated_at = $3 WHERE id = $1', [
          d.user_id,
          event.data.password_hash,
          d.at,
        ]);
        return;
      case 'AccountProfileUpdated': {
        const p = event.data;
        await tx.query(
          'UPDATE chat_users SET display_name = $2, avatar_url = $3, bio = $4, pronouns = $5, updated_at = $6 WHERE id = $1',
          [p.user_id, p.display_name, p.avatar_url, p.bio, p.pronouns, p.at],
        );
        return;
      }
      case 'AccountDeleted':
        await tx.query(
          `UPDATE chat_users SET email = NULL, password_hash = NULL, avatar_url = NULL, bio = NULL, pronouns = NULL,
             is_admin = false, deleted_at = $2, updated_at = $2 WHERE id = $1`,
          [d.user_id, d.at],
        );
        return;
    }
  },
});

export interface ChatUserRow {
  id: string;
  username: string;
  display_name: string;
  email: string | null;
  password_hash: string | null;
  is_owner: boolean;
  is_admin: boolean;
  is_bot: boolean;
  avatar_url: string | null;
  bio: string | null;
  pronouns: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** Set by the queries of this module (the admin surface reads it). */
  suspended_at?: Date | null;
  suspend_reason?: string | null;
  bot_created_by?: string | null;
  bot_integration?: string | null;
}

const SELECT = `SELECT id, username, display_name, email, password_hash, is_owner, is_admin, is_bot, avatar_url, bio, pronouns,
  created_at, updated_at, deleted_at, suspended_at, suspend_reason, bot_created_by, bot_integration FROM chat_users`;

async function one(db: Pool, where: string, value: string): Promise<ChatUserRow | null> {
  const { rows } = await db.query<ChatUserRow>(`${SELECT} WHERE ${where}`, [value]);
  return rows[0] ?? null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any account with this id, deleted ones included; null for a malformed id. */
export const chatUserById = (db: Pool, id: string) => (UUID.test(id) ? one(db, 'id = $1', id) : Promise.resolve(null));
/** The live account with this username, compared case-insensitively. */
export const chatUserByUsername = (db: Pool, username: string) =>
  one(db, 'lower(username) = lower($1) AND deleted_at IS NULL', username);

export async function chatAccountCount(db: Pool): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_users');
  return rows[0]!.n;
}
