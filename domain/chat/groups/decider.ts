// A group (`chat.group-<uuid>`) inside a community: settings, members (the owner and members),
// invites. A group is managed by its owner or by a community admin or owner; the community facts
// a decision needs (the actor's community role, whether a joiner is a community member, how many
// groups the community has) come in with the command from the read models.

import { atLeast, type CommunityRole } from '../communities/roles.ts';
import { DomainError, type Decider } from '../../shared/decider.ts';
import type { Visibility, GroupFields, GroupChanges, GroupEvent } from './events.ts';

/** The spec's limit: groups per community. */
export const GROUPS_PER_COMMUNITY = 200;

/** `community_role`: the actor's role in the group's community (null: not a member). */
type Acting = { actor_id: string; community_role: CommunityRole | null; at: string };
export type GroupCommand =
  | (Acting & { type: 'Create'; group_id: string; community_id: string; fields: GroupFields; existing: number })
  | (Acting & { type: 'Update'; changes: GroupChanges })
  | (Acting & { type: 'Delete' })
  | (Acting & { type: 'TransferOwnership'; to: string })
  | (Acting & { type: 'Join' })
  | (Acting & { type: 'Leave' })
  | (Acting & {
      type: 'CreateInvite';
      invite_id: string;
      code_hash: string;
      code_sealed: string;
      max_uses: number | null;
      expires_at: string | null;
    })
  | (Acting & { type: 'AcceptInvite'; invite_id: string })
  /** A removal that follows from the community (the member left, was kicked or banned there). */
  | { type: 'Remove'; user_id: string; at: string };

interface Invite {
  max_uses: number | null;
  uses: number;
  expires_at: string | null;
}
export interface GroupState {
  id: string | null;
  deleted: boolean;
  visibility: Visibility;
  owner_id: string | null;
  members: Set<string>;
  invites: Map<string, Invite>;
}

const initialState = (): GroupState => ({
  id: null,
  deleted: false,
  visibility: 'private',
  owner_id: null,
  members: new Set(),
  invites: new Map(),
});

function evolve(state: GroupState, event: GroupEvent): GroupState {
  switch (event.type) {
    case 'GroupCreated':
      return { ...state, id: event.data.group_id, visibility: event.data.visibility, owner_id: event.data.owner_id };
    case 'GroupUpdated':
      return { ...state, visibility: event.data.changes.visibility ?? state.visibility };
    case 'GroupDeleted':
      return { ...state, deleted: true };
    case 'GroupOwnershipTransferred':
      return { ...state, owner_id: event.data.to };
    case 'GroupMemberJoined': {
      const invites = new Map(state.invites);
      const invite = event.data.invite_id ? invites.get(event.data.invite_id) : undefined;
      if (invite) invites.set(event.data.invite_id!, { ...invite, uses: invite.uses + 1 });
      return { ...state, members: new Set(state.members).add(event.data.user_id), invites };
    }
    case 'GroupMemberDeparted': {
      const members = new Set(state.members);
      members.delete(event.data.user_id);
      return { ...state, members };
    }
    case 'GroupInviteCreated':
      return {
        ...state,
        invites: new Map(state.invites).set(event.data.invite_id, {
          max_uses: event.data.max_uses,
          uses: 0,
          expires_at: event.data.expires_at,
        }),
      };
  }
}

export const groupNotFound = () => new DomainError('not_found', 'group_not_found', 'no such group');

/** Owner of the group, or admin/owner of its community. */
export const managesGroup = (
  state: Pick<GroupState, 'owner_id'>,
  actorId: string,
  communityRole: CommunityRole | null,
) => state.owner_id === actorId || atLeast(communityRole, 'admin');

