// Channels' use cases: create a standalone channel, change one, join, leave, transfer ownership,
// set a member's role, kick, ban, unban, and open a DM. The slice's application layer and the
// only caller of the command runner for it: each function gathers the read-model facts its
// decision needs (the caller's standing, the target's community role, the users named), runs the
// channel decider, and reads back what the route answers.

import { createHash, randomUUID } from 'node:crypto';
import { channelDecider, dmPairKey, type ChannelCommand } from '../../../domain/chat/channels/decider.ts';
import type { ChannelEvent } from '../../../domain/chat/channels/events.ts';
import { channelStream } from '../../../domain/chat/streams.ts';
import { asDomainEvent, type CommandContext } from '../../../infra/commands.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { channelMembers, channelStanding, type ChannelStanding } from '../../../projections/chat/channels.ts';
import { communityRoleOf, shareCommunity } from '../../../projections/chat/communities.ts';
import { isBlockedBy } from '../../../projections/chat/users.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { channelFor, notFound, type ChannelAccess } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type MemberCommand = DistributiveOmit<
  Exclude<ChannelCommand, { type: 'Remove' | 'Create' }>,
  'actor_id' | 'community_role' | 'at' | 'target_community_role'
>;

/** Runs a channel command as the caller, with the community facts its decision needs. */
async function channelCommand(
  deps: Deps,
  access: ChannelAccess,
  userId: string,
  command: MemberCommand,
  context: CommandContext,
) {
  const target =
    'user_id' in command ? await communityRoleOf(deps.db, access.channel.community_id, command.user_id) : null;
  const full = {
    ...command,
    actor_id: userId,
    community_role: access.community_role,
    target_community_role: target,
    at: deps.clock.now().toISOString(),
  } as ChannelCommand;
  return deps.commands.run(channelStream(access.channel.id), channelDecider, full, context);
}

/**
 * Whether the user is a member of the channel now: the read model says whether the channel (and
 * its group and community) is live (its access refusal thrown otherwise), and the channel's own
 * stream, read now, whether the user is a member (the read model may lag a removal). The live
 * socket's subscribe uses it (api/chat/ws/routes.ts).
 */
export async function isMemberNow(
  deps: Pick<ChatDeps, 'commands' | 'db'>,
  channelId: string,
  userId: string,
): Promise<boolean> {
  const access = await channelFor(deps.db, channelId, userId);
  const history = await deps.commands.store.readStream(channelStream(channelId));
  const state = history
    .map((e) => asDomainEvent<ChannelEvent>(e))
    .reduce(channelDecider.evolve, channelDecider.initialState());
  return access.member && state.members.has(userId);
}

/** A path's user id: 404 `user_not_found` when it is no UUID. */
const targetParam = (uid: string) => {
  if (!isUuid(uid)) throw notFound('user');
  return uid;
};

export interface ChannelRef {
  channel_id: string;
  user_id: string;
}

/** Creates a standalone channel the caller owns, with its first members (each a live user). */
export async function createChannel(
  deps: Deps,
  input: { user_id: string; name: string; description: string; member_ids: string[] },
  context: CommandContext,
): Promise<ChannelAccess> {
  for (const id of new Set(input.member_ids)) {
    const user = await chatUserById(deps.db, id);
    if (!user || user.deleted_at) throw new ApiError(404, 'user_not_found', `no such user ${id}`);
  }
  const id = randomUUID();
  await deps.commands.run(
    channelStream(id),
    channelDecider,
    {
      type: 'Create',
      channel_id: id,
      scope: 'standalone',
      kind: 'text',
      group_id: null,
      community_id: null,
      name: input.name,
      description: input.description,
      member_ids: input.member_ids,
      existing: 0,
      actor_id: input.user_id,
      community_role: null,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return channelFor(deps.db, id, input.user_id);
}

export type ChannelChanges = Extract<ChannelCommand, { type: 'Update' }>['changes'];

/** Changes a channel's settings (the decider keeps it to moderators and above). */
export async function updateChannel(
  deps: Deps,
  input: ChannelRef & { changes: ChannelChanges },
  context: CommandContext,
): Promise<ChannelAccess> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  await channelCommand(deps, access, input.user_id, { type: 'Update', changes: input.changes }, context);
  return channelFor(deps.db, access.channel.id, input.user_id);
}

/** Joins a group channel the caller can see; a community ban is refused before the decider. */
export async function joinChannel(deps: Deps, input: ChannelRef, context: CommandContext): Promise<ChannelAccess> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  if (access.community_banned) throw new ApiError(403, 'banned', 'you are banned from this community');
  await channelCommand(deps, access, input.user_id, { type: 'Join', eligible: access.joinable }, context);
  return channelFor(deps.db, access.channel.id, input.user_id);
}

