// What follows from leaving a space: someone who leaves a community (or is kicked or banned)
// leaves its groups and channels; someone who leaves a group leaves its channels. Each is its
// own aggregate's event (ChannelMemberDeparted drops their sender keys and tells the others to
// rotate), appended after the community's or group's decision. Access checks also require the
// community membership, so the interval between the two appends grants nothing.

import { channelDecider } from '../../../domain/chat/channels/decider.ts';
import { channelStream } from '../../../domain/chat/channels/events.ts';
import { groupDecider } from '../../../domain/chat/groups/decider.ts';
import { groupStream } from '../../../domain/chat/groups/events.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { channelIdsOfMember } from '../../../projections/chat/channels.ts';
import { groupIdsOfMember } from '../../../projections/chat/groups.ts';
import type { ChatDeps } from '../deps.ts';

export async function leaveChannels(deps: ChatDeps, userId: string, channelIds: string[], by: string, context: CommandContext): Promise<void> {
  for (const id of channelIds) {
    await deps.commands.run(channelStream(id), channelDecider, { type: 'Remove', user_id: userId, by, at: deps.clock.now().toISOString() }, context);
  }
}

export async function leaveCommunitySpaces(deps: ChatDeps, communityId: string, userId: string, by: string, context: CommandContext): Promise<void> {
  for (const id of await groupIdsOfMember(deps.db, communityId, userId)) {
    await deps.commands.run(groupStream(id), groupDecider, { type: 'Remove', user_id: userId, at: deps.clock.now().toISOString() }, context);
  }
  await leaveChannels(deps, userId, await channelIdsOfMember(deps.db, userId, { community_id: communityId }), by, context);
}
