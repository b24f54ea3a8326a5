// A community (`chat.community-<uuid>`): its settings, members and their roles, bans, invites,
// and the moderation facts scoped to it (channel timeouts, warnings). Role rules are decided here
// against the community's own history, so a concurrent role change cannot slip past them
// (./roles.ts holds the rules).

import { DomainError, type Decider } from '../../shared/decider.ts';
import { mayGrant, rankOf, requireOutranks, requireRole, type CommunityRole, type GrantableRole } from './roles.ts';
import type { CommunityChanges, CommunityEvent } from './events.ts';

type Acting = { actor_id: string; at: string };
export type CommunityCommand =
  | (Acting & { type: 'Create'; community_id: string; name: string; description: string })
  | (Acting & { type: 'Update'; changes: CommunityChanges })
  | (Acting & { type: 'Delete' })
  | (Acting & { type: 'TransferOwnership'; to: string })
  | (Acting & { type: 'Leave' })
  | (Acting & { type: 'SetRole'; user_id: string; role: CommunityRole })
  | (Acting & { type: 'SetNickname'; user_id: string; nickname: string | null })
  | (Acting & { type: 'Kick'; user_id: string })
  | (Acting & { type: 'Ban'; user_id: string; reason: string | null })
  | (Acting & { type: 'Unban'; user_id: string })
  | (Acting & {
      type: 'CreateInvite';
      invite_id: string;
      code_hash: string;
      code_sealed: string;
      grants_role: GrantableRole | null;
      max_uses: number | null;
      expires_at: string | null;
    })
  | (Acting & { type: 'RevokeInvite'; invite_id: string })
  | (Acting & { type: 'AcceptInvite'; invite_id: string })
  | (Acting & { type: 'Timeout'; channel_id: string; user_id: string; duration_secs: number; reason: string | null })
  | (Acting & { type: 'LiftTimeout'; channel_id: string; user_id: string })
  | (Acting & { type: 'Warn'; warning_id: string; channel_id: string; user_id: string; reason: string })
  /** Instance administration (bots): the actor need not be a member; the API checked it is an admin or a bot:provision token. */
  | (Acting & { type: 'AdminAddMember'; user_id: string; role: Exclude<CommunityRole, 'owner'> })
  | (Acting & { type: 'AdminRemoveMember'; user_id: string });

export interface InviteState {
  grants_role: GrantableRole | null;
  max_uses: number | null;
  uses: number;
  expires_at: string | null;
  revoked: boolean;
}

export interface CommunityState {
  id: string | null;
  deleted: boolean;
  owner_id: string | null;
  members: Map<string, CommunityRole>;
  banned: Set<string>;
  invites: Map<string, InviteState>;
}

const initialState = (): CommunityState => ({
  id: null,
  deleted: false,
  owner_id: null,
  members: new Map(),
  banned: new Set(),
  invites: new Map(),
});

function evolve(state: CommunityState, event: CommunityEvent): CommunityState {
  const d = event.data;
  switch (event.type) {
    case 'CommunityCreated':
      return { ...state, id: d.community_id, owner_id: event.data.owner_id };
    case 'CommunityDeleted':
      return { ...state, deleted: true };
    case 'CommunityOwnershipTransferred': {
      const members = new Map(state.members);
      members.set(event.data.from, 'admin');
      members.set(event.data.to, 'owner');
      return { ...state, owner_id: event.data.to, members };
    }
    case 'CommunityMemberJoined':
    case 'CommunityMemberRoleChanged': {
      const members = new Map(state.members).set(event.data.user_id, event.data.role);
      if (event.type === 'CommunityMemberJoined' && event.data.invite_id) {
        const invites = new Map(state.invites);
        const invite = invites.get(event.data.invite_id);
        if (invite) invites.set(event.data.invite_id, { ...invite, uses: invite.uses + 1 });
        return { ...state, members, invites };
      }
      return { ...state, members };
    }
    case 'CommunityMemberDeparted': {
      const members = new Map(state.members);
      members.delete(event.data.user_id);
      return { ...state, members };
    }
    case 'CommunityMemberBanned':
      return { ...state, banned: new Set(state.banned).add(event.data.user_id) };
    case 'CommunityMemberUnbanned': {
      const banned = new Set(state.banned);
      banned.delete(event.data.user_id);
      return { ...state, banned };
    }
    case 'CommunityInviteCreated':
      return {
        ...state,
        invites: new Map(state.invites).set(event.data.invite_id, {
          grants_role: event.data.grants_role,
          max_uses: event.data.max_uses,
          uses: 0,
          expires_at: event.data.expires_at,
          revoked: false,
        }),
      };
    case 'CommunityInviteRevoked': {
      const invite = state.invites.get(event.data.invite_id);
      return invite
        ? { ...state, invites: new Map(state.invites).set(event.data.invite_id, { ...invite, revoked: true }) }
        : state;
    }
    default:
      return state;
  }
}

