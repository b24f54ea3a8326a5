// Groups of a community: `chat_groups`, their members and invites.

import type { GroupEvent, GroupRole, Visibility } from '../../domain/chat/groups/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

const FIELDS = ['name', 'description', 'visibility', 'accent_color'] as const;

export const chatGroupsProjection = defineProjection<GroupEvent>({
  name: 'chat_groups',
  handles: [
    'GroupCreated',
    'GroupUpdated',
    'GroupDeleted',
    'GroupOwnershipTransferred',
    'GroupMemberJoined',
    'GroupMemberDeparted',
    'GroupInviteCreated',
  ],
  tables: ['chat_groups', 'chat_group_members', 'chat_group_invites'],
  async apply(event, tx) {
    const gid = event.data.group_id;
    const at = event.data.at;
    switch (event.type) {
      case 'GroupCreated': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_groups (id, community_id, name, description, visibility, accent_color, owner_id, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
          [gid, e.community_id, e.name, e.description, e.visibility, e.accent_color, e.owner_id, at],
        );
        return;
      }
      case 'GroupUpdated': {
        const changes = event.data.changes;
        const keys = FIELDS.filter((k) => k in changes);
        await tx.query(
          `UPDATE chat_groups SET ${[...keys.map((k, i) => `${k} = $${i + 3}`), 'updated_at = $2'].join(', ')} WHERE id = $1`,
          [gid, at, ...keys.map((k) => changes[k])],
        );
        return;
      }
      case 'GroupDeleted':
        await tx.query('UPDATE chat_groups SET deleted_at = $2, updated_at = $2 WHERE id = $1', [gid, at]);
        return;
      case 'GroupOwnershipTransferred':
        await tx.query('UPDATE chat_groups SET owner_id = $2, updated_at = $3 WHERE id = $1', [gid, event.data.to, at]);
        await tx.query(
          `UPDATE chat_group_members SET role = CASE WHEN user_id = $2 THEN 'owner' ELSE 'member' END WHERE group_id = $1 AND user_id IN ($2, $3)`,
          [gid, event.data.to, event.data.from],
        );
        return;
      case 'GroupMemberJoined':
        await tx.query(
          'INSERT INTO chat_group_members (group_id, user_id, role, joined_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
          [gid, event.data.user_id, event.data.role, at],
        );
        if (event.data.invite_id)
          await tx.query('UPDATE chat_group_invites SET uses = uses + 1 WHERE id = $1', [event.data.invite_id]);
        return;
      case 'GroupMemberDeparted':
        await tx.query('DELETE FROM chat_group_members WHERE group_id = $1 AND user_id = $2', [
          gid,
          event.data.user_id,
        ]);
        return;
      case 'GroupInviteCreated': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_group_invites (id, group_id, code_hash, code_sealed, max_uses, expires_at, created_by, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [e.invite_id, gid, e.code_hash, e.code_sealed, e.max_uses, e.expires_at, e.created_by, at],
        );
        return;
      }
    }
  },
});

export interface GroupRow {
  id: string;
  community_id: string;
  name: string;
  description: string;
  visibility: Visibility;
  accent_color: string | null;
  owner_id: string;
  created_at: Date;
  updated_at: Date;
  member_count: number;
}

const COLUMNS = `g.id, g.community_id, g.name, g.description, g.visibility, g.accent_color, g.owner_id, g.created_at, g.updated_at,
  (SELECT count(*)::int FROM chat_group_members x WHERE x.group_id = g.id) AS member_count`;
/** Groups whose community is live too. */
const LIVE =
  'g.deleted_at IS NULL AND EXISTS (SELECT 1 FROM chat_communities c WHERE c.id = g.community_id AND c.deleted_at IS NULL)';

export async function groupById(db: Pool, groupId: string): Promise<GroupRow | null> {
  const { rows } = await db.query<GroupRow>(`SELECT ${COLUMNS} FROM chat_groups g WHERE g.id = $1 AND ${LIVE}`, [
    groupId,
  ]);
  return rows[0] ?? null;
}

