// Communities and what hangs off them: `chat_communities`, members with roles and nicknames,
// bans, invites (hash and sealed code; uses counted from joins), warnings, and channel timeouts
// (moderation is community-scoped: the community's role decides it).

import type { CommunityEvent } from '../../domain/chat/communities/events.ts';
import type { CommunityRole, GrantableRole } from '../../domain/chat/communities/roles.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

const FIELDS = ['name', 'description', 'theme', 'welcome_message', 'discoverable'] as const;

export const chatCommunitiesProjection = defineProjection<CommunityEvent>({
  name: 'chat_communities',
  handles: [
    'CommunityCreated',
    'CommunityUpdated',
    'CommunityDeleted',
    'CommunityOwnershipTransferred',
    'CommunityMemberJoined',
    'CommunityMemberDeparted',
    'CommunityMemberRoleChanged',
    'CommunityMemberNicknameChanged',
    'CommunityMemberBanned',
    'CommunityMemberUnbanned',
    'CommunityInviteCreated',
    'CommunityInviteRevoked',
    'CommunityTimeoutImposed',
    'CommunityTimeoutLifted',
    'CommunityMemberWarned',
  ],
  tables: [
    'chat_communities',
    'chat_community_members',
    'chat_community_bans',
    'chat_community_invites',
    'chat_community_warnings',
    'chat_channel_timeouts',
  ],
  async apply(event, tx) {
    const d = event.data;
    const cid = d.community_id;
    switch (event.type) {
      case 'CommunityCreated': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_communities (id, name, description, theme, welcome_message, discoverable, owner_id, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [cid, e.name, e.description, e.theme, e.welcome_message, e.discoverable, e.owner_id, e.at],
        );
        return;
      }
      case 'CommunityUpdated': {
        const changes = event.data.changes;
        const keys = FIELDS.filter((k) => k in changes);
        const sets = keys.map((k, i) => `${k} = $${i + 3}`);
        await tx.query(`UPDATE chat_communities SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [
          cid,
          d.at,
          ...keys.map((k) => changes[k]),
        ]);
        return;
      }
      case 'CommunityDeleted':
        await tx.query('UPDATE chat_communities SET deleted_at = $2, updated_at = $2 WHERE id = $1', [cid, d.at]);
        return;
      case 'CommunityOwnershipTransferred':
        await tx.query('UPDATE chat_communities SET owner_id = $2, updated_at = $3 WHERE id = $1', [
          cid,
          event.data.to,
          d.at,
        ]);
        await tx.query(
          `UPDATE chat_community_members SET role = CASE WHEN user_id = $2 THEN 'owner' ELSE 'admin' END WHERE community_id = $1 AND user_id IN ($2, $3)`,
          [cid, event.data.to, event.data.from],
        );
        return;
      case 'CommunityMemberJoined':
        await tx.query(
          'INSERT INTO chat_community_members (community_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
          [cid, event.data.user_id, event.data.role, d.at],
        );
        if (event.data.invite_id)
          await tx.query('UPDATE chat_community_invites SET uses = uses + 1 WHERE id = $1', [event.data.invite_id]);
        return;
      case 'CommunityMemberDeparted':
        await tx.query('DELETE FROM chat_community_members WHERE community_id = $1 AND user_id = $2', [
          cid,
          event.data.user_id,
        ]);
        return;
      case 'CommunityMemberRoleChanged':
        await tx.query('UPDATE chat_community_members SET role = $3 WHERE community_id = $1 AND user_id = $2', [
          cid,
          event.data.user_id,
          event.data.role,
        ]);
        return;
      case 'CommunityMemberNicknameChanged':
        await tx.query('UPDATE chat_community_members SET nickname = $3 WHERE community_id = $1 AND user_id = $2', [
          cid,
          event.data.user_id,
          event.data.nickname,
        ]);
        return;
      case 'CommunityMemberBanned':
        await tx.query(
          'INSERT INTO chat_community_bans (community_id, user_id, reason, banned_by, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
          [cid, event.data.user_id, event.data.reason, event.data.by, d.at],
        );
        return;
      case 'CommunityMemberUnbanned':
        await tx.query('DELETE FROM chat_community_bans WHERE community_id = $1 AND user_id = $2', [
          cid,
          event.data.user_id,
        ]);
        return;
      case 'CommunityInviteCreated': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_community_invites (id, community_id, code_hash, code_sealed, grants_role, max_uses, expires_at, created_by, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [e.invite_id, cid, e.code_hash, e.code_sealed, e.grants_role, e.max_uses, e.expires_at, e.created_by, e.at],
        );
        return;
      }
      case 'CommunityInviteRevoked':
        await tx.query('UPDATE chat_community_invites SET revoked_at = $2 WHERE id = $1', [event.data.invite_id, d.at]);
        return;
      case 'CommunityTimeoutImposed': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_channel_timeouts (channel_id, user_id, until, reason, timed_out_by, created_at) VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (channel_id, user_id) DO UPDATE SET until = EXCLUDED.until, reason = EXCLUDED.reason, timed_out_by = EXCLUDED.timed_out_by, created_at = EXCLUDED.created_at`,
          [e.channel_id, e.user_id, e.until, e.reason, e.by, e.at],
        );
        return;
      }
      case 'CommunityTimeoutLifted':
        await tx.query('DELETE FROM chat_channel_timeouts WHERE channel_id = $1 AND user_id = $2', [
          event.data.channel_id,
          event.data.user_id,
        ]);
        return;
      case 'CommunityMemberWarned': {
        const e = event.data;
        await tx.query(
          'INSERT INTO chat_community_warnings (id, community_id, channel_id, user_id, reason, warned_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [e.warning_id, cid, e.channel_id, e.user_id, e.reason, e.by, e.at],
        );
        return;
      }
    }
  },
});

