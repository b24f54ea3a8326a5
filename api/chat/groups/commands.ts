// Groups' use cases: create, change, delete (with its channels), transfer ownership, join, leave
// (with its channels), the group's channels (create, change, delete) and invites (mint,
// accept). The slice's application layer and the only caller of the command runner for it:
// each function finds the group as the caller may see it (access.ts), checks the manager rule
// where the route is the group's manager's, runs the decider, and reads back what the route
// answers.

import { randomUUID } from 'node:crypto';
import { sealSecret } from '../../../crypto/seal.ts';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import { channelDecider } from '../../../domain/chat/channels/decider.ts';
import type { ChannelKind } from '../../../domain/chat/channels/events.ts';
import { channelStream, groupStream } from '../../../domain/chat/streams.ts';
import { groupDecider, managesGroup, type GroupCommand } from '../../../domain/chat/groups/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { withAdvisoryLock } from '../../../infra/db/advisory-lock.ts';
import { channelIdsOfMember, groupChannels, liveChannelCount } from '../../../projections/chat/channels.ts';
import { communityRoleOf } from '../../../projections/chat/communities.ts';
import {
  groupById,
  groupInviteByHash,
  groupInvites,
  liveGroupCount,
  type GroupInviteRow,
  type GroupRow,
} from '../../../projections/chat/groups.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { channelFor, communityFor, groupFor, notFound, type ChannelAccess, type GroupAccess } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import { leaveChannels } from '../communities/commands.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type ActingCommand = DistributiveOmit<Exclude<GroupCommand, { type: 'Remove' }>, 'actor_id' | 'community_role' | 'at'>;

const iso = (deps: Deps) => deps.clock.now().toISOString();

function run(
  deps: Deps,
  groupId: string,
  userId: string,
  communityRole: GroupAccess['community_role'],
  command: ActingCommand,
  context: CommandContext,
) {
  return deps.commands.run(
    groupStream(groupId),
    groupDecider,
    { ...command, actor_id: userId, community_role: communityRole, at: iso(deps) } as GroupCommand,
    context,
  );
}

const fresh = async (deps: Deps, id: string): Promise<GroupRow> => (await groupById(deps.db, id))!;

/** The group owner or a community admin (403 otherwise); the invite list read checks it too. */
export function requireGroupManager(access: GroupAccess, userId: string): void {
  if (!managesGroup(access.group, userId, access.community_role))
    throw new ApiError(403, 'insufficient_role', 'this needs the group owner or a community admin');
}

export const groupInviteSealContext = (id: string) => `group_invite:${id}`;

/** A usable invite by its code, with its group (404 otherwise); the invite-info read uses it too. */
export async function groupInviteByCode(
  deps: Pick<ChatDeps, 'db' | 'clock'>,
  code: string,
): Promise<{ invite: GroupInviteRow; group: GroupRow }> {
  const invite = await groupInviteByHash(deps.db, hashToken(code));
  const now = deps.clock.now().getTime();
  const group = invite && (await groupById(deps.db, invite.group_id));
  if (
    !invite ||
    !group ||
    (invite.expires_at && invite.expires_at.getTime() <= now) ||
    (invite.max_uses !== null && invite.uses >= invite.max_uses)
  ) {
    throw new ApiError(404, 'invite_not_found', 'no such invite, or it expired or was used up');
  }
  return { invite, group };
}

export interface GroupRef {
  group_id: string;
  user_id: string;
}
export interface GroupFields {
  name: string;
  description: string;
  visibility: 'public' | 'private';
  accent_color?: string | null;
}

export async function createGroup(
  deps: Deps,
  input: GroupFields & { community_id: string; user_id: string },
  context: CommandContext,
): Promise<GroupRow> {
  const access = await communityFor(deps.db, input.community_id, input.user_id);
  const id = randomUUID();
  // Count and create under the community's lock (the create waits for its projection), so two
  // racing creates cannot both take the last of the 200 places.
  await withAdvisoryLock(deps.db, `chat:groups-of:${input.community_id}`, async () =>
    run(
      deps,
      id,
      input.user_id,
      access.role,
      {
        type: 'Create',
        group_id: id,
        community_id: input.community_id,
        existing: await liveGroupCount(deps.db, input.community_id),
        fields: {
          name: input.name,
          description: input.description,
          visibility: input.visibility,
          accent_color: input.accent_color ?? null,
        },
      },
      context,
    ),
  );
  return fresh(deps, id);
}

export type GroupChanges = Extract<GroupCommand, { type: 'Update' }>['changes'];

export async function updateGroup(
  deps: Deps,
  input: GroupRef & { changes: GroupChanges },
  context: CommandContext,
): Promise<GroupRow> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  await run(
    deps,
    access.group.id,
    input.user_id,
    access.community_role,
    { type: 'Update', changes: input.changes },
    context,
  );
  return fresh(deps, access.group.id);
}

/** Deletes the group, then each of its channels. */
export async function deleteGroup(deps: Deps, input: GroupRef, context: CommandContext): Promise<void> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  const channels = await groupChannels(deps.db, access.group.id);
  await run(deps, access.group.id, input.user_id, access.community_role, { type: 'Delete' }, context);
  for (const channel of channels) {
    await deps.commands.run(
      channelStream(channel.id),
      channelDecider,
      { type: 'Delete', actor_id: input.user_id, community_role: 'admin', at: iso(deps) },
      context,
    );
  }
}

