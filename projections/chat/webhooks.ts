// Webhooks (`chat_webhooks`): listed per channel, found by token hash when executed.

import type { WebhookEvent } from '../../domain/chat/webhooks/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatWebhooksProjection = defineProjection<WebhookEvent>({
  name: 'chat_webhooks',
  handles: ['WebhookCreated', 'WebhookUpdated', 'WebhookDeleted'],
  tables: ['chat_webhooks'],
  async apply(event, tx) {
    switch (event.type) {
      case 'WebhookCreated': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_webhooks (id, channel_id, community_id, name, avatar_url, token_hash, created_by, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT DO NOTHING`,
          [d.webhook_id, d.channel_id, d.community_id, d.name, d.avatar_url, d.token_hash, d.created_by, d.at],
        );
        return;
      }
      case 'WebhookUpdated': {
        const c = event.data.changes;
        const keys = (['name', 'avatar_url', 'active'] as const).filter((k) => k in c);
        await tx.query(
          `UPDATE chat_webhooks SET ${[...keys.map((k, i) => `${k} = $${i + 3}`), 'updated_at = $2'].join(', ')} WHERE id = $1`,
          [event.data.webhook_id, event.data.at, ...keys.map((k) => c[k])],
        );
        return;
      }
      case 'WebhookDeleted':
        await tx.query('DELETE FROM chat_webhooks WHERE id = $1', [event.data.webhook_id]);
    }
  },
});

export interface WebhookRow {
  id: string;
  channel_id: string;
  community_id: string | null;
  name: string;
  avatar_url: string | null;
  active: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'w.id, w.channel_id, w.community_id, w.name, w.avatar_url, w.active, w.created_by, w.created_at, w.updated_at';

export async function webhooksOf(db: Pool, channelId: string): Promise<WebhookRow[]> {
  const { rows } = await db.query<WebhookRow>(
    `SELECT ${COLUMNS} FROM chat_webhooks w WHERE w.channel_id = $1 ORDER BY w.created_at, w.id`,
    [channelId],
  );
  return rows;
}

export async function webhookById(db: Pool, id: string): Promise<WebhookRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  const { rows } = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM chat_webhooks w WHERE w.id = $1`, [id]);
  return rows[0] ?? null;
}

/** A webhook about to post, with the settings of its channel that decide whether it may (domain/chat/messages/policy.ts). */
export interface ExecutableWebhook extends WebhookRow {
  archived: boolean;
  read_only: boolean;
  slow_mode_secs: number;
}

/** The active webhook with this token hash on a live channel, or null. */
export async function activeWebhookByHash(db: Pool, tokenHash: string): Promise<ExecutableWebhook | null> {
  const { rows } = await db.query<ExecutableWebhook>(
    `SELECT ${COLUMNS}, ch.archived, ch.read_only, ch.slow_mode_secs FROM chat_webhooks w JOIN chat_channels ch ON ch.id = w.channel_id AND ch.deleted_at IS NULL
     WHERE w.token_hash = $1 AND w.active`,
    [tokenHash],
  );
  return rows[0] ?? null;
}

/** Of these usernames (exact, case-sensitive), the live accounts that are members of the channel. */
export async function mentionableMembers(
  db: Pool,
  channelId: string,
  usernames: string[],
): Promise<{ id: string; username: string }[]> {
  if (!usernames.length) return [];
  const { rows } = await db.query<{ id: string; username: string }>(
    `SELECT u.id, u.username FROM chat_users u JOIN chat_channel_members m ON m.user_id = u.id AND m.channel_id = $1
     WHERE u.username = ANY($2::text[]) AND u.deleted_at IS NULL`,
    [channelId, usernames],
  );
  return rows;
}
