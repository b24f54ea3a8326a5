// The agent profile stream's events and name. The stream is named by the slug
// (`orch.agent_profile-<slug>`) and carries the profile's knowledge snippets too (their events are
// the knowledge slice's: domain/orchestration/knowledge/events.ts, imported here because the
// stream's union holds both). The payload vocabulary (settings, reply modes) lives here with it.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';
import type { KnowledgeEvent } from '../knowledge/events.ts';

export const REPLY_MODES = ['dm_only', 'channel_mention', 'both'] as const;
export type ReplyMode = (typeof REPLY_MODES)[number];

/** What an update may change (PUT); `slug` and `channel_reply_mode` are not among them. */
export interface ProfileSettings {
  name: string;
  description: string;
  security_tier: number;
  model: string;
  system_prompt: string;
  max_tokens: number;
  temperature: number;
  pii_scrub: boolean;
  cost_cap_daily_cents: number;
  rate_limit_rpm: number;
  rate_limit_rpd: number;
  enabled: boolean;
  knowledge_search_enabled: boolean;
  can_use_tools: boolean;
  conversation_ttl_hours: number;
}

/** Every field of a profile, in the order the API shows them. */
export interface Profile extends ProfileSettings {
  id: string;
  slug: string;
  channel_reply_mode: ReplyMode;
  integrations: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export const SETTINGS_FIELDS = [
  'name',
  'description',
  'security_tier',
  'model',
  'system_prompt',
  'max_tokens',
  'temperature',
  'pii_scrub',
  'cost_cap_daily_cents',
  'rate_limit_rpm',
  'rate_limit_rpd',
  'enabled',
  'knowledge_search_enabled',
  'can_use_tools',
  'conversation_ttl_hours',
] as const satisfies readonly (keyof ProfileSettings)[];

export type ProfileEvent =
  | DomainEvent<
      'ProfileCreated',
      Omit<Profile, 'id' | 'created_at' | 'updated_at'> & {
        profile_id: string;
        template: string | null;
        created_by: string | null;
        at: string;
      }
    >
  | DomainEvent<
      'ProfileUpdated',
      { profile_id: string; changes: Partial<ProfileSettings>; changed_by: string | null; at: string }
    >
  | DomainEvent<
      'ProfileReplyModeChanged',
      { profile_id: string; channel_reply_mode: ReplyMode; changed_by: string | null; at: string }
    >
  | DomainEvent<
      'ProfileKnowledgeSearchEnabled',
      { profile_id: string; reason: 'first_snippet' | 'template_seeded'; at: string }
    >;

export const PROFILE_EVENT_TYPES = eventTypes<ProfileEvent>()([
  'ProfileCreated',
  'ProfileUpdated',
  'ProfileReplyModeChanged',
  'ProfileKnowledgeSearchEnabled',
]);

/** Everything an `orch.agent_profile-<slug>` stream holds. */
export type AgentProfileStreamEvent = ProfileEvent | KnowledgeEvent;