export interface CommunityRow {
  id: string;
  name: string;
  description: string;
  theme: string | null;
  welcome_message: string | null;
  discoverable: boolean;
  owner_id: string;
  created_at: Date;
  updated_at: Date;
  member_count: number;
}

const COMMUNITY_COLUMNS = `c.id, c.name, c.description, c.theme, c.welcome_message, c.discoverable, c.owner_id, c.created_at, c.updated_at,
  (SELECT count(*)::int FROM chat_community_members x WHERE x.community_id = c.id) AS member_count`;

export interface CommunityAccess {
  community: CommunityRow;
  /** The caller's role; null when not a member. */
  role: CommunityRole | null;
  banned: boolean;
}

/** A live community and the caller's standing in it; null when there is no such community. */
export async function communityAccess(db: Pool, communityId: string, userId: string): Promise<CommunityAccess | null> {
  const { rows } = await db.query<CommunityRow & { role: CommunityRole | null; banned: boolean }>(
    `SELECT ${COMMUNITY_COLUMNS}, m.role, EXISTS (SELECT 1 FROM chat_community_bans b WHERE b.community_id = c.id AND b.user_id = $2) AS banned
     FROM chat_communities c LEFT JOIN chat_community_members m ON m.community_id = c.id AND m.user_id = $2
     WHERE c.id = $1 AND c.deleted_at IS NULL`,
    [communityId, userId],
  );
  const row = rows[0];
  if (!row) return null;
  const { role, banned, ...community } = row;
  return { community, role, banned };
}

export async function communitiesOf(db: Pool, userId: string): Promise<(CommunityRow & { role: CommunityRole })[]> {
  const { rows } = await db.query<CommunityRow & { role: CommunityRole }>(
    `SELECT ${COMMUNITY_COLUMNS}, m.role FROM chat_community_members m JOIN chat_communities c ON c.id = m.community_id
     WHERE m.user_id = $1 AND c.deleted_at IS NULL ORDER BY c.created_at, c.id`,
    [userId],
  );
  return rows;
}

