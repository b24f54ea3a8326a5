// The registry's interactive sessions (`registry_sessions`), looked up by the hash of the
// `registry_sess` cookie.

import type { InteractiveRole, RegistrySessionEvent } from '../../domain/registry/sessions/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const registrySessionsProjection = defineProjection<RegistrySessionEvent>({
  name: 'registry_sessions',
  handles: ['RegistrySessionStarted', 'RegistrySessionEnded'],
  tables: ['registry_sessions'],
  async apply(event, tx) {
    if (event.type === 'RegistrySessionStarted') {
      const d = event.data;
      await tx.query(
        'INSERT INTO registry_sessions (session_hash, subject, name, email, role, via, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        [d.session_hash, d.subject, d.name, d.email, d.role, d.via, d.at, d.expires_at],
      );
    } else {
      await tx.query('UPDATE registry_sessions SET ended_at = $2 WHERE session_hash = $1', [
        event.data.session_hash,
        event.data.at,
      ]);
    }
  },
});

export interface RegistrySessionRow {
  session_hash: string;
  subject: string;
  name: string;
  email: string | null;
  role: InteractiveRole;
  expires_at: Date;
}

/** The live session with this cookie hash: null when ended or expired at `now`. */
export async function liveSession(pool: Pool, sessionHash: string, now: Date): Promise<RegistrySessionRow | null> {
  const { rows } = await pool.query<RegistrySessionRow>(
    'SELECT session_hash, subject, name, email, role, expires_at FROM registry_sessions WHERE session_hash = $1 AND ended_at IS NULL AND expires_at > $2',
    [sessionHash, now],
  );
  return rows[0] ?? null;
}
