// Communities' use cases: create, change, delete, transfer ownership, leave, a member's role and
// nickname, kick; invites (mint, revoke, accept); bans, channel timeouts and warnings. The
// slice's application layer and the only caller of the command runner for it: each function
// checks the caller's membership (the decider weighs the roles), runs the community decider, and
// reads back what the route answers.
//
// What follows from leaving a space is here too (leaveCommunitySpaces, leaveChannels): someone
// who leaves a community (or is kicked or banned) leaves its groups and channels; someone who
// leaves a group leaves its channels. Each is its own aggregate's event (ChannelMemberDeparted
// drops their sender keys and tells the others to rotate), appended after the community's or
// group's decision. Access checks also require the community membership, so the interval
// between the two appends grants nothing.

import { randomUUID } from 'node:crypto';
import { sealSecret } from '../../../crypto/seal.ts';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import { channelDecider } from '../../../domain/chat/channels/decider.ts';
import { channelStream, communityStream, groupStream } from '../../../domain/chat/streams.ts';
import { communityDecider, type CommunityCommand } from '../../../domain/chat/communities/decider.ts';
import type { CommunityRole, GrantableRole } from '../../../domain/chat/communities/roles.ts';
import { groupDecider } from '../../../domain/chat/groups/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { Clock } from '../../../infra/clock.ts';
import { channelIdsOfMember } from '../../../projections/chat/channels.ts';
import {
  communityAccess,
  communityInviteByHash,
  communityInvites,
  communityMembers,
  warningsOf,
  type CommunityAccess,
  type CommunityInviteRow,
  type MemberRow,
  type WarningRow,
} from '../../../projections/chat/communities.ts';
import { groupIdsOfMember } from '../../../projections/chat/groups.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { channelFor, communityFor, notFound } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Runs a community command as the caller. */
function communityCommand(
  deps: Deps,
  communityId: string,
  userId: string,
  command: DistributiveOmit<CommunityCommand, 'actor_id' | 'at'>,
  context: CommandContext,
) {
  const full = { ...command, actor_id: userId, at: deps.clock.now().toISOString() } as CommunityCommand;
  return deps.commands.run(communityStream(communityId), communityDecider, full, context);
}

/** The community as the caller sees it after a change (404 when it is gone). */
async function current(db: Pool, communityId: string, userId: string): Promise<CommunityAccess> {
  const access = await communityAccess(db, communityId, userId);
  if (!access) throw notFound('community');
  return access;
}

const memberNotFound = () => new ApiError(404, 'member_not_found', 'that user is not a member of this community');

async function memberAfter(db: Pool, communityId: string, userId: string): Promise<MemberRow> {
  const member = (await communityMembers(db, communityId)).find((m) => m.user_id === userId);
  if (!member) throw memberNotFound();
  return member;
}

/** A path's user id: 404 `user_not_found` when it is no UUID. */
const userParam = (uid: string) => {
  if (!isUuid(uid)) throw notFound('user');
  return uid;
};

export interface CommunityRef {
  community_id: string;
  user_id: string;
}
export interface MemberRef extends CommunityRef {
  target_id: string;
}

export async function createCommunity(
  deps: Deps,
  input: { user_id: string; name: string; description: string },
  context: CommandContext,
): Promise<CommunityAccess> {
  const id = randomUUID();
  await communityCommand(
    deps,
    id,
    input.user_id,
    { type: 'Create', community_id: id, name: input.name, description: input.description },
    context,
  );
  return current(deps.db, id, input.user_id);
}

export type CommunityChanges = Extract<CommunityCommand, { type: 'Update' }>['changes'];

export async function updateCommunity(
  deps: Deps,
  input: CommunityRef & { changes: CommunityChanges },
  context: CommandContext,
): Promise<CommunityAccess> {
  await communityFor(deps.db, input.community_id, input.user_id);
  await communityCommand(deps, input.community_id, input.user_id, { type: 'Update', changes: input.changes }, context);
  return current(deps.db, input.community_id, input.user_id);
}

export async function deleteCommunity(deps: Deps, input: CommunityRef, context: CommandContext): Promise<void> {
  await communityFor(deps.db, input.community_id, input.user_id);
  await communityCommand(deps, input.community_id, input.user_id, { type: 'Delete' }, context);
}

