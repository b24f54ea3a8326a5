// TOTP per chat account (`chat_totp`): whether it is on, its sealed secret (pending until
// verified) and how many backup codes remain. Which codes remain, and the last accepted time
// step, live in the account's TOTP stream, where the decisions are taken.

import type { TotpEvent } from '../../domain/chat/totp/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatTotpProjection = defineProjection<TotpEvent>({
  name: 'chat_totp',
  handles: ['TotpSetupStarted', 'TotpEnabled', 'TotpDisabled', 'TotpCodeUsed', 'BackupCodeUsed'],
  tables: ['chat_totp'],
  async apply(event, tx) {
    const { user_id, at } = event.data;
    switch (event.type) {
      case 'TotpSetupStarted':
        await tx.query(
          `INSERT INTO chat_totp (user_id, secret_sealed, enabled, backup_codes_remaining, updated_at) VALUES ($1, $2, false, 0, $3)
           ON CONFLICT (user_id) DO UPDATE SET secret_sealed = $2, enabled = false, backup_codes_remaining = 0, updated_at = $3`,
          [user_id, event.data.secret_sealed, at],
        );
        return;
      case 'TotpEnabled':
        await tx.query(
          'UPDATE chat_totp SET enabled = true, backup_codes_remaining = $2, updated_at = $3 WHERE user_id = $1',
          [user_id, event.data.backup_code_hashes.length, at],
        );
        return;
      case 'TotpDisabled':
        await tx.query(
          'UPDATE chat_totp SET enabled = false, secret_sealed = NULL, backup_codes_remaining = 0, updated_at = $2 WHERE user_id = $1',
          [user_id, at],
        );
        return;
      case 'TotpCodeUsed':
        return;
      case 'BackupCodeUsed':
        await tx.query(
          'UPDATE chat_totp SET backup_codes_remaining = greatest(backup_codes_remaining - 1, 0), updated_at = $2 WHERE user_id = $1',
          [user_id, at],
        );
        return;
    }
  },
});

export interface TotpRow {
  secret_sealed: string | null;
  enabled: boolean;
  backup_codes_remaining: number;
}

export async function totpOf(db: Pool, userId: string): Promise<TotpRow | null> {
  const { rows } = await db.query<TotpRow>(
    'SELECT secret_sealed, enabled, backup_codes_remaining FROM chat_totp WHERE user_id = $1',
    [userId],
  );
  return rows[0] ?? null;
}