export async function transferGroupOwnership(
  deps: Deps,
  input: GroupRef & { to: string },
  context: CommandContext,
): Promise<GroupRow> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  await run(
    deps,
    access.group.id,
    input.user_id,
    access.community_role,
    { type: 'TransferOwnership', to: input.to },
    context,
  );
  return fresh(deps, access.group.id);
}

export async function joinGroup(deps: Deps, input: GroupRef, context: CommandContext): Promise<GroupRow> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  await run(deps, access.group.id, input.user_id, access.community_role, { type: 'Join' }, context);
  return fresh(deps, access.group.id);
}

/** Leaves the group, then its channels. */
export async function leaveGroup(deps: Deps, input: GroupRef, context: CommandContext): Promise<void> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  await run(deps, access.group.id, input.user_id, access.community_role, { type: 'Leave' }, context);
  await leaveChannels(
    deps,
    input.user_id,
    await channelIdsOfMember(deps.db, input.user_id, { group_id: access.group.id }),
    input.user_id,
    context,
  );
}

/** Creates a channel in the group (its manager; the decider keeps the count at 100). */
export async function createGroupChannel(
  deps: Deps,
  input: GroupRef & { name: string; kind: ChannelKind; description: string },
  context: CommandContext,
): Promise<ChannelAccess> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  requireGroupManager(access, input.user_id);
  const id = randomUUID();
  // Count and create under the group's lock, as for groups above.
  await withAdvisoryLock(deps.db, `chat:channels-of:${access.group.id}`, async () =>
    deps.commands.run(
      channelStream(id),
      channelDecider,
      {
        type: 'Create',
        channel_id: id,
        scope: 'group',
        kind: input.kind,
        group_id: access.group.id,
        community_id: access.group.community_id,
        name: input.name,
        description: input.description,
        member_ids: [],
        existing: await liveChannelCount(deps.db, access.group.id),
        actor_id: input.user_id,
        community_role: access.community_role,
        at: iso(deps),
      },
      context,
    ),
  );
  return channelFor(deps.db, id, input.user_id);
}

/** A channel of the group, managed by the group's manager. */
async function managedChannel(deps: Deps, input: GroupRef & { channel_id: string }): Promise<ChannelAccess> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  requireGroupManager(access, input.user_id);
  const channel = isUuid(input.channel_id) ? await channelFor(deps.db, input.channel_id, input.user_id) : null;
  if (!channel || channel.channel.group_id !== access.group.id) throw notFound('channel');
  return channel;
}

export type GroupChannelChanges = { name?: string; description?: string; topic?: string | null };

/** Changes a group channel; answers the channel after, with the caller's role from before. */
export async function updateGroupChannel(
  deps: Deps,
  input: GroupRef & { channel_id: string; changes: GroupChannelChanges },
  context: CommandContext,
) {
  const channel = await managedChannel(deps, input);
  await deps.commands.run(
    channelStream(input.channel_id),
    channelDecider,
    { type: 'Update', changes: input.changes, actor_id: input.user_id, community_role: 'admin', at: iso(deps) },
    context,
  );
  const after = await channelFor(deps.db, input.channel_id, input.user_id);
  return { channel: after.channel, role: channel.role };
}

export async function deleteGroupChannel(
  deps: Deps,
  input: GroupRef & { channel_id: string },
  context: CommandContext,
): Promise<void> {
  await managedChannel(deps, input);
  await deps.commands.run(
    channelStream(input.channel_id),
    channelDecider,
    { type: 'Delete', actor_id: input.user_id, community_role: 'admin', at: iso(deps) },
    context,
  );
}

/** Mints a group invite: a fresh code, kept as its hash and a sealed copy (the decider keeps it to the manager). */
export async function mintGroupInvite(
  deps: Deps & Pick<ChatDeps, 'sealKey'>,
  input: GroupRef & { max_uses?: number | null; expires_at?: string | null },
  context: CommandContext,
): Promise<GroupInviteRow> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  if (input.expires_at && Date.parse(input.expires_at) <= deps.clock.now().getTime())
    throw new ApiError(400, 'validation_failed', 'expires_at must be in the future');
  const id = randomUUID();
  const code = generateToken('gi_', 16);
  await run(
    deps,
    access.group.id,
    input.user_id,
    access.community_role,
    {
      type: 'CreateInvite',
      invite_id: id,
      code_hash: hashToken(code),
      code_sealed: sealSecret(deps.sealKey, code, groupInviteSealContext(id)),
      max_uses: input.max_uses ?? null,
      expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
    },
    context,
  );
  return (await groupInvites(deps.db, access.group.id)).find((i) => i.id === id)!;
}

/** Joins a group through an invite (the decider keeps it to members of the community). */
export async function acceptGroupInvite(
  deps: Deps,
  input: { user_id: string; code: string },
  context: CommandContext,
): Promise<GroupRow> {
  const { invite, group } = await groupInviteByCode(deps, input.code);
  await run(
    deps,
    group.id,
    input.user_id,
    await communityRoleOf(deps.db, group.community_id, input.user_id),
    { type: 'AcceptInvite', invite_id: invite.id },
    context,
  );
  return fresh(deps, group.id);
}
