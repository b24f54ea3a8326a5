// Reads of the `users` read model.

import type { Pool } from '../../../infra/db/pool.ts';
import type { AuthSource, Role } from '../../../domain/orchestration/users/decider.ts';

export interface UserRow {
  id: string;
  username: string;
  email: string;
  role: Role;
  auth_source: AuthSource;
  is_active: boolean;
  api_key_sealed: string;
  password_hash: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, username, email, role, auth_source, is_active, api_key_sealed, password_hash, created_at, updated_at';

export async function userByKeyHash(pool: Pool, hash: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE api_key_hash = $1`, [hash]);
  return rows[0] ?? null;
}

export async function userById(pool: Pool, id: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0] ?? null;
}
