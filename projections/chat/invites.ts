// Registration invites (`chat_invites`): found by the hash of their code at registration, listed
// for admins. The code itself is shown once, at minting.

import type { InviteEvent } from '../../domain/chat/invites/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatInvitesProjection = defineProjection<InviteEvent>({
  name: 'chat_invites',
  handles: ['RegistrationInviteCreated', 'RegistrationInviteRedeemed', 'RegistrationInviteRevoked'],
  tables: ['chat_invites'],
  async apply(event, tx) {
    switch (event.type) {
      case 'RegistrationInviteCreated': {
        const d = event.data;
        await tx.query(
          'INSERT INTO chat_invites (id, code_hash, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
          [d.invite_id, d.code_hash, d.created_by, d.at, d.expires_at],
        );
        return;
      }
      case 'RegistrationInviteRedeemed':
        await tx.query('UPDATE chat_invites SET redeemed_by = $2, redeemed_at = $3 WHERE id = $1', [
          event.data.invite_id,
          event.data.user_id,
          event.data.at,
        ]);
        return;
      case 'RegistrationInviteRevoked':
        await tx.query('UPDATE chat_invites SET revoked_at = $2 WHERE id = $1', [event.data.invite_id, event.data.at]);
        return;
    }
  },
});

export interface InviteRow {
  id: string;
  created_by: string;
  created_at: Date;
  expires_at: Date | null;
  redeemed_by: string | null;
  redeemed_at: Date | null;
  revoked_at: Date | null;
}

const SELECT = 'SELECT id, created_by, created_at, expires_at, redeemed_by, redeemed_at, revoked_at FROM chat_invites';

export async function inviteIdByCodeHash(db: Pool, codeHash: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM chat_invites WHERE code_hash = $1', [codeHash]);
  return rows[0]?.id ?? null;
}

export async function listInvites(
  db: Pool,
  limit: number,
  offset: number,
): Promise<{ rows: InviteRow[]; total: number }> {
  const [page, count] = await Promise.all([
    db.query<InviteRow>(`${SELECT} ORDER BY created_at DESC, id LIMIT $1 OFFSET $2`, [limit, offset]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_invites'),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}

export async function inviteById(db: Pool, id: string): Promise<InviteRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const { rows } = await db.query<InviteRow>(`${SELECT} WHERE id = $1`, [id]);
  return rows[0] ?? null;
}
