// Channels (standalone, group, DM): `chat_channels`, members with channel roles, bans, pins.
// `channelAccess` answers in one query everything an authorisation decision about a channel
// needs (api/chat/access.ts turns it into allow or refuse).

import type { PurgeEvent } from '../../domain/chat/admin/events.ts';
import type { ChannelEvent, ChannelKind, ChannelScope } from '../../domain/chat/channels/events.ts';
import type { ChannelRole } from '../../domain/chat/channels/roles.ts';
import type { CommunityRole } from '../../domain/chat/communities/roles.ts';
import type { Visibility } from '../../domain/chat/groups/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

const FIELDS = ['name', 'description', 'topic', 'slow_mode_secs', 'read_only', 'archived'] as const;

export const chatChannelsProjection = defineProjection<ChannelEvent | PurgeEvent>({
  name: 'chat_channels',
  handles: [
    'ChannelCreated',
    'ChannelUpdated',
    'ChannelDeleted',
    'ChannelMemberJoined',
    'ChannelMemberDeparted',
    'ChannelMemberRoleChanged',
    'ChannelOwnershipTransferred',
    'ChannelMemberBanned',
    'ChannelMemberUnbanned',
    'MessagePinned',
    'MessageUnpinned',
    'Purged',
  ],
  tables: ['chat_channels', 'chat_channel_members', 'chat_channel_bans', 'chat_pins'],
  async apply(event, tx) {
    if (event.type === 'Purged') {
      // A purged channel is hard-deleted from the read models (its messages: projections/chat/messages.ts).
      if (event.data.target_type === 'channel') {
        for (const table of ['chat_channel_members', 'chat_channel_bans', 'chat_pins'])
          await tx.query(`DELETE FROM ${table} WHERE channel_id = $1`, [event.data.target_id]);
        await tx.query('DELETE FROM chat_channels WHERE id = $1', [event.data.target_id]);
      } else if (event.data.target_type === 'message') {
        await tx.query('DELETE FROM chat_pins WHERE message_id = $1', [event.data.target_id]);
      }
      return;
    }
    const id = event.data.channel_id;
    const at = event.data.at;
    switch (event.type) {
      case 'ChannelCreated': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_channels (id, scope, kind, group_id, community_id, name, description, owner_id, created_by, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
          [id, e.scope, e.kind, e.group_id, e.community_id, e.name, e.description, e.owner_id, e.created_by, at],
        );
        await tx.query(
          `INSERT INTO chat_channel_members (channel_id, user_id, role, joined_at)
          SELECT $1, u, CASE WHEN u = $3 THEN 'owner' ELSE 'member' END, $4 FROM unnest($2::uuid[]) AS u`,
          [id, e.member_ids, e.owner_id, at],
        );
        return;
      }
      case 'ChannelUpdated': {
        const changes = event.data.changes;
        const keys = FIELDS.filter((k) => k in changes);
        await tx.query(
          `UPDATE chat_channels SET ${[...keys.map((k, i) => `${k} = $${i + 3}`), 'updated_at = $2'].join(', ')} WHERE id = $1`,
          [id, at, ...keys.map((k) => changes[k])],
        );
        return;
      }
      case 'ChannelDeleted':
        await tx.query('UPDATE chat_channels SET deleted_at = $2, updated_at = $2 WHERE id = $1', [id, at]);
        return;
      case 'ChannelMemberJoined':
        await tx.query(
          'INSERT INTO chat_channel_members (channel_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
          [id, event.data.user_id, event.data.role, at],
        );
        return;
      case 'ChannelMemberDeparted':
        await tx.query('DELETE FROM chat_channel_members WHERE channel_id = $1 AND user_id = $2', [
          id,
          event.data.user_id,
        ]);
        return;
      case 'ChannelMemberRoleChanged':
        await tx.query('UPDATE chat_channel_members SET role = $3 WHERE channel_id = $1 AND user_id = $2', [
          id,
          event.data.user_id,
          event.data.role,
        ]);
        return;
      case 'ChannelOwnershipTransferred':
        await tx.query('UPDATE chat_channels SET owner_id = $2, updated_at = $3 WHERE id = $1', [
          id,
          event.data.to,
          at,
        ]);
        await tx.query(
          `UPDATE chat_channel_members SET role = CASE WHEN user_id = $2 THEN 'owner' ELSE 'moderator' END WHERE channel_id = $1 AND (user_id = $2 OR user_id = $3)`,
          [id, event.data.to, event.data.from],
        );
        return;
      case 'ChannelMemberBanned':
        await tx.query(
          'INSERT INTO chat_channel_bans (channel_id, user_id, banned_by, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
          [id, event.data.user_id, event.data.by, at],
        );
        return;
      case 'ChannelMemberUnbanned':
        await tx.query('DELETE FROM chat_channel_bans WHERE channel_id = $1 AND user_id = $2', [
          id,
          event.data.user_id,
        ]);
        return;
      case 'MessagePinned':
        await tx.query(
          'INSERT INTO chat_pins (channel_id, message_id, pinned_by, pinned_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
          [id, event.data.message_id, event.data.by, at],
        );
        return;
      case 'MessageUnpinned':
        await tx.query('DELETE FROM chat_pins WHERE channel_id = $1 AND message_id = $2', [id, event.data.message_id]);
        return;
    }
  },
});