function decide(command: GroupCommand, state: GroupState): GroupEvent[] {
  const at = command.at;
  if (command.type === 'Create') {
    if (state.id) throw new DomainError('conflict', 'group_exists', 'group already exists');
    if (!atLeast(command.community_role, 'admin'))
      throw new DomainError('forbidden', 'insufficient_role', 'creating a group needs community role admin or above');
    if (command.existing >= GROUPS_PER_COMMUNITY)
      throw new DomainError('conflict', 'group_limit', `at most ${GROUPS_PER_COMMUNITY} groups per community`);
    const group_id = command.group_id;
    return [
      {
        type: 'GroupCreated',
        data: { group_id, community_id: command.community_id, ...command.fields, owner_id: command.actor_id, at },
      },
      { type: 'GroupMemberJoined', data: { group_id, user_id: command.actor_id, role: 'owner', invite_id: null, at } },
    ];
  }
  if (!state.id || state.deleted) throw groupNotFound();
  const group_id = state.id;
  if (command.type === 'Remove') {
    if (!state.members.has(command.user_id)) return [];
    return [{ type: 'GroupMemberDeparted', data: { group_id, user_id: command.user_id, reason: 'removed', at } }];
  }
  const { actor_id, community_role } = command;
  if (!community_role)
    throw new DomainError('forbidden', 'not_a_member', "you are not a member of this group's community");
  const manage = (what: string) => {
    if (!managesGroup(state, actor_id, community_role))
      throw new DomainError('forbidden', 'insufficient_role', `${what} needs the group owner or a community admin`);
  };
  switch (command.type) {
    case 'Update': {
      manage('changing the group');
      const changes = Object.fromEntries(
        Object.entries(command.changes).filter(([, v]) => v !== undefined),
      ) as GroupChanges;
      return Object.keys(changes).length
        ? [{ type: 'GroupUpdated', data: { group_id, changes, by: actor_id, at } }]
        : [];
    }
    case 'Delete':
      manage('deleting the group');
      return [{ type: 'GroupDeleted', data: { group_id, by: actor_id, at } }];
    case 'TransferOwnership':
      manage('transferring the group');
      if (!state.members.has(command.to))
        throw new DomainError('not_found', 'member_not_found', 'that user is not a member of this group');
      if (state.owner_id === command.to) return [];
      return [
        {
          type: 'GroupOwnershipTransferred',
          data: { group_id, from: state.owner_id!, to: command.to, by: actor_id, at },
        },
      ];
    case 'Join':
      if (state.visibility !== 'public')
        throw new DomainError('forbidden', 'private_group', 'a private group is joined by invite only');
      if (state.members.has(actor_id)) return [];
      return [
        { type: 'GroupMemberJoined', data: { group_id, user_id: actor_id, role: 'member', invite_id: null, at } },
      ];
    case 'Leave':
      if (!state.members.has(actor_id))
        throw new DomainError('forbidden', 'not_a_member', 'you are not a member of this group');
      if (state.owner_id === actor_id)
        throw new DomainError('conflict', 'owner_must_transfer', 'the owner must transfer ownership before leaving');
      return [{ type: 'GroupMemberDeparted', data: { group_id, user_id: actor_id, reason: 'left', at } }];
    case 'CreateInvite': {
      manage('creating group invites');
      const { invite_id, code_hash, code_sealed, max_uses, expires_at } = command;
      return [
        {
          type: 'GroupInviteCreated',
          data: { group_id, invite_id, code_hash, code_sealed, max_uses, expires_at, created_by: actor_id, at },
        },
      ];
    }
    case 'AcceptInvite': {
      const invite = state.invites.get(command.invite_id);
      const usable =
        invite &&
        (!invite.expires_at || Date.parse(invite.expires_at) > Date.parse(at)) &&
        (invite.max_uses === null || invite.uses < invite.max_uses);
      if (!usable)
        throw new DomainError('not_found', 'invite_not_found', 'no such invite, or it expired or was used up');
      if (state.members.has(actor_id)) return [];
      return [
        {
          type: 'GroupMemberJoined',
          data: { group_id, user_id: actor_id, role: 'member', invite_id: command.invite_id, at },
        },
      ];
    }
  }
}

export const groupDecider: Decider<GroupState, GroupCommand, GroupEvent> = { initialState, evolve, decide };
