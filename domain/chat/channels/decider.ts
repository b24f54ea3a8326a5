// A channel (`chat.channel-<uuid>`): standalone (members named at creation), in a group, or a
// DM between two users (its id derived from the pair: the same pair always gets the same
// channel). Settings, members and their channel roles, bans and pins. Decisions that depend on
// the community (ranks of actor and target, how many channels the group has) take those facts
// from the command; the channel's own history decides the rest.

import { DomainError, type Decider } from '../../shared/decider.ts';
import { channelRank, MANAGER, OWNER, type ChannelRole } from './roles.ts';
import type { CommunityRole } from '../communities/roles.ts';
import type { ChannelScope, ChannelKind, ChannelChanges, ChannelEvent } from './events.ts';

/** The spec's limits. */
export const CHANNELS_PER_GROUP = 100;
export const PINS_PER_CHANNEL = 50;
/**
 * `community_role`: the actor's role in the channel's community (null outside one). A group
 * manager acting through the group routes comes in as `admin`.
 */
type Acting = { actor_id: string; community_role: CommunityRole | null; at: string };
/** The target's community role, for rank comparisons. */
type Targeting = { user_id: string; target_community_role: CommunityRole | null };
export type ChannelCommand =
  | (Acting & {
      type: 'Create';
      channel_id: string;
      scope: ChannelScope;
      kind: ChannelKind;
      group_id: string | null;
      community_id: string | null;
      name: string;
      description: string;
      member_ids: string[];
      existing: number;
    })
  | (Acting & { type: 'Update'; changes: ChannelChanges })
  | (Acting & { type: 'Delete' })
  /** `eligible`: the API found the actor may see this channel (group visibility, community membership). */
  | (Acting & { type: 'Join'; eligible: boolean })
  | (Acting & { type: 'Leave' })
  | (Acting & { type: 'TransferOwnership' } & Targeting)
  | (Acting & { type: 'SetRole'; role: ChannelRole } & Targeting)
  | (Acting & { type: 'Kick' } & Targeting)
  | (Acting & { type: 'Ban' } & Targeting)
  | (Acting & { type: 'Unban'; user_id: string })
  | (Acting & { type: 'Pin'; message_id: string })
  | (Acting & { type: 'Unpin'; message_id: string })
  /** A removal that follows from the community or the group (left, kicked, banned there). */
  | { type: 'Remove'; user_id: string; by: string; at: string };

export interface ChannelState {
  id: string | null;
  scope: ChannelScope;
  deleted: boolean;
  owner_id: string | null;
  member_ids: string[];
  members: Map<string, ChannelRole>;
  banned: Set<string>;
  pins: Set<string>;
}

const initialState = (): ChannelState => ({
  id: null,
  scope: 'standalone',
  deleted: false,
  owner_id: null,
  member_ids: [],
  members: new Map(),
  banned: new Set(),
  pins: new Set(),
});

function without<T>(set: Set<T>, value: T): Set<T> {
  const next = new Set(set);
  next.delete(value);
  return next;
}

function evolve(state: ChannelState, event: ChannelEvent): ChannelState {
  const d = event.data;
  switch (event.type) {
    case 'ChannelCreated': {
      const members = new Map<string, ChannelRole>(
        event.data.member_ids.map((id) => [id, id === event.data.owner_id ? 'owner' : 'member']),
      );
      return {
        ...state,
        id: d.channel_id,
        scope: event.data.scope,
        owner_id: event.data.owner_id,
        member_ids: event.data.member_ids,
        members,
      };
    }
    case 'ChannelDeleted':
      return { ...state, deleted: true };
    case 'ChannelMemberJoined':
    case 'ChannelMemberRoleChanged':
      return { ...state, members: new Map(state.members).set(event.data.user_id, event.data.role) };
    case 'ChannelMemberDeparted': {
      const members = new Map(state.members);
      members.delete(event.data.user_id);
      return { ...state, members };
    }
    case 'ChannelOwnershipTransferred': {
      const members = new Map(state.members);
      if (event.data.from && members.has(event.data.from)) members.set(event.data.from, 'moderator');
      members.set(event.data.to, 'owner');
      return { ...state, owner_id: event.data.to, members };
    }
    case 'ChannelMemberBanned':
      return { ...state, banned: new Set(state.banned).add(event.data.user_id) };
    case 'ChannelMemberUnbanned':
      return { ...state, banned: without(state.banned, event.data.user_id) };
    case 'MessagePinned':
      return { ...state, pins: new Set(state.pins).add(event.data.message_id) };
    case 'MessageUnpinned':
      return { ...state, pins: without(state.pins, event.data.message_id) };
    default:
      return state;
  }
}