export async function groupMemberRole(db: Pool, groupId: string, userId: string): Promise<GroupRole | null> {
  const { rows } = await db.query<{ role: GroupRole }>(
    'SELECT role FROM chat_group_members WHERE group_id = $1 AND user_id = $2',
    [groupId, userId],
  );
  return rows[0]?.role ?? null;
}

export async function groupsOf(db: Pool, userId: string, communityId: string | null): Promise<GroupRow[]> {
  const { rows } = await db.query<GroupRow>(
    `SELECT ${COLUMNS} FROM chat_group_members m JOIN chat_groups g ON g.id = m.group_id
     WHERE m.user_id = $1 AND ${LIVE} AND ($2::uuid IS NULL OR g.community_id = $2) ORDER BY g.created_at, g.id`,
    [userId, communityId],
  );
  return rows;
}

/** Groups of a community the caller may see: public ones, and private ones they belong to (`all`: every one, for community admins). */
export async function communityGroups(
  db: Pool,
  communityId: string,
  userId: string,
  all: boolean,
): Promise<GroupRow[]> {
  const { rows } = await db.query<GroupRow>(
    `SELECT ${COLUMNS} FROM chat_groups g WHERE g.community_id = $1 AND ${LIVE}
       AND ($3 OR g.visibility = 'public' OR EXISTS (SELECT 1 FROM chat_group_members m WHERE m.group_id = g.id AND m.user_id = $2))
     ORDER BY g.created_at, g.id`,
    [communityId, userId, all],
  );
  return rows;
}

export async function discoverGroups(db: Pool, userId: string): Promise<(GroupRow & { joined: boolean })[]> {
  const { rows } = await db.query<GroupRow & { joined: boolean }>(
    `SELECT ${COLUMNS}, EXISTS (SELECT 1 FROM chat_group_members m WHERE m.group_id = g.id AND m.user_id = $1) AS joined
     FROM chat_groups g JOIN chat_community_members cm ON cm.community_id = g.community_id AND cm.user_id = $1
     WHERE g.visibility = 'public' AND ${LIVE} ORDER BY g.created_at, g.id`,
    [userId],
  );
  return rows;
}

export async function liveGroupCount(db: Pool, communityId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM chat_groups WHERE community_id = $1 AND deleted_at IS NULL',
    [communityId],
  );
  return rows[0]!.n;
}

export interface GroupMemberRow {
  user_id: string;
  username: string;
  display_name: string;
  role: GroupRole;
  joined_at: Date;
}

export async function groupMembers(db: Pool, groupId: string): Promise<GroupMemberRow[]> {
  const { rows } = await db.query<GroupMemberRow>(
    `SELECT m.user_id, u.username, u.display_name, m.role, m.joined_at FROM chat_group_members m JOIN chat_users u ON u.id = m.user_id
     WHERE m.group_id = $1 ORDER BY m.joined_at, m.user_id`,
    [groupId],
  );
  return rows;
}

/** The groups (of one community) a user belongs to: the cascade when they leave the community. */
export async function groupIdsOfMember(db: Pool, communityId: string, userId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT g.id FROM chat_group_members m JOIN chat_groups g ON g.id = m.group_id WHERE g.community_id = $1 AND m.user_id = $2 AND g.deleted_at IS NULL',
    [communityId, userId],
  );
  return rows.map((r) => r.id);
}

export interface GroupInviteRow {
  id: string;
  group_id: string;
  code_sealed: string;
  max_uses: number | null;
  uses: number;
  expires_at: Date | null;
  created_by: string;
  created_at: Date;
}

export async function groupInvites(db: Pool, groupId: string): Promise<GroupInviteRow[]> {
  const { rows } = await db.query<GroupInviteRow>(
    'SELECT id, group_id, code_sealed, max_uses, uses, expires_at, created_by, created_at FROM chat_group_invites WHERE group_id = $1 ORDER BY created_at, id',
    [groupId],
  );
  return rows;
}

export async function groupInviteByHash(db: Pool, codeHash: string): Promise<GroupInviteRow | null> {
  const { rows } = await db.query<GroupInviteRow>(
    'SELECT id, group_id, code_sealed, max_uses, uses, expires_at, created_by, created_at FROM chat_group_invites WHERE code_hash = $1',
    [codeHash],
  );
  return rows[0] ?? null;
}