export interface ChannelRow {
  id: string;
  scope: ChannelScope;
  kind: ChannelKind;
  group_id: string | null;
  community_id: string | null;
  name: string;
  description: string;
  topic: string | null;
  slow_mode_secs: number;
  read_only: boolean;
  archived: boolean;
  owner_id: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
  member_count: number;
}

const COLUMNS = `ch.id, ch.scope, ch.kind, ch.group_id, ch.community_id, ch.name, ch.description, ch.topic, ch.slow_mode_secs, ch.read_only, ch.archived,
  ch.owner_id, ch.created_by, ch.created_at, ch.updated_at, (SELECT count(*)::int FROM chat_channel_members x WHERE x.channel_id = ch.id) AS member_count`;
/** A channel whose group and community (if any) are live too. */
const LIVE = `ch.deleted_at IS NULL
  AND (ch.group_id IS NULL OR EXISTS (SELECT 1 FROM chat_groups g WHERE g.id = ch.group_id AND g.deleted_at IS NULL))
  AND (ch.community_id IS NULL OR EXISTS (SELECT 1 FROM chat_communities c WHERE c.id = ch.community_id AND c.deleted_at IS NULL))`;

export interface ChannelStanding {
  channel: ChannelRow;
  /** The caller's channel role (null: not a member). */
  role: ChannelRole | null;
  community_role: CommunityRole | null;
  group_visibility: Visibility | null;
  group_member: boolean;
  banned: boolean;
  community_banned: boolean;
  timed_out_until: Date | null;
}

export async function channelStanding(db: Pool, channelId: string, userId: string): Promise<ChannelStanding | null> {
  const { rows } = await db.query<ChannelRow & Omit<ChannelStanding, 'channel'>>(
    `SELECT ${COLUMNS}, m.role,
       (SELECT cm.role FROM chat_community_members cm WHERE cm.community_id = ch.community_id AND cm.user_id = $2) AS community_role,
       (SELECT g.visibility FROM chat_groups g WHERE g.id = ch.group_id) AS group_visibility,
       EXISTS (SELECT 1 FROM chat_group_members gm WHERE gm.group_id = ch.group_id AND gm.user_id = $2) AS group_member,
       EXISTS (SELECT 1 FROM chat_channel_bans b WHERE b.channel_id = ch.id AND b.user_id = $2) AS banned,
       EXISTS (SELECT 1 FROM chat_community_bans b WHERE b.community_id = ch.community_id AND b.user_id = $2) AS community_banned,
       (SELECT t.until FROM chat_channel_timeouts t WHERE t.channel_id = ch.id AND t.user_id = $2) AS timed_out_until
     FROM chat_channels ch LEFT JOIN chat_channel_members m ON m.channel_id = ch.id AND m.user_id = $2
     WHERE ch.id = $1 AND ${LIVE}`,
    [channelId, userId],
  );
  const row = rows[0];
  if (!row) return null;
  const {
    role,
    community_role,
    group_visibility,
    group_member,
    banned,
    community_banned,
    timed_out_until,
    ...channel
  } = row;
  return { channel, role, community_role, group_visibility, group_member, banned, community_banned, timed_out_until };
}