export const channelNotFound = () => new DomainError('not_found', 'channel_not_found', 'no such channel');
const forbidden = (message: string) => new DomainError('forbidden', 'insufficient_role', message);

/** The channel id of the DM between two users: the same for the pair in either order. */
export function dmPairKey(a: string, b: string): string {
  return [a, b].sort().join(':');
}

function decide(command: ChannelCommand, state: ChannelState): ChannelEvent[] {
  const at = command.at;
  if (command.type === 'Create') {
    if (state.id) {
      if (command.scope === 'dm' && !state.deleted) return []; // the pair's DM exists already
      throw new DomainError('conflict', 'channel_exists', 'channel already exists');
    }
    if (command.scope === 'group' && command.existing >= CHANNELS_PER_GROUP)
      throw new DomainError('conflict', 'channel_limit', `at most ${CHANNELS_PER_GROUP} channels per group`);
    const member_ids = [...new Set([command.actor_id, ...command.member_ids])];
    return [
      {
        type: 'ChannelCreated',
        data: {
          channel_id: command.channel_id,
          scope: command.scope,
          kind: command.kind,
          group_id: command.group_id,
          community_id: command.community_id,
          name: command.name,
          description: command.description,
          owner_id: command.scope === 'dm' ? null : command.actor_id,
          created_by: command.actor_id,
          member_ids,
          at,
        },
      },
    ];
  }
  if (!state.id || state.deleted) throw channelNotFound();
  const channel_id = state.id;
  if (command.type === 'Remove') {
    if (!state.members.has(command.user_id)) return [];
    return [
      {
        type: 'ChannelMemberDeparted',
        data: { channel_id, user_id: command.user_id, reason: 'removed', by: command.by, at },
      },
    ];
  }
  const { actor_id, community_role } = command;
  const actorRank = channelRank(state.members.get(actor_id), community_role);
  const need = (rank: number, what: string) => {
    if (actorRank < rank)
      throw forbidden(`${what} needs ${rank >= OWNER ? 'the channel owner' : 'a channel moderator'} or above`);
  };
  const outrank = (target: Targeting, what: string) => {
    if (channelRank(state.members.get(target.user_id), target.target_community_role) >= actorRank)
      throw forbidden(`you cannot ${what} someone at or above your own role`);
  };
  const isDm = state.scope === 'dm';
  switch (command.type) {
    case 'Update': {
      need(MANAGER, 'changing the channel');
      const changes = Object.fromEntries(
        Object.entries(command.changes).filter(([, v]) => v !== undefined),
      ) as ChannelChanges;
      return Object.keys(changes).length
        ? [{ type: 'ChannelUpdated', data: { channel_id, changes, by: actor_id, at } }]
        : [];
    }
    case 'Delete':
      need(OWNER, 'deleting the channel');
      return [{ type: 'ChannelDeleted', data: { channel_id, by: actor_id, at } }];
    case 'Join':
      if (state.members.has(actor_id)) return [];
      if (state.banned.has(actor_id)) throw new DomainError('forbidden', 'banned', 'you are banned from this channel');
      if (!command.eligible || isDm) throw new DomainError('forbidden', 'cannot_join', 'this channel cannot be joined');
      return [{ type: 'ChannelMemberJoined', data: { channel_id, user_id: actor_id, role: 'member', at } }];
    case 'Leave':
      if (!state.members.has(actor_id))
        throw new DomainError('forbidden', 'not_a_member', 'you are not a member of this channel');
      if (isDm) throw new DomainError('invalid', 'dm_fixed', 'a DM cannot be left');
      if (state.owner_id === actor_id && state.members.size > 1)
        throw new DomainError('conflict', 'owner_must_transfer', 'the owner must transfer ownership before leaving');
      return [
        { type: 'ChannelMemberDeparted', data: { channel_id, user_id: actor_id, reason: 'left', by: actor_id, at } },
      ];
    case 'TransferOwnership':
      need(OWNER, 'transferring the channel');
      if (!state.members.has(command.user_id))
        throw new DomainError('not_found', 'member_not_found', 'that user is not a member of this channel');
      if (state.owner_id === command.user_id) return [];
      return [
        {
          type: 'ChannelOwnershipTransferred',
          data: { channel_id, from: state.owner_id, to: command.user_id, by: actor_id, at },
        },
      ];
    case 'SetRole': {
      need(OWNER, 'changing channel roles');
      if (command.role === 'owner')
        throw new DomainError('invalid', 'use_transfer', 'ownership moves with transfer-ownership');
      const current = state.members.get(command.user_id);
      if (!current) throw new DomainError('not_found', 'member_not_found', 'that user is not a member of this channel');
      outrank(command, 'change the role of');
      return current === command.role
        ? []
        : [
            {
              type: 'ChannelMemberRoleChanged',
              data: { channel_id, user_id: command.user_id, role: command.role, by: actor_id, at },
            },
          ];
    }
    case 'Kick':
      need(MANAGER, 'kicking');
      if (isDm) throw new DomainError('invalid', 'dm_fixed', 'nobody is kicked from a DM');
      if (!state.members.has(command.user_id))
        throw new DomainError('not_found', 'member_not_found', 'that user is not a member of this channel');
      outrank(command, 'kick');
      return [
        {
          type: 'ChannelMemberDeparted',
          data: { channel_id, user_id: command.user_id, reason: 'kicked', by: actor_id, at },
        },
      ];
    case 'Ban': {
      need(MANAGER, 'banning');
      if (isDm) throw new DomainError('invalid', 'dm_fixed', 'nobody is banned from a DM');
      if (command.user_id === actor_id) throw new DomainError('invalid', 'cannot_ban_self', 'you cannot ban yourself');
      outrank(command, 'ban');
      const events: ChannelEvent[] = [];
      if (state.members.has(command.user_id))
        events.push({
          type: 'ChannelMemberDeparted',
          data: { channel_id, user_id: command.user_id, reason: 'banned', by: actor_id, at },
        });
      if (!state.banned.has(command.user_id))
        events.push({ type: 'ChannelMemberBanned', data: { channel_id, user_id: command.user_id, by: actor_id, at } });
      return events;
    }
    case 'Unban':
      need(MANAGER, 'unbanning');
      return state.banned.has(command.user_id)
        ? [{ type: 'ChannelMemberUnbanned', data: { channel_id, user_id: command.user_id, by: actor_id, at } }]
        : [];
    case 'Pin':
      need(MANAGER, 'pinning');
      if (state.pins.has(command.message_id)) return [];
      if (state.pins.size >= PINS_PER_CHANNEL)
        throw new DomainError('conflict', 'pin_limit', `at most ${PINS_PER_CHANNEL} pinned messages per channel`);
      return [{ type: 'MessagePinned', data: { channel_id, message_id: command.message_id, by: actor_id, at } }];
    case 'Unpin':
      need(MANAGER, 'unpinning');
      return state.pins.has(command.message_id)
        ? [{ type: 'MessageUnpinned', data: { channel_id, message_id: command.message_id, by: actor_id, at } }]
        : [];
  }
}

export const channelDecider: Decider<ChannelState, ChannelCommand, ChannelEvent> = { initialState, evolve, decide };