export async function leaveChannel(deps: Deps, input: ChannelRef, context: CommandContext): Promise<void> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  await channelCommand(deps, access, input.user_id, { type: 'Leave' }, context);
}

export async function transferChannelOwnership(
  deps: Deps,
  input: ChannelRef & { to_user_id: string },
  context: CommandContext,
): Promise<ChannelAccess> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  await channelCommand(deps, access, input.user_id, { type: 'TransferOwnership', user_id: input.to_user_id }, context);
  return channelFor(deps.db, access.channel.id, input.user_id);
}

/** Sets a member's role; answers the member as the read model has it after. */
export async function setChannelRole(
  deps: Deps,
  input: ChannelRef & { target_id: string; role: 'owner' | 'moderator' | 'member' },
  context: CommandContext,
) {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  await channelCommand(
    deps,
    access,
    input.user_id,
    { type: 'SetRole', user_id: targetParam(input.target_id), role: input.role },
    context,
  );
  return (await channelMembers(deps.db, input.channel_id)).find((m) => m.user_id === input.target_id)!;
}

/** Kicks, bans or unbans a user (the decider weighs the ranks). */
export async function moderateChannelMember(
  deps: Deps,
  input: ChannelRef & { target_id: string; action: 'kick' | 'ban' | 'unban' },
  context: CommandContext,
): Promise<void> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  const type = ({ kick: 'Kick', ban: 'Ban', unban: 'Unban' } as const)[input.action];
  await channelCommand(deps, access, input.user_id, { type, user_id: targetParam(input.target_id) }, context);
}

/** The DM channel id of a pair of users. */
export function dmChannelId(a: string, b: string): string {
  const hex = createHash('sha256')
    .update(`chat_dm:${dmPairKey(a, b)}`)
    .digest('hex');
  // Shaped as a version-8 (custom) UUID.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Opens the DM of the caller and another live user who shares a community and has not blocked
 * the caller; `created` is false when the pair's channel existed already.
 */
export async function openDm(
  deps: Deps,
  input: { user_id: string; other_user_id: string },
  context: CommandContext,
): Promise<{ standing: ChannelStanding; created: boolean }> {
  const { user_id: me, other_user_id: other } = input;
  if (other === me) throw new ApiError(400, 'validation_failed', 'a DM is with someone else');
  const user = await chatUserById(deps.db, other);
  if (!user || user.deleted_at) throw notFound('user');
  if (!(await shareCommunity(deps.db, me, other)))
    throw new ApiError(403, 'no_shared_community', 'a DM needs a community you share');
  if (await isBlockedBy(deps.db, me, other))
    throw new ApiError(403, 'blocked', 'this user does not accept your messages');
  const id = dmChannelId(me, other);
  const result = await deps.commands.run(
    channelStream(id),
    channelDecider,
    {
      type: 'Create',
      channel_id: id,
      scope: 'dm',
      kind: 'text',
      group_id: null,
      community_id: null,
      name: '',
      description: '',
      member_ids: [other],
      existing: 0,
      actor_id: me,
      community_role: null,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return { standing: (await channelStanding(deps.db, id, me))!, created: result.events.length > 0 };
}