/** Channels the user is a member of, by scope (standalone and group channels, or DMs). */
export async function channelsOf(
  db: Pool,
  userId: string,
  scopes: ChannelScope[],
): Promise<(ChannelRow & { role: ChannelRole })[]> {
  const { rows } = await db.query<ChannelRow & { role: ChannelRole }>(
    `SELECT ${COLUMNS}, m.role FROM chat_channel_members m JOIN chat_channels ch ON ch.id = m.channel_id
     WHERE m.user_id = $1 AND ch.scope = ANY($2) AND ${LIVE} ORDER BY ch.created_at, ch.id`,
    [userId, scopes],
  );
  return rows;
}

export async function groupChannels(db: Pool, groupId: string): Promise<ChannelRow[]> {
  const { rows } = await db.query<ChannelRow>(
    `SELECT ${COLUMNS} FROM chat_channels ch WHERE ch.group_id = $1 AND ${LIVE} ORDER BY ch.created_at, ch.id`,
    [groupId],
  );
  return rows;
}

export async function liveChannelCount(db: Pool, groupId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM chat_channels WHERE group_id = $1 AND deleted_at IS NULL',
    [groupId],
  );
  return rows[0]!.n;
}

export interface ChannelMemberRow {
  user_id: string;
  username: string;
  display_name: string;
  role: ChannelRole;
  joined_at: Date;
}

export async function channelMembers(db: Pool, channelId: string): Promise<ChannelMemberRow[]> {
  const { rows } = await db.query<ChannelMemberRow>(
    `SELECT m.user_id, u.username, u.display_name, m.role, m.joined_at FROM chat_channel_members m JOIN chat_users u ON u.id = m.user_id
     WHERE m.channel_id = $1 ORDER BY m.joined_at, m.user_id`,
    [channelId],
  );
  return rows;
}

export async function channelMemberIds(db: Pool, channelId: string, among: string[]): Promise<string[]> {
  const { rows } = await db.query<{ user_id: string }>(
    'SELECT user_id FROM chat_channel_members WHERE channel_id = $1 AND user_id = ANY($2::uuid[])',
    [channelId, among],
  );
  return rows.map((r) => r.user_id);
}

/** The user's channels in a community (or in one group): the cascade when they leave it. */
export async function channelIdsOfMember(
  db: Pool,
  userId: string,
  scope: { community_id: string } | { group_id: string },
): Promise<string[]> {
  const [column, value] = 'community_id' in scope ? ['community_id', scope.community_id] : ['group_id', scope.group_id];
  const { rows } = await db.query<{ id: string }>(
    `SELECT ch.id FROM chat_channel_members m JOIN chat_channels ch ON ch.id = m.channel_id WHERE ch.${column} = $1 AND m.user_id = $2 AND ch.deleted_at IS NULL`,
    [value, userId],
  );
  return rows.map((r) => r.id);
}

/** The role a member has in a channel (null: not a member). */
export async function channelRoleOf(db: Pool, channelId: string, userId: string): Promise<ChannelRole | null> {
  const { rows } = await db.query<{ role: ChannelRole }>(
    'SELECT role FROM chat_channel_members WHERE channel_id = $1 AND user_id = $2',
    [channelId, userId],
  );
  return rows[0]?.role ?? null;
}
