// Reads of the `users` read model.

import type { Pool } from '../../../infra/db/pool.ts';
import type { AuthSource, PrincipalType, Role } from '../../../domain/orchestration/users/decider.ts';

export interface UserRow {
  id: string;
  username: string;
  email: string;
  role: Role;
  auth_source: AuthSource;
  principal_type: PrincipalType;
  is_active: boolean;
  api_key_sealed: string;
  password_hash: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, username, email, role, auth_source, principal_type, is_active, api_key_sealed, password_hash, created_at, updated_at';

export async function userByKeyHash(pool: Pool, hash: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE api_key_hash = $1`, [hash]);
  return rows[0] ?? null;
}

export async function userById(pool: Pool, id: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function userByUsername(pool: Pool, username: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE username = $1`, [username]);
  return rows[0] ?? null;
}

export async function userByEmail(pool: Pool, email: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE lower(email) = lower($1)`, [email]);
  return rows[0] ?? null;
}

/** The live session with this cookie hash, with its account: null when ended, expired or inactive. */
export async function userBySession(pool: Pool, sessionHash: string): Promise<(UserRow & { session_expires_at: Date }) | null> {
  const { rows } = await pool.query<UserRow & { session_expires_at: Date }>(
    `SELECT ${COLUMNS.split(', ').map((c) => `u.${c}`).join(', ')}, s.expires_at AS session_expires_at FROM sessions s JOIN users u ON u.id = s.user_id
     WHERE s.session_hash = $1 AND s.ended_at IS NULL AND s.expires_at > now() AND u.is_active`, [sessionHash]);
  return rows[0] ?? null;
}

export async function listUsers(pool: Pool, limit: number, offset: number): Promise<{ users: UserRow[]; total: number }> {
  const [page, count] = await Promise.all([
    pool.query<UserRow>(`SELECT ${COLUMNS} FROM users ORDER BY created_at, id LIMIT $1 OFFSET $2`, [limit, offset]),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users'),
  ]);
  return { users: page.rows, total: count.rows[0]!.n };
}
