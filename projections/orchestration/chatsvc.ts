// The `chatsvc_integrations` read model: one row per profile with a chat-service integration
// (IntegrationStatus without the live socket state). The bot token stays sealed here; the device
// state tables of migration 018 are not a read model (see there).

import { INTEGRATION_EVENT_TYPES, type IntegrationEvent } from '../../domain/orchestration/chatsvc/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatsvcIntegrationsProjection = defineProjection<IntegrationEvent>({
  name: 'chatsvc_integrations',
  handles: INTEGRATION_EVENT_TYPES,
  tables: ['chatsvc_integrations'],
  async apply(event, tx) {
    switch (event.type) {
      case 'ChatIntegrationConnected': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chatsvc_integrations (profile_id, integration_id, instance_url, bot_user_id, bot_username, token_prefix, token_sealed,
             token_expires_at, status, verify_tls, identity_fingerprint, default_community_id, connected_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9, $10, $11, $12, $12)
           ON CONFLICT (profile_id) DO UPDATE SET integration_id = $2, instance_url = $3, bot_user_id = $4, bot_username = $5, token_prefix = $6,
             token_sealed = $7, token_expires_at = $8, status = 'active', verify_tls = $9, identity_fingerprint = $10, default_community_id = $11,
             connected_at = $12, updated_at = $12`,
          [
            d.profile_id,
            d.integration_id,
            d.instance_url,
            d.bot_user_id,
            d.bot_username,
            d.token_prefix,
            d.token_sealed,
            d.token_expires_at,
            d.verify_tls,
            d.identity_fingerprint,
            d.default_community_id,
            d.at,
          ],
        );
        return;
      }
      case 'IntegrationRevokedExternally':
        await tx.query(
          `UPDATE chatsvc_integrations SET status = 'revoked_externally', updated_at = $3 WHERE profile_id = $1 AND integration_id = $2`,
          [event.data.profile_id, event.data.integration_id, event.data.at],
        );
        return;
      case 'ChatIntegrationDeleted':
        await tx.query('DELETE FROM chatsvc_integrations WHERE profile_id = $1', [event.data.profile_id]);
        return;
    }
  },
});

// --- queries ---------------------------------------------------------------------------------

export interface IntegrationRow {
  profile_id: string;
  integration_id: string;
  instance_url: string;
  bot_user_id: string;
  bot_username: string;
  token_prefix: string;
  token_sealed: string;
  token_expires_at: Date | null;
  status: 'active' | 'revoked_externally';
  verify_tls: boolean;
  identity_fingerprint: string;
  default_community_id: string | null;
  connected_at: Date;
  updated_at: Date;
}

export async function integrationOf(pool: Pool, profileId: string): Promise<IntegrationRow | null> {
  return (
    (await pool.query<IntegrationRow>('SELECT * FROM chatsvc_integrations WHERE profile_id = $1', [profileId]))
      .rows[0] ?? null
  );
}

export async function activeIntegrations(pool: Pool): Promise<IntegrationRow[]> {
  return (
    await pool.query<IntegrationRow>(`SELECT * FROM chatsvc_integrations WHERE status = 'active' ORDER BY connected_at`)
  ).rows;
}

/** The profile's `integrations.chatsvc`: metadata only. */
export function integrationSummary(row: IntegrationRow) {
  return {
    instance_url: row.instance_url,
    bot_user_id: row.bot_user_id,
    bot_username: row.bot_username,
    token_prefix: row.token_prefix,
    token_expires_at: row.token_expires_at?.toISOString() ?? null,
    status: row.status,
    verify_tls: row.verify_tls,
    identity_fingerprint: row.identity_fingerprint,
  };
}
