// Response shapes of channels.

import { z } from '@hono/zod-openapi';
import { CHANNEL_KINDS } from '../../../domain/chat/channels/events.ts';
import { CHANNEL_ROLES } from '../../../domain/chat/channels/roles.ts';
import type { ChannelRow } from '../../../projections/chat/channels.ts';

export const Channel = z
  .object({
    id: z.uuid(),
    scope: z.enum(['standalone', 'group', 'dm']),
    kind: z.enum(CHANNEL_KINDS),
    group_id: z.uuid().nullable(),
    community_id: z.uuid().nullable(),
    name: z.string(),
    description: z.string(),
    topic: z.string().nullable(),
    slow_mode_secs: z.number().int(),
    read_only: z.boolean(),
    archived: z.boolean(),
    owner_id: z.uuid().nullable(),
    member_count: z.number().int(),
    my_role: z.enum(CHANNEL_ROLES).nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Channel');

export const channelView = (ch: ChannelRow, role: string | null) => ({
  id: ch.id,
  scope: ch.scope,
  kind: ch.kind,
  group_id: ch.group_id,
  community_id: ch.community_id,
  name: ch.name,
  description: ch.description,
  topic: ch.topic,
  slow_mode_secs: ch.slow_mode_secs,
  read_only: ch.read_only,
  archived: ch.archived,
  owner_id: ch.owner_id,
  member_count: ch.member_count,
  my_role: role as (typeof CHANNEL_ROLES)[number] | null,
  created_at: ch.created_at.toISOString(),
  updated_at: ch.updated_at.toISOString(),
});
