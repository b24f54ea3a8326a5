// Authorisation for the chat service's spaces, one function per resource: what a caller may
// see and do in a community, a group, a channel. Writes are decided again by the aggregates
// (domain/chat/*/decider.ts) against their own history; these answer the reads, and gather the
// facts (roles, visibility) a write's command carries. Later slices (webhooks, files, polls)
// use the same functions.
//
// Refusals: an unknown (or deleted) resource is 404; a known one the caller may not use is
// 403, except where the spec hides existence (gated assets): a private group is 404 to those
// outside it.

import { channelRank } from '../../domain/chat/channels/roles.ts';
import { checkPost } from '../../domain/chat/messages/policy.ts';
import type { CommunityRole } from '../../domain/chat/communities/roles.ts';
import { channelStanding, type ChannelStanding } from '../../projections/chat/channels.ts';
import { communityAccess, type CommunityAccess } from '../../projections/chat/communities.ts';
import { groupById, groupMemberRole, type GroupRow } from '../../projections/chat/groups.ts';
import type { GroupRole } from '../../domain/chat/groups/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { ApiError } from '../shared/http-errors.ts';
import { isUuid } from '../shared/params.ts';

export const notFound = (what: 'community' | 'group' | 'channel' | 'message' | 'invite' | 'user') =>
  new ApiError(404, `${what}_not_found`, `no such ${what}`);

/** A live community, for a caller who is a member (`members: false` also lets non-members through, e.g. to be refused by the decider). */
export async function communityFor(
  db: Pool,
  communityId: string,
  userId: string,
): Promise<CommunityAccess & { role: CommunityRole }> {
  const access = isUuid(communityId) ? await communityAccess(db, communityId, userId) : null;
  if (!access) throw notFound('community');
  if (!access.role) throw new ApiError(403, 'not_a_member', 'you are not a member of this community');
  return access as CommunityAccess & { role: CommunityRole };
}

export interface GroupAccess {
  group: GroupRow;
  community_role: CommunityRole | null;
  group_role: GroupRole | null;
}

/**
 * A live group the caller may see: a public group for a member of its community, a private one
 * for its members and community admins. Anyone else gets 404 for a private group (its
 * existence stays hidden) and 403 for a public one.
 */
export async function groupFor(db: Pool, groupId: string, userId: string): Promise<GroupAccess> {
  const group = isUuid(groupId) ? await groupById(db, groupId) : null;
  if (!group) throw notFound('group');
  const [access, group_role] = await Promise.all([
    communityAccess(db, group.community_id, userId),
    groupMemberRole(db, group.id, userId),
  ]);
  const community_role = access?.role ?? null;
  const seesAll = community_role === 'admin' || community_role === 'owner';
  if (group.visibility === 'private' && !group_role && !seesAll) throw notFound('group');
  if (!community_role) throw new ApiError(403, 'not_a_member', "you are not a member of this group's community");
  return { group, community_role, group_role };
}

export interface ChannelAccess extends ChannelStanding {
  /** A member who may read and post (subject to the posting policy). */
  member: boolean;
  /** Effective rank: the channel role, raised by the community role (domain/chat/channels/roles.ts). */
  rank: number;
  /** Whether `join` is open to the caller: a group channel they can see, without a ban. */
  joinable: boolean;
}

/** What the caller may do in a live channel; 404 for an unknown one. */
export async function channelFor(db: Pool, channelId: string, userId: string): Promise<ChannelAccess> {
  const standing = isUuid(channelId) ? await channelStanding(db, channelId, userId) : null;
  if (!standing) throw notFound('channel');
  const inCommunity = standing.channel.scope !== 'group' || standing.community_role !== null;
  const member = standing.role !== null && inCommunity;
  const joinable =
    standing.channel.scope === 'group' &&
    standing.community_role !== null &&
    !standing.community_banned &&
    !standing.banned &&
    (standing.group_visibility === 'public' || standing.group_member);
  return { ...standing, member, rank: channelRank(member ? standing.role : null, standing.community_role), joinable };
}

/**
 * A channel the caller may post in now, by the posting policy without slow mode (a poll or a
 * scheduled message is not a post yet: slow mode applies when it is posted).
 */
export async function postableChannel(db: Pool, channelId: string, userId: string, now: Date): Promise<ChannelAccess> {
  const access = await channelFor(db, channelId, userId);
  checkPost(
    {
      member: access.member,
      rank: access.rank,
      archived: access.channel.archived,
      read_only: access.channel.read_only,
      slow_mode_secs: 0,
      timed_out_until: access.timed_out_until,
      last_posted_at: null,
    },
    now,
  );
  return access;
}

/** A channel the caller is a member of (403 otherwise). */
export async function memberChannel(db: Pool, channelId: string, userId: string): Promise<ChannelAccess> {
  const access = await channelFor(db, channelId, userId);
  if (!access.member) throw new ApiError(403, 'not_a_member', 'you are not a member of this channel');
  return access;
}
