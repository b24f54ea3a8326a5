// The communities slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { CommunityRole, GrantableRole } from './roles.ts';

export type CommunityFields = {
  name: string;
  description: string;
  theme: string | null;
  welcome_message: string | null;
  discoverable: boolean;
};

export type CommunityChanges = Partial<CommunityFields>;

export type LeaveReason = 'left' | 'kicked' | 'banned';

type Base = { community_id: string; at: string };

export type CommunityEvent =
  | DomainEvent<'CommunityCreated', Base & CommunityFields & { owner_id: string }>
  | DomainEvent<'CommunityUpdated', Base & { changes: CommunityChanges; by: string }>
  | DomainEvent<'CommunityDeleted', Base & { by: string }>
  | DomainEvent<'CommunityOwnershipTransferred', Base & { from: string; to: string }>
  /** `added_by`: the instance admin or provisioning bot who added the member (bot administration); absent when they joined themselves. */
  | DomainEvent<
      'CommunityMemberJoined',
      Base & { user_id: string; role: CommunityRole; invite_id: string | null; added_by?: string }
    >
  | DomainEvent<'CommunityMemberDeparted', Base & { user_id: string; reason: LeaveReason; by: string }>
  | DomainEvent<'CommunityMemberRoleChanged', Base & { user_id: string; role: CommunityRole; by: string }>
  | DomainEvent<'CommunityMemberNicknameChanged', Base & { user_id: string; nickname: string | null; by: string }>
  | DomainEvent<'CommunityMemberBanned', Base & { user_id: string; reason: string | null; by: string }>
  | DomainEvent<'CommunityMemberUnbanned', Base & { user_id: string; by: string }>
  | DomainEvent<
      'CommunityInviteCreated',
      Base & {
        invite_id: string;
        code_hash: string;
        code_sealed: string;
        grants_role: GrantableRole | null;
        max_uses: number | null;
        expires_at: string | null;
        created_by: string;
      }
    >
  | DomainEvent<'CommunityInviteRevoked', Base & { invite_id: string; by: string }>
  | DomainEvent<
      'CommunityTimeoutImposed',
      Base & { channel_id: string; user_id: string; until: string; reason: string | null; by: string }
    >
  | DomainEvent<'CommunityTimeoutLifted', Base & { channel_id: string; user_id: string; by: string }>
  | DomainEvent<
      'CommunityMemberWarned',
      Base & { warning_id: string; channel_id: string; user_id: string; reason: string; by: string }
    >;

export const COMMUNITY_EVENT_TYPES = eventTypes<CommunityEvent>()([
  'CommunityCreated',
  'CommunityUpdated',
  'CommunityDeleted',
  'CommunityOwnershipTransferred',
  'CommunityMemberJoined',
  'CommunityMemberDeparted',
  'CommunityMemberRoleChanged',
  'CommunityMemberNicknameChanged',
  'CommunityMemberBanned',
  'CommunityMemberUnbanned',
  'CommunityInviteCreated',
  'CommunityInviteRevoked',
  'CommunityTimeoutImposed',
  'CommunityTimeoutLifted',
  'CommunityMemberWarned',
]);