export async function transferCommunityOwnership(
  deps: Deps,
  input: CommunityRef & { to: string },
  context: CommandContext,
): Promise<CommunityAccess> {
  await communityFor(deps.db, input.community_id, input.user_id);
  await communityCommand(deps, input.community_id, input.user_id, { type: 'TransferOwnership', to: input.to }, context);
  return current(deps.db, input.community_id, input.user_id);
}

/** Leaves the community, then its groups and channels. */
export async function leaveCommunity(deps: Deps, input: CommunityRef, context: CommandContext): Promise<void> {
  await communityFor(deps.db, input.community_id, input.user_id);
  await communityCommand(deps, input.community_id, input.user_id, { type: 'Leave' }, context);
  await leaveCommunitySpaces(deps, input.community_id, input.user_id, input.user_id, context);
}

export async function setMemberRole(
  deps: Deps,
  input: MemberRef & { role: CommunityRole },
  context: CommandContext,
): Promise<MemberRow> {
  await communityFor(deps.db, input.community_id, input.user_id);
  if (!isUuid(input.target_id)) throw memberNotFound();
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'SetRole', user_id: input.target_id, role: input.role },
    context,
  );
  return memberAfter(deps.db, input.community_id, input.target_id);
}

export async function setMemberNickname(
  deps: Deps,
  input: MemberRef & { nickname: string | null },
  context: CommandContext,
): Promise<MemberRow> {
  await communityFor(deps.db, input.community_id, input.user_id);
  if (!isUuid(input.target_id)) throw memberNotFound();
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'SetNickname', user_id: input.target_id, nickname: input.nickname },
    context,
  );
  return memberAfter(deps.db, input.community_id, input.target_id);
}

/** Kicks a member, then removes them from the community's groups and channels. */
export async function kickMember(deps: Deps, input: MemberRef, context: CommandContext): Promise<void> {
  await communityFor(deps.db, input.community_id, input.user_id);
  if (!isUuid(input.target_id)) throw memberNotFound();
  await communityCommand(deps, input.community_id, input.user_id, { type: 'Kick', user_id: input.target_id }, context);
  await leaveCommunitySpaces(deps, input.community_id, input.target_id, input.user_id, context);
}

// Invites.

export const inviteSealContext = (inviteId: string) => `community_invite:${inviteId}`;

const usable = (clock: Clock, row: CommunityInviteRow) =>
  !row.revoked_at &&
  (!row.expires_at || row.expires_at.getTime() > clock.now().getTime()) &&
  (row.max_uses === null || row.uses < row.max_uses);

/** A usable invite by its code (404 otherwise); the invite-info read uses it too. */
export async function inviteByCode(deps: Pick<ChatDeps, 'db' | 'clock'>, code: string) {
  const invite = await communityInviteByHash(deps.db, hashToken(code));
  if (!invite || !usable(deps.clock, invite))
    throw new ApiError(404, 'invite_not_found', 'no such invite, or it expired or was used up');
  return invite;
}

export interface MintInvite extends CommunityRef {
  grants_role?: GrantableRole | null;
  max_uses?: number | null;
  expires_at?: string | null;
}

/** Mints an invite: a fresh code, kept as its hash and a sealed copy. */
export async function mintInvite(
  deps: Deps & Pick<ChatDeps, 'sealKey'>,
  input: MintInvite,
  context: CommandContext,
): Promise<CommunityInviteRow> {
  await communityFor(deps.db, input.community_id, input.user_id);
  if (input.expires_at && Date.parse(input.expires_at) <= deps.clock.now().getTime())
    throw new ApiError(400, 'validation_failed', 'expires_at must be in the future');
  const id = randomUUID();
  const code = generateToken('ci_', 16);
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    {
      type: 'CreateInvite',
      invite_id: id,
      code_hash: hashToken(code),
      code_sealed: sealSecret(deps.sealKey, code, inviteSealContext(id)),
      grants_role: input.grants_role ?? null,
      max_uses: input.max_uses ?? null,
      expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
    },
    context,
  );
  return (await communityInvites(deps.db, input.community_id)).find((i) => i.id === id)!;
}

export async function revokeInvite(
  deps: Deps,
  input: CommunityRef & { invite_id: string },
  context: CommandContext,
): Promise<void> {
  await communityFor(deps.db, input.community_id, input.user_id);
  if (!isUuid(input.invite_id)) throw notFound('invite');
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'RevokeInvite', invite_id: input.invite_id },
    context,
  );
}

