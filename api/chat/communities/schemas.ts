// Request and response shapes of communities, their members and invites.

import { z } from '@hono/zod-openapi';
import { COMMUNITY_ROLES, GRANTABLE_ROLES } from '../../../domain/chat/communities/roles.ts';
import type { CommunityRow, MemberRow } from '../../../projections/chat/communities.ts';
import { uuidParams } from '../../shared/params.ts';

export const CommunityParam = uuidParams('cid');
export const MemberParam = uuidParams('cid', 'uid');

export const Community = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    theme: z.string().nullable(),
    welcome_message: z.string().nullable(),
    discoverable: z.boolean(),
    owner_id: z.uuid(),
    member_count: z.number().int(),
    my_role: z.enum(COMMUNITY_ROLES).nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Community');

export const communityView = (row: CommunityRow, role: string | null) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  theme: row.theme,
  welcome_message: row.welcome_message,
  discoverable: row.discoverable,
  owner_id: row.owner_id,
  member_count: row.member_count,
  my_role: role as (typeof COMMUNITY_ROLES)[number] | null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

export const CreateCommunityBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(1000).default(''),
  })
  .openapi('CreateCommunity');

export const UpdateCommunityBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional(),
    description: z.string().max(1000).optional(),
    theme: z.string().max(64).nullable().optional(),
    welcome_message: z.string().max(2000).nullable().optional(),
    discoverable: z.boolean().optional(),
  })
  .openapi('UpdateCommunity');

export const Member = z
  .object({
    user_id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    role: z.enum(COMMUNITY_ROLES),
    nickname: z.string().nullable(),
    joined_at: z.iso.datetime(),
  })
  .openapi('CommunityMember');

export const memberView = (m: MemberRow) => ({
  user_id: m.user_id,
  username: m.username,
  display_name: m.display_name,
  role: m.role,
  nickname: m.nickname,
  joined_at: m.joined_at.toISOString(),
});

export const UserRef = z.strictObject({ user_id: z.uuid() }).openapi('UserRef');

export const InviteBody = z
  .strictObject({
    grants_role: z
      .enum(GRANTABLE_ROLES)
      .nullable()
      .optional()
      .openapi({ description: 'owner only for admin; owner or admin for moderator' }),
    max_uses: z.number().int().min(1).max(100_000).nullable().optional(),
    expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  })
  .openapi('CommunityInviteRequest');