/** A member's role in a community (null: not a member, or no such live community). */
export async function communityRoleOf(
  db: Pool,
  communityId: string | null,
  userId: string,
): Promise<CommunityRole | null> {
  if (!communityId) return null;
  const { rows } = await db.query<{ role: CommunityRole }>(
    `SELECT m.role FROM chat_community_members m JOIN chat_communities c ON c.id = m.community_id AND c.deleted_at IS NULL
     WHERE m.community_id = $1 AND m.user_id = $2`,
    [communityId, userId],
  );
  return rows[0]?.role ?? null;
}

export interface MemberRow {
  user_id: string;
  username: string;
  display_name: string;
  role: CommunityRole;
  nickname: string | null;
  joined_at: Date;
}

export async function communityMembers(db: Pool, communityId: string): Promise<MemberRow[]> {
  const { rows } = await db.query<MemberRow>(
    `SELECT m.user_id, u.username, u.display_name, m.role, m.nickname, m.joined_at FROM chat_community_members m JOIN chat_users u ON u.id = m.user_id
     WHERE m.community_id = $1 ORDER BY m.joined_at, m.user_id`,
    [communityId],
  );
  return rows;
}

export interface BanRow {
  user_id: string;
  username: string;
  reason: string | null;
  banned_by: string;
  created_at: Date;
}

export async function communityBans(db: Pool, communityId: string): Promise<BanRow[]> {
  const { rows } = await db.query<BanRow>(
    `SELECT b.user_id, u.username, b.reason, b.banned_by, b.created_at FROM chat_community_bans b JOIN chat_users u ON u.id = b.user_id
     WHERE b.community_id = $1 ORDER BY b.created_at, b.user_id`,
    [communityId],
  );
  return rows;
}

export interface CommunityInviteRow {
  id: string;
  community_id: string;
  code_sealed: string;
  grants_role: GrantableRole | null;
  max_uses: number | null;
  uses: number;
  expires_at: Date | null;
  created_by: string;
  created_at: Date;
  revoked_at: Date | null;
}

export async function communityInvites(db: Pool, communityId: string): Promise<CommunityInviteRow[]> {
  const { rows } = await db.query<CommunityInviteRow>(
    'SELECT * FROM chat_community_invites WHERE community_id = $1 AND revoked_at IS NULL ORDER BY created_at, id',
    [communityId],
  );
  return rows;
}

export async function communityInviteByHash(
  db: Pool,
  codeHash: string,
): Promise<(CommunityInviteRow & { community: CommunityRow }) | null> {
  const { rows } = await db.query<CommunityInviteRow>('SELECT * FROM chat_community_invites WHERE code_hash = $1', [
    codeHash,
  ]);
  const invite = rows[0];
  if (!invite) return null;
  const community = await db.query<CommunityRow>(
    `SELECT ${COMMUNITY_COLUMNS} FROM chat_communities c WHERE c.id = $1 AND c.deleted_at IS NULL`,
    [invite.community_id],
  );
  return community.rows[0] ? { ...invite, community: community.rows[0] } : null;
}

export interface WarningRow {
  id: string;
  channel_id: string;
  user_id: string;
  reason: string;
  warned_by: string;
  created_at: Date;
}

export async function warningsOf(db: Pool, communityId: string, userId: string): Promise<WarningRow[]> {
  const { rows } = await db.query<WarningRow>(
    'SELECT id, channel_id, user_id, reason, warned_by, created_at FROM chat_community_warnings WHERE community_id = $1 AND user_id = $2 ORDER BY created_at, id',
    [communityId, userId],
  );
  return rows;
}

/** Whether two users share a live community (user visibility, DMs). */
export async function shareCommunity(db: Pool, a: string, b: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM chat_community_members x JOIN chat_community_members y ON y.community_id = x.community_id AND y.user_id = $2
     JOIN chat_communities c ON c.id = x.community_id AND c.deleted_at IS NULL WHERE x.user_id = $1 LIMIT 1`,
    [a, b],
  );
  return rows.length > 0;
}
