// The channels slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { ChannelRole } from './roles.ts';

export const CHANNEL_KINDS = ['text', 'voice', 'announcement'] as const;

export type ChannelScope = 'standalone' | 'group' | 'dm';

export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export type ChannelSettings = {
  name: string;
  description: string;
  topic: string | null;
  slow_mode_secs: number;
  read_only: boolean;
  archived: boolean;
};

export type ChannelChanges = Partial<ChannelSettings>;

export type RemovalReason = 'left' | 'kicked' | 'banned' | 'removed';

type Base = { channel_id: string; at: string };

export type ChannelEvent =
  | DomainEvent<
      'ChannelCreated',
      Base & {
        scope: ChannelScope;
        kind: ChannelKind;
        group_id: string | null;
        community_id: string | null;
        name: string;
        description: string;
        owner_id: string | null;
        created_by: string;
        member_ids: string[];
      }
    >
  | DomainEvent<'ChannelUpdated', Base & { changes: ChannelChanges; by: string }>
  | DomainEvent<'ChannelDeleted', Base & { by: string }>
  | DomainEvent<'ChannelMemberJoined', Base & { user_id: string; role: ChannelRole }>
  | DomainEvent<'ChannelMemberDeparted', Base & { user_id: string; reason: RemovalReason; by: string }>
  | DomainEvent<'ChannelMemberRoleChanged', Base & { user_id: string; role: ChannelRole; by: string }>
  | DomainEvent<'ChannelOwnershipTransferred', Base & { from: string | null; to: string; by: string }>
  | DomainEvent<'ChannelMemberBanned', Base & { user_id: string; by: string }>
  | DomainEvent<'ChannelMemberUnbanned', Base & { user_id: string; by: string }>
  | DomainEvent<'MessagePinned', Base & { message_id: string; by: string }>
  | DomainEvent<'MessageUnpinned', Base & { message_id: string; by: string }>;

export const CHANNEL_EVENT_TYPES = eventTypes<ChannelEvent>()([
  'ChannelCreated',
  'ChannelUpdated',
  'ChannelDeleted',
  'ChannelMemberJoined',
  'ChannelMemberDeparted',
  'ChannelMemberRoleChanged',
  'ChannelOwnershipTransferred',
  'ChannelMemberBanned',
  'ChannelMemberUnbanned',
  'MessagePinned',
  'MessageUnpinned',
]);