/** Joins through an invite; answers the community joined. */
export async function acceptInvite(
  deps: Deps,
  input: { user_id: string; code: string },
  context: CommandContext,
): Promise<CommunityAccess> {
  const invite = await inviteByCode(deps, input.code);
  await communityCommand(
    deps,
    invite.community_id,
    input.user_id,
    { type: 'AcceptInvite', invite_id: invite.id },
    context,
  );
  return (await communityAccess(deps.db, invite.community_id, input.user_id))!;
}

// Moderation.

/** The community (caller a member) and a channel of it; the warnings read uses it too. */
export async function communityChannel(
  db: Pool,
  communityId: string,
  channelId: string,
  userId: string,
): Promise<CommunityAccess> {
  const access = await communityFor(db, communityId, userId);
  const channel = await channelFor(db, channelId, userId);
  if (channel.channel.community_id !== communityId) throw notFound('channel');
  return access;
}

/** Bans a user, then removes them from the community's groups and channels. */
export async function banMember(
  deps: Deps,
  input: MemberRef & { reason: string | null },
  context: CommandContext,
): Promise<void> {
  await communityFor(deps.db, input.community_id, input.user_id);
  const target = userParam(input.target_id);
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'Ban', user_id: target, reason: input.reason },
    context,
  );
  await leaveCommunitySpaces(deps, input.community_id, target, input.user_id, context);
}

export async function unbanMember(deps: Deps, input: MemberRef, context: CommandContext): Promise<void> {
  await communityFor(deps.db, input.community_id, input.user_id);
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'Unban', user_id: userParam(input.target_id) },
    context,
  );
}

export interface ChannelMemberRef extends CommunityRef {
  channel_id: string;
}

/** Times a member out of a channel; answers when the timeout ends. */
export async function timeoutMember(
  deps: Deps,
  input: ChannelMemberRef & { target_id: string; duration_secs: number; reason: string | null },
  context: CommandContext,
): Promise<{ until: string }> {
  await communityChannel(deps.db, input.community_id, input.channel_id, input.user_id);
  const result = await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    {
      type: 'Timeout',
      channel_id: input.channel_id,
      user_id: input.target_id,
      duration_secs: input.duration_secs,
      reason: input.reason,
    },
    context,
  );
  const event = result.events.find((e) => e.type === 'CommunityTimeoutImposed')!;
  return { until: (event.data as { until: string }).until };
}

export async function liftTimeout(
  deps: Deps,
  input: ChannelMemberRef & { target_id: string },
  context: CommandContext,
): Promise<void> {
  await communityChannel(deps.db, input.community_id, input.channel_id, input.user_id);
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'LiftTimeout', channel_id: input.channel_id, user_id: userParam(input.target_id) },
    context,
  );
}

export async function warnMember(
  deps: Deps,
  input: ChannelMemberRef & { target_id: string; reason: string },
  context: CommandContext,
): Promise<WarningRow> {
  await communityChannel(deps.db, input.community_id, input.channel_id, input.user_id);
  const id = randomUUID();
  await communityCommand(
    deps,
    input.community_id,
    input.user_id,
    { type: 'Warn', warning_id: id, channel_id: input.channel_id, user_id: input.target_id, reason: input.reason },
    context,
  );
  return (await warningsOf(deps.db, input.community_id, input.target_id)).find((w) => w.id === id)!;
}

// Leaving spaces.

export async function leaveChannels(
  deps: Deps,
  userId: string,
  channelIds: string[],
  by: string,
  context: CommandContext,
): Promise<void> {
  for (const id of channelIds) {
    await deps.commands.run(
      channelStream(id),
      channelDecider,
      { type: 'Remove', user_id: userId, by, at: deps.clock.now().toISOString() },
      context,
    );
  }
}

export async function leaveCommunitySpaces(
  deps: Deps,
  communityId: string,
  userId: string,
  by: string,
  context: CommandContext,
): Promise<void> {
  for (const id of await groupIdsOfMember(deps.db, communityId, userId)) {
    await deps.commands.run(
      groupStream(id),
      groupDecider,
      { type: 'Remove', user_id: userId, at: deps.clock.now().toISOString() },
      context,
    );
  }
  await leaveChannels(
    deps,
    userId,
    await channelIdsOfMember(deps.db, userId, { community_id: communityId }),
    by,
    context,
  );
}
