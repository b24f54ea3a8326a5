// The identity slice's read models: `users` (one row per account, looked up by API-key hash on
// every keyed request), `sessions` (looked up by the hash of the `orch_sess` cookie), and the
// audit table `api_key_rotations` (every rotation attempt, refused ones included, never a key
// value). Failed logins and rotations are also audit entries (projections/orchestration/audit.ts).
// Rows and queries live here
// with the writes, so a column is renamed in one file.

import type {
  SecurityEvent,
  AuthSource,
  PrincipalType,
  Role,
  UserEvent,
  SessionEvent,
} from '../../domain/orchestration/users/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const usersProjection = defineProjection<UserEvent>({
  name: 'users',
  handles: ['UserCreated', 'UserApiKeyRotated', 'UserRoleChanged', 'UserDeactivated', 'UserReactivated'],
  tables: ['users'],
  async apply(event, tx) {
    switch (event.type) {
      case 'UserCreated': {
        const d = event.data;
        await tx.query(
          `INSERT INTO users (id, username, email, role, auth_source, principal_type, is_active, api_key_hash, api_key_sealed, password_hash, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $9, $10, $10)`,
          [
            d.user_id,
            d.username,
            d.email,
            d.role,
            d.auth_source,
            d.principal_type ?? 'account',
            d.api_key_hash,
            d.api_key_sealed,
            d.password_hash ?? null,
            d.at,
          ],
        );
        return;
      }
      case 'UserApiKeyRotated':
        await tx.query('UPDATE users SET api_key_hash = $2, api_key_sealed = $3, updated_at = $4 WHERE id = $1', [
          event.data.user_id,
          event.data.api_key_hash,
          event.data.api_key_sealed,
          event.data.at,
        ]);
        return;
      case 'UserRoleChanged':
        await tx.query('UPDATE users SET role = $2, updated_at = $3 WHERE id = $1', [
          event.data.user_id,
          event.data.role,
          event.data.at,
        ]);
        return;
      case 'UserDeactivated':
      case 'UserReactivated':
        await tx.query('UPDATE users SET is_active = $2, updated_at = $3 WHERE id = $1', [
          event.data.user_id,
          event.type === 'UserReactivated',
          event.data.at,
        ]);
        return;
    }
  },
});

export const sessionsProjection = defineProjection<SessionEvent>({
  name: 'sessions',
  handles: ['SessionStarted', 'SessionEnded'],
  tables: ['sessions'],
  async apply(event, tx) {
    if (event.type === 'SessionStarted') {
      const d = event.data;
      await tx.query(
        'INSERT INTO sessions (session_hash, user_id, via, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [d.session_hash, d.user_id, d.via, d.at, d.expires_at],
      );
    } else {
      await tx.query('UPDATE sessions SET ended_at = $2 WHERE session_hash = $1', [
        event.data.session_hash,
        event.data.at,
      ]);
    }
  },
});

const ROUTE_OF_REASON: Record<string, string> = { self_service: 'self', admin: 'admin', recovery_cli: 'cli' };
const uuidOrNull = (v: string | null | undefined) => (v && /^[0-9a-f-]{36}$/i.test(v) ? v : null);

export const apiKeyRotationsProjection = defineProjection<
  Extract<UserEvent | SecurityEvent, { type: 'UserApiKeyRotated' | 'ApiKeyRotationRefused' }>
>({
  name: 'api_key_rotations',
  handles: ['UserApiKeyRotated', 'ApiKeyRotationRefused'],
  tables: ['api_key_rotations'],
  async apply(event, tx) {
    const insert = `INSERT INTO api_key_rotations (event_id, actor_id, actor_kind, target_user_id, route, outcome, reason, at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
    if (event.type === 'UserApiKeyRotated') {
      const d = event.data;
      // Rotations from configuration (ADMIN_API_KEY, ORCH_RUNNER_API_KEY changed) have route `config`.
      await tx.query(insert, [
        event.id,
        uuidOrNull(d.rotated_by),
        event.metadata.actor.kind,
        d.user_id,
        ROUTE_OF_REASON[d.reason] ?? 'config',
        'rotated',
        d.reason,
        d.at,
      ]);
    } else {
      const d = event.data;
      await tx.query(insert, [
        event.id,
        uuidOrNull(d.actor_id),
        d.actor_kind,
        uuidOrNull(d.target_user_id),
        d.route,
        'refused',
        d.reason,
        d.at,
      ]);
    }
  },
});

export const usersProjections = [usersProjection, sessionsProjection, apiKeyRotationsProjection];

// --- queries ---------------------------------------------------------------------------------

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

const COLUMNS = [
  'id',
  'username',
  'email',
  'role',
  'auth_source',
  'principal_type',
  'is_active',
  'api_key_sealed',
  'password_hash',
  'created_at',
  'updated_at',
];
const SELECT = `SELECT ${COLUMNS.join(', ')} FROM users`;

async function one(pool: Pool, where: string, value: string): Promise<UserRow | null> {
  const { rows } = await pool.query<UserRow>(`${SELECT} WHERE ${where}`, [value]);
  return rows[0] ?? null;
}

export const userByKeyHash = (pool: Pool, hash: string) => one(pool, 'api_key_hash = $1', hash);
export const userById = (pool: Pool, id: string) => one(pool, 'id = $1', id);
export const userByUsername = (pool: Pool, username: string) => one(pool, 'username = $1', username);
export const userByEmail = (pool: Pool, email: string) => one(pool, 'lower(email) = lower($1)', email);

export async function localPasswordAccountExists(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query(
    `SELECT 1 FROM users WHERE auth_source = 'local' AND password_hash IS NOT NULL LIMIT 1`,
  );
  return rows.length > 0;
}

export async function apiKeyHashOf(pool: Pool, id: string): Promise<string | null> {
  const { rows } = await pool.query<{ api_key_hash: string }>('SELECT api_key_hash FROM users WHERE id = $1', [id]);
  return rows[0]?.api_key_hash ?? null;
}

export type SessionUserRow = UserRow & { session_expires_at: Date };

/** The live session with this cookie hash, with its account: null when ended, expired at `now`, or inactive. */
export async function userBySession(pool: Pool, sessionHash: string, now: Date): Promise<SessionUserRow | null> {
  const { rows } = await pool.query<SessionUserRow>(
    `SELECT ${COLUMNS.map((c) => `u.${c}`).join(', ')}, s.expires_at AS session_expires_at FROM sessions s JOIN users u ON u.id = s.user_id
     WHERE s.session_hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND u.is_active`,
    [sessionHash, now],
  );
  return rows[0] ?? null;
}

export async function listUsers(
  pool: Pool,
  limit: number,
  offset: number,
): Promise<{ rows: UserRow[]; total: number }> {
  const [page, count] = await Promise.all([
    pool.query<UserRow>(`${SELECT} ORDER BY created_at, id LIMIT $1 OFFSET $2`, [limit, offset]),
    pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users'),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}
