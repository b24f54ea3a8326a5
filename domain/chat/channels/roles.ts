// Authority in a channel: the channel role (owner, moderator, member), raised by the community
// role for a community channel (moderators moderate, admins and the owner act as channel
// owners: "moderation actions resolve the actor's community role"). One rank scale, one rule:
// act on someone only when your rank is strictly above theirs.

import { rankOf, type CommunityRole } from '../communities/roles.ts';

export const CHANNEL_ROLES = ['member', 'moderator', 'owner'] as const;
export type ChannelRole = (typeof CHANNEL_ROLES)[number];

export const MANAGER = 1;
export const OWNER = 2;

/** The effective rank of someone with `channelRole` (null: not a member) and `communityRole` in the channel's community. */
export function channelRank(
  channelRole: ChannelRole | null | undefined,
  communityRole: CommunityRole | null | undefined,
): number {
  const own = channelRole ? CHANNEL_ROLES.indexOf(channelRole) : -1;
  const community = rankOf(communityRole) >= rankOf('admin') ? OWNER : communityRole === 'moderator' ? MANAGER : -1;
  return Math.max(own, community);
}
