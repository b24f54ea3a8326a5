// Bot tokens (`chat_bot_tokens`) and their last use (`chat_bot_token_usage`, its own projection:
// a recorded use never clears the token cache). `botTokenByHash` answers in one query what the
// authentication of a bot request needs; `bots` and `botTokens` the administration routes.

import type { BotScope, BotTokenEvent, BotTokenUseEvent } from '../../domain/chat/bots/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { chatWebhooksProjection } from './webhooks.ts';
import { chatAnnouncementsProjection, chatFeedbackProjection } from './admin.ts';
import { chatAdminAuditProjection } from './admin-audit.ts';

export const chatBotTokensProjection = defineProjection<BotTokenEvent>({
  name: 'chat_bot_tokens',
  handles: ['BotTokenMinted', 'BotTokenRevoked'],
  tables: ['chat_bot_tokens'],
  async apply(event, tx) {
    if (event.type === 'BotTokenMinted') {
      const d = event.data;
      await tx.query(
        `INSERT INTO chat_bot_tokens (id, bot_id, token_hash, prefix, scope, label, expires_at, rate_limit_per_window, created_by, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
        [
          d.token_id,
          d.bot_id,
          d.token_hash,
          d.prefix,
          d.scope,
          d.label,
          d.expires_at,
          d.rate_limit_per_window,
          d.created_by,
          d.at,
        ],
      );
      return;
    }
    await tx.query('UPDATE chat_bot_tokens SET revoked_at = $2, revoked_by = $3 WHERE id = $1 AND revoked_at IS NULL', [
      event.data.token_id,
      event.data.at,
      event.data.by,
    ]);
  },
});

export const chatBotTokenUsageProjection = defineProjection<BotTokenUseEvent>({
  name: 'chat_bot_token_usage',
  handles: ['BotTokenUsed'],
  tables: ['chat_bot_token_usage'],
  async apply(event, tx) {
    await tx.query(
      `INSERT INTO chat_bot_token_usage (token_id, last_used_at) VALUES ($1, $2)
      ON CONFLICT (token_id) DO UPDATE SET last_used_at = GREATEST(chat_bot_token_usage.last_used_at, EXCLUDED.last_used_at)`,
      [event.data.token_id, event.data.at],
    );
  },
});

/** Every projection of the bots, webhooks, admin and feedback slices (issue 16). */
export const chatBotProjections = [
  chatBotTokensProjection,
  chatBotTokenUsageProjection,
  chatWebhooksProjection,
  chatAdminAuditProjection,
  chatAnnouncementsProjection,
  chatFeedbackProjection,
];

/** What authenticating a bot request needs: the token, its bot, and whether the bot's creator is suspended. */
export interface BotTokenAuthRow {
  token_id: string;
  bot_id: string;
  username: string;
  scope: BotScope;
  expires_at: Date | null;
  revoked_at: Date | null;
  rate_limit_per_window: number | null;
  is_bot: boolean;
  deleted: boolean;
  suspended: boolean;
}

export async function botTokenByHash(db: Pool, tokenHash: string): Promise<BotTokenAuthRow | null> {
  const { rows } = await db.query<BotTokenAuthRow>(
    `SELECT t.id AS token_id, t.bot_id, u.username, t.scope, t.expires_at, t.revoked_at, t.rate_limit_per_window, u.is_bot,
       u.deleted_at IS NOT NULL AS deleted, (u.suspended_at IS NOT NULL OR coalesce(c.suspended_at IS NOT NULL, false)) AS suspended
     FROM chat_bot_tokens t JOIN chat_users u ON u.id = t.bot_id LEFT JOIN chat_users c ON c.id = u.bot_created_by
     WHERE t.token_hash = $1`,
    [tokenHash],
  );
  return rows[0] ?? null;
}

export interface BotTokenRow {
  id: string;
  bot_id: string;
  prefix: string;
  scope: BotScope;
  label: string | null;
  expires_at: Date | null;
  rate_limit_per_window: number | null;
  created_by: string | null;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

const TOKEN_COLUMNS = `t.id, t.bot_id, t.prefix, t.scope, t.label, t.expires_at, t.rate_limit_per_window, t.created_by, t.created_at, t.revoked_at, g.last_used_at`;

export async function tokensOfBots(db: Pool, botIds: string[]): Promise<BotTokenRow[]> {
  const { rows } = await db.query<BotTokenRow>(
    `SELECT ${TOKEN_COLUMNS} FROM chat_bot_tokens t LEFT JOIN chat_bot_token_usage g ON g.token_id = t.id
     WHERE t.bot_id = ANY($1::uuid[]) ORDER BY t.created_at, t.id`,
    [botIds],
  );
  return rows;
}

/** Every token of a non-default scope that is not revoked (active or expired), newest first, with its bot's username. */
export async function integrationTokens(db: Pool): Promise<(BotTokenRow & { bot_username: string })[]> {
  const { rows } = await db.query<BotTokenRow & { bot_username: string }>(
    `SELECT ${TOKEN_COLUMNS}, u.username AS bot_username FROM chat_bot_tokens t JOIN chat_users u ON u.id = t.bot_id
     LEFT JOIN chat_bot_token_usage g ON g.token_id = t.id
     WHERE t.scope <> 'default' AND t.revoked_at IS NULL AND u.deleted_at IS NULL ORDER BY t.created_at DESC, t.id`,
  );
  return rows;
}

export interface BotRow {
  id: string;
  username: string;
  display_name: string;
  created_by: string | null;
  integration: string | null;
  created_at: Date;
  suspended_at: Date | null;
  has_identity_key: boolean;
}

const BOT_SELECT = `SELECT u.id, u.username, u.display_name, u.bot_created_by AS created_by, u.bot_integration AS integration, u.created_at, u.suspended_at,
  EXISTS (SELECT 1 FROM chat_identity_keys k WHERE k.user_id = u.id) AS has_identity_key FROM chat_users u`;

export async function listBots(db: Pool, limit: number, offset: number): Promise<{ rows: BotRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    db.query<BotRow>(
      `${BOT_SELECT} WHERE u.is_bot AND u.deleted_at IS NULL ORDER BY u.created_at, u.id LIMIT $1 OFFSET $2`,
      [limit, offset],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_users WHERE is_bot AND deleted_at IS NULL'),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export async function botById(db: Pool, id: string): Promise<BotRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  const { rows } = await db.query<BotRow>(`${BOT_SELECT} WHERE u.id = $1 AND u.is_bot AND u.deleted_at IS NULL`, [id]);
  return rows[0] ?? null;
}

/** The live integration bot with this username, if any. */
export async function botByUsername(db: Pool, username: string): Promise<BotRow | null> {
  const { rows } = await db.query<BotRow>(
    `${BOT_SELECT} WHERE lower(u.username) = lower($1) AND u.is_bot AND u.deleted_at IS NULL`,
    [username],
  );
  return rows[0] ?? null;
}

/** The public groups of a live community and their live channels (what a bot joined to the community joins too). */
export async function publicSpacesOf(db: Pool, communityId: string): Promise<{ groups: string[]; channels: string[] }> {
  const { rows } = await db.query<{ group_id: string; channel_id: string | null }>(
    `SELECT g.id AS group_id, ch.id AS channel_id FROM chat_groups g
     LEFT JOIN chat_channels ch ON ch.group_id = g.id AND ch.deleted_at IS NULL AND ch.scope = 'group'
     WHERE g.community_id = $1 AND g.deleted_at IS NULL AND g.visibility = 'public' ORDER BY g.created_at, g.id, ch.created_at, ch.id`,
    [communityId],
  );
  return {
    groups: [...new Set(rows.map((r) => r.group_id))],
    channels: rows.flatMap((r) => (r.channel_id ? [r.channel_id] : [])),
  };
}

export interface AdminCommunityRow {
  id: string;
  name: string;
  description: string;
  discoverable: boolean;
  member_count: number;
  created_at: Date;
}

/** Every live community, oldest first (instance administration and bot provisioning). */
export async function allCommunities(db: Pool): Promise<AdminCommunityRow[]> {
  const { rows } = await db.query<AdminCommunityRow>(
    `SELECT c.id, c.name, c.description, c.discoverable, c.created_at,
       (SELECT count(*)::int FROM chat_community_members m WHERE m.community_id = c.id) AS member_count
     FROM chat_communities c WHERE c.deleted_at IS NULL ORDER BY c.created_at, c.id`,
  );
  return rows;
}

/** The live communities a user belongs to, with the role. */
export async function communitiesOfUser(db: Pool, userId: string): Promise<(AdminCommunityRow & { role: string })[]> {
  const { rows } = await db.query<AdminCommunityRow & { role: string }>(
    `SELECT c.id, c.name, c.description, c.discoverable, c.created_at, m.role,
       (SELECT count(*)::int FROM chat_community_members x WHERE x.community_id = c.id) AS member_count
     FROM chat_community_members m JOIN chat_communities c ON c.id = m.community_id AND c.deleted_at IS NULL
     WHERE m.user_id = $1 ORDER BY c.created_at, c.id`,
    [userId],
  );
  return rows;
}

/** The cockpit's counts, in one round trip. */
export async function cockpitCounts(
  db: Pool,
): Promise<{ workspaces: number; members: number; channels: number; messages: number }> {
  const { rows } = await db.query<{ workspaces: number; members: number; channels: number; messages: number }>(
    `SELECT (SELECT count(*)::int FROM chat_communities WHERE deleted_at IS NULL) AS workspaces,
       (SELECT count(*)::int FROM chat_users WHERE deleted_at IS NULL) AS members,
       (SELECT count(*)::int FROM chat_channels WHERE deleted_at IS NULL) AS channels,
       (SELECT count(*)::int FROM chat_messages WHERE deleted_at IS NULL) AS messages`,
  );
  return rows[0]!;
}
