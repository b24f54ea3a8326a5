// The groups slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type Visibility = 'public' | 'private';

export type GroupRole = 'owner' | 'member';

export type GroupFields = { name: string; description: string; visibility: Visibility; accent_color: string | null };

export type GroupChanges = Partial<GroupFields>;

type Base = { group_id: string; at: string };

export type GroupEvent =
  | DomainEvent<'GroupCreated', Base & GroupFields & { community_id: string; owner_id: string }>
  | DomainEvent<'GroupUpdated', Base & { changes: GroupChanges; by: string }>
  | DomainEvent<'GroupDeleted', Base & { by: string }>
  | DomainEvent<'GroupOwnershipTransferred', Base & { from: string; to: string; by: string }>
  | DomainEvent<'GroupMemberJoined', Base & { user_id: string; role: GroupRole; invite_id: string | null }>
  | DomainEvent<'GroupMemberDeparted', Base & { user_id: string; reason: 'left' | 'removed' }>
  | DomainEvent<
      'GroupInviteCreated',
      Base & {
        invite_id: string;
        code_hash: string;
        code_sealed: string;
        max_uses: number | null;
        expires_at: string | null;
        created_by: string;
      }
    >;

export const GROUP_EVENT_TYPES = eventTypes<GroupEvent>()([
  'GroupCreated',
  'GroupUpdated',
  'GroupDeleted',
  'GroupOwnershipTransferred',
  'GroupMemberJoined',
  'GroupMemberDeparted',
  'GroupInviteCreated',
]);