export const communityNotFound = () => new DomainError('not_found', 'community_not_found', 'no such community');
export const notAMember = () => new DomainError('forbidden', 'not_a_member', 'you are not a member of this community');
export const inviteNotFound = () =>
  new DomainError('not_found', 'invite_not_found', 'no such invite, or it expired or was used up');

/** An invite that can still be used at `at`. */
export function inviteUsable(invite: InviteState | undefined, at: string): invite is InviteState {
  if (!invite || invite.revoked) return false;
  if (invite.expires_at && Date.parse(invite.expires_at) <= Date.parse(at)) return false;
  return invite.max_uses === null || invite.uses < invite.max_uses;
}

function decide(command: CommunityCommand, state: CommunityState): CommunityEvent[] {
  const { at, actor_id } = command;
  if (command.type === 'Create') {
    if (state.id) throw new DomainError('conflict', 'community_exists', 'community already exists');
    const community_id = command.community_id;
    return [
      {
        type: 'CommunityCreated',
        data: {
          community_id,
          name: command.name,
          description: command.description,
          theme: null,
          welcome_message: null,
          discoverable: false,
          owner_id: actor_id,
          at,
        },
      },
      { type: 'CommunityMemberJoined', data: { community_id, user_id: actor_id, role: 'owner', invite_id: null, at } },
    ];
  }
  if (!state.id || state.deleted) throw communityNotFound();
  const community_id = state.id;
  const actorRole = state.members.get(actor_id);

  if (command.type === 'AcceptInvite') {
    const invite = state.invites.get(command.invite_id);
    if (!inviteUsable(invite, at)) throw inviteNotFound();
    if (state.banned.has(actor_id)) throw new DomainError('forbidden', 'banned', 'you are banned from this community');
    if (actorRole) return [];
    return [
      {
        type: 'CommunityMemberJoined',
        data: {
          community_id,
          user_id: actor_id,
          role: invite.grants_role ?? 'member',
          invite_id: command.invite_id,
          at,
        },
      },
    ];
  }
  if (command.type === 'AdminAddMember') {
    if (state.banned.has(command.user_id))
      throw new DomainError('forbidden', 'banned', 'that user is banned from this community');
    const current = state.members.get(command.user_id);
    if (current === command.role || current === 'owner') return [];
    if (current)
      return [
        {
          type: 'CommunityMemberRoleChanged',
          data: { community_id, user_id: command.user_id, role: command.role, by: actor_id, at },
        },
      ];
    return [
      {
        type: 'CommunityMemberJoined',
        data: { community_id, user_id: command.user_id, role: command.role, invite_id: null, added_by: actor_id, at },
      },
    ];
  }
  if (command.type === 'AdminRemoveMember') {
    const current = state.members.get(command.user_id);
    if (!current) throw new DomainError('not_found', 'member_not_found', 'that user is not a member of this community');
    if (current === 'owner')
      throw new DomainError('conflict', 'owner_must_transfer', 'the owner must transfer ownership first');
    return [
      {
        type: 'CommunityMemberDeparted',
        data: { community_id, user_id: command.user_id, reason: 'kicked', by: actor_id, at },
      },
    ];
  }
  if (!actorRole) throw notAMember();
  const target = (userId: string) => {
    const role = state.members.get(userId);
    if (!role) throw new DomainError('not_found', 'member_not_found', 'that user is not a member of this community');
    return role;
  };

  switch (command.type) {
    case 'Update': {
      requireRole(actorRole, 'admin', 'changing the community');
      const changes = Object.fromEntries(
        Object.entries(command.changes).filter(([, v]) => v !== undefined),
      ) as CommunityChanges;
      if (!Object.keys(changes).length) return [];
      return [{ type: 'CommunityUpdated', data: { community_id, changes, by: actor_id, at } }];
    }
    case 'Delete':
      requireRole(actorRole, 'owner', 'deleting the community');
      return [{ type: 'CommunityDeleted', data: { community_id, by: actor_id, at } }];
    case 'TransferOwnership':
      requireRole(actorRole, 'owner', 'transferring ownership');
      target(command.to);
      if (command.to === actor_id) return [];
      return [{ type: 'CommunityOwnershipTransferred', data: { community_id, from: actor_id, to: command.to, at } }];
    case 'Leave':
      if (actorRole === 'owner')
        throw new DomainError('conflict', 'owner_must_transfer', 'the owner must transfer ownership before leaving');
      return [
        {
          type: 'CommunityMemberDeparted',
          data: { community_id, user_id: actor_id, reason: 'left', by: actor_id, at },
        },
      ];
    case 'SetRole': {
      if (command.role === 'owner')
        throw new DomainError('invalid', 'use_transfer', 'ownership moves with transfer-ownership');
      const current = target(command.user_id);
      requireOutranks(actorRole, current, 'change the role of');
      if (!mayGrant(actorRole, command.role))
        throw new DomainError('forbidden', 'insufficient_role', `your role cannot grant ${command.role}`);
      if (current === command.role) return [];
      return [
        {
          type: 'CommunityMemberRoleChanged',
          data: { community_id, user_id: command.user_id, role: command.role, by: actor_id, at },
        },
      ];
    }
    case 'SetNickname': {
      const current = target(command.user_id);
      if (command.user_id !== actor_id) {
        requireRole(actorRole, 'moderator', "changing another member's nickname");
        requireOutranks(actorRole, current, 'rename');
      }
      return [
        {
          type: 'CommunityMemberNicknameChanged',
          data: { community_id, user_id: command.user_id, nickname: command.nickname, by: actor_id, at },
        },
      ];
    }
    case 'Kick': {
      requireRole(actorRole, 'moderator', 'kicking');
      requireOutranks(actorRole, target(command.user_id), 'kick');
      return [
        {
          type: 'CommunityMemberDeparted',
          data: { community_id, user_id: command.user_id, reason: 'kicked', by: actor_id, at },
        },
      ];
    }
    case 'Ban': {
      requireRole(actorRole, 'moderator', 'banning');
      if (command.user_id === actor_id) throw new DomainError('invalid', 'cannot_ban_self', 'you cannot ban yourself');
      const current = state.members.get(command.user_id);
      requireOutranks(actorRole, current, 'ban');
      const events: CommunityEvent[] = [];
      if (current)
        events.push({
          type: 'CommunityMemberDeparted',
          data: { community_id, user_id: command.user_id, reason: 'banned', by: actor_id, at },
        });
      if (!state.banned.has(command.user_id))
        events.push({
          type: 'CommunityMemberBanned',
          data: { community_id, user_id: command.user_id, reason: command.reason, by: actor_id, at },
        });
      return events;
    }
    case 'Unban':
      requireRole(actorRole, 'moderator', 'unbanning');
      if (!state.banned.has(command.user_id)) return [];
      return [{ type: 'CommunityMemberUnbanned', data: { community_id, user_id: command.user_id, by: actor_id, at } }];
    case 'CreateInvite': {
      requireRole(actorRole, 'moderator', 'creating invites');
      if (command.grants_role && !mayGrant(actorRole, command.grants_role)) {
        throw new DomainError(
          'forbidden',
          'insufficient_role',
          command.grants_role === 'admin'
            ? 'only the owner mints admin-grant invites'
            : 'only the owner or an admin mints moderator-grant invites',
        );
      }
      const { invite_id, code_hash, code_sealed, grants_role, max_uses, expires_at } = command;
      return [
        {
          type: 'CommunityInviteCreated',
          data: {
            community_id,
            invite_id,
            code_hash,
            code_sealed,
            grants_role,
            max_uses,
            expires_at,
            created_by: actor_id,
            at,
          },
        },
      ];
    }
    case 'RevokeInvite': {
      requireRole(actorRole, 'moderator', 'revoking invites');
      const invite = state.invites.get(command.invite_id);
      if (!invite) throw new DomainError('not_found', 'invite_not_found', 'no such invite');
      if (invite.grants_role && !mayGrant(actorRole, invite.grants_role))
        throw new DomainError('forbidden', 'insufficient_role', 'your role could not have minted this invite');
      if (invite.revoked) return [];
      return [
        { type: 'CommunityInviteRevoked', data: { community_id, invite_id: command.invite_id, by: actor_id, at } },
      ];
    }
    case 'Timeout': {
      requireRole(actorRole, 'moderator', 'timing out');
      requireOutranks(actorRole, target(command.user_id), 'time out');
      const until = new Date(Date.parse(at) + command.duration_secs * 1000).toISOString();
      return [
        {
          type: 'CommunityTimeoutImposed',
          data: {
            community_id,
            channel_id: command.channel_id,
            user_id: command.user_id,
            until,
            reason: command.reason,
            by: actor_id,
            at,
          },
        },
      ];
    }
    case 'LiftTimeout':
      requireRole(actorRole, 'moderator', 'lifting timeouts');
      if (state.members.has(command.user_id))
        requireOutranks(actorRole, state.members.get(command.user_id), 'lift the timeout of');
      return [
        {
          type: 'CommunityTimeoutLifted',
          data: { community_id, channel_id: command.channel_id, user_id: command.user_id, by: actor_id, at },
        },
      ];
    case 'Warn': {
      requireRole(actorRole, 'moderator', 'warning');
      requireOutranks(actorRole, target(command.user_id), 'warn');
      return [
        {
          type: 'CommunityMemberWarned',
          data: {
            community_id,
            warning_id: command.warning_id,
            channel_id: command.channel_id,
            user_id: command.user_id,
            reason: command.reason,
            by: actor_id,
            at,
          },
        },
      ];
    }
  }
}

export const communityDecider: Decider<CommunityState, CommunityCommand, CommunityEvent> = {
  initialState,
  evolve,
  decide,
};

/** Whether `role` ranks at least moderator (moderation actions). */
export const isModerator = (role: CommunityRole | null | undefined) => rankOf(role) >= rankOf('moderator');
