// The agent profile aggregate. Its stream is named by the slug (`orch.agent_profile-<slug>`): a slug
// cannot be renamed, so the stream name never changes, and the stream's own first append (with
// `no_stream`) is the slug's reservation. Two racing creates of one slug cannot both append
// revision 0; the loser decides again on the winner's stream and gets `slug_taken` (409).
//
// The same stream carries the profile's knowledge snippets (domain/orchestration/knowledge):
// one append can then hold a whole template instantiation (the profile, its seeded snippets and
// the knowledge-search flag), which is all-or-nothing on both log adapters, and the first
// snippet turns `knowledge_search_enabled` true in the same append as the snippet itself. One
// stream has one decider: this one decides the snippet commands too, with the knowledge
// decisions (domain/orchestration/knowledge/decisions.ts).

import { DomainError, type Decider } from '../../shared/decider.ts';
import {
  decideKnowledge,
  evolveKnowledge,
  initialKnowledge,
  seededSnippetEvents,
  type KnowledgeCommand,
  type KnowledgeState,
  type SnippetSeed,
} from '../knowledge/decisions.ts';
import {
  SETTINGS_FIELDS,
  type AgentProfileStreamEvent,
  type Profile,
  type ProfileEvent,
  type ProfileSettings,
  type ReplyMode,
  REPLY_MODES,
} from './events.ts';

export const SLUG_PATTERN = /^[a-z0-9]([a-z0-9-]{0,58}[a-z0-9])?$/;

/** Defaults of a created profile's fields not sent (the model's default comes from configuration). */
export const PROFILE_DEFAULTS: Omit<ProfileSettings, 'name' | 'model'> = {
  description: '',
  // Not sent: the least exposed tier (3, internal); tier 1 would open the public chat route.
  security_tier: 3,
  system_prompt: '',
  max_tokens: 1024,
  temperature: 0.7,
  pii_scrub: true,
  cost_cap_daily_cents: 500,
  rate_limit_rpm: 20,
  rate_limit_rpd: 1000,
  enabled: true,
  knowledge_search_enabled: false,
  can_use_tools: false,
  conversation_ttl_hours: 24,
};
export const DEFAULT_REPLY_MODE: ReplyMode = 'dm_only';
export const DEFAULT_MODEL = 'local';

/** Ranges of the numeric fields (the API's schemas use the same numbers). */
export const LIMITS = {
  security_tier: { min: 1, max: 3 },
  max_tokens: { min: 1, max: 200_000 },
  temperature: { min: 0, max: 2 },
  cost_cap_daily_cents: { min: 0, max: 2_147_483_647 },
  rate_limit_rpm: { min: 1, max: 2_147_483_647 },
  rate_limit_rpd: { min: 1, max: 2_147_483_647 },
  conversation_ttl_hours: { min: 1, max: 8760 },
} as const;

/** The built-in personal assistant: created once, at the first start, by an event. */
export const PERSONAL_ASSISTANT_SLUG = 'personal-assistant';
export const PERSONAL_ASSISTANT_ID = '00000000-0000-4000-8000-000000000100';

export type ProfileCommand =
  | {
      type: 'CreateProfile';
      profile_id: string;
      slug: string;
      settings: ProfileSettings;
      /** A template instantiation: its slug, and the snippets to seed (none when `seed_memories` is false). */
      template?: { slug: string; seed: SnippetSeed[] };
      by: string | null;
      at: string;
    }
  /** Create the profile unless its stream already holds one (the built-in profiles at start). */
  | {
      type: 'EnsureProfile';
      profile_id: string;
      slug: string;
      settings: ProfileSettings;
      by: string | null;
      at: string;
    }
  | { type: 'UpdateProfile'; changes: Partial<ProfileSettings>; by: string | null; at: string }
  | { type: 'SetReplyMode'; mode: ReplyMode; by: string | null; at: string }
  | KnowledgeCommand;

export interface ProfileState {
  profile: Profile | null;
  knowledge: KnowledgeState;
}

const initialState = (): ProfileState => ({ profile: null, knowledge: initialKnowledge() });

function evolve(state: ProfileState, event: AgentProfileStreamEvent): ProfileState {
  const { profile } = state;
  switch (event.type) {
    case 'ProfileCreated': {
      const { profile_id, template: _template, created_by: _by, at, ...fields } = event.data;
      return { ...state, profile: { id: profile_id, ...fields, created_at: at, updated_at: at } };
    }
    case 'ProfileUpdated':
      return profile ? { ...state, profile: { ...profile, ...event.data.changes, updated_at: event.data.at } } : state;
    case 'ProfileReplyModeChanged':
      return profile
        ? {
            ...state,
            profile: { ...profile, channel_reply_mode: event.data.channel_reply_mode, updated_at: event.data.at },
          }
        : state;
    case 'ProfileKnowledgeSearchEnabled':
      return profile
        ? { ...state, profile: { ...profile, knowledge_search_enabled: true, updated_at: event.data.at } }
        : state;
    default: {
      const knowledge = evolveKnowledge(state.knowledge, event);
      return knowledge === state.knowledge ? state : { ...state, knowledge };
    }
  }
}

const invalid = (message: string) => new DomainError('invalid', 'validation_failed', message);

function checkRange(field: keyof typeof LIMITS, value: number | undefined): void {
  if (value === undefined) return;
  const { min, max } = LIMITS[field];
  if (!(field === 'temperature' ? Number.isFinite(value) : Number.isInteger(value)) || value < min || value > max) {
    throw invalid(`${field} must be ${field === 'temperature' ? 'a number' : 'an integer'} from ${min} to ${max}`);
  }
}

/** The invariants of profile fields, whoever sends them (the API's schemas check the same first). */
export function checkSettings(settings: Partial<ProfileSettings>): void {
  for (const field of Object.keys(LIMITS) as (keyof typeof LIMITS)[]) checkRange(field, settings[field]);
  if (settings.name !== undefined && settings.name.trim() === '') throw invalid('name must not be empty');
  if (settings.model !== undefined && settings.model.trim() === '') throw invalid('model must not be empty');
}

export const profileNotFound = () => new DomainError('not_found', 'profile_not_found', 'no such profile');

function created(command: Extract<ProfileCommand, { type: 'CreateProfile' | 'EnsureProfile' }>): ProfileEvent {
  return {
    type: 'ProfileCreated',
    data: {
      profile_id: command.profile_id,
      slug: command.slug,
      ...command.settings,
      knowledge_search_enabled: false,
      channel_reply_mode: DEFAULT_REPLY_MODE,
      integrations: {},
      template: command.type === 'CreateProfile' ? (command.template?.slug ?? null) : null,
      created_by: command.by,
      at: command.at,
    },
  };
}

function decide(command: ProfileCommand, state: ProfileState): AgentProfileStreamEvent[] {
  switch (command.type) {
    case 'CreateProfile': {
      if (state.profile)
        throw new DomainError('conflict', 'slug_taken', `a profile with slug ${command.slug} already exists`);
      if (!SLUG_PATTERN.test(command.slug))
        throw invalid('slug must be 1-60 lowercase letters, digits or hyphens, with no leading or trailing hyphen');
      checkSettings(command.settings);
      const events: AgentProfileStreamEvent[] = [created(command)];
      const seed = command.template?.seed ?? [];
      if (seed.length > 0) {
        events.push(...seededSnippetEvents(command.profile_id, seed, command.by, command.at));
        events.push({
          type: 'ProfileKnowledgeSearchEnabled',
          data: { profile_id: command.profile_id, reason: 'template_seeded', at: command.at },
        });
      }
      return events;
    }
    case 'EnsureProfile':
      return state.profile ? [] : [created(command)];
    case 'UpdateProfile': {
      const profile = state.profile;
      if (!profile) throw profileNotFound();
      checkSettings(command.changes);
      // Only what really changes is recorded: a PUT that changes nothing appends nothing.
      const changes: Partial<ProfileSettings> = {};
      for (const field of SETTINGS_FIELDS) {
        const value = command.changes[field];
        if (value !== undefined && value !== profile[field]) (changes as Record<string, unknown>)[field] = value;
      }
      if (Object.keys(changes).length === 0) return [];
      return [
        { type: 'ProfileUpdated', data: { profile_id: profile.id, changes, changed_by: command.by, at: command.at } },
      ];
    }
    case 'SetReplyMode': {
      const profile = state.profile;
      if (!profile) throw profileNotFound();
      if (!REPLY_MODES.includes(command.mode))
        throw invalid(`channel_reply_mode must be one of ${REPLY_MODES.join(', ')}`);
      if (profile.channel_reply_mode === command.mode) return [];
      return [
        {
          type: 'ProfileReplyModeChanged',
          data: { profile_id: profile.id, channel_reply_mode: command.mode, changed_by: command.by, at: command.at },
        },
      ];
    }
    case 'AddSnippet':
    case 'UpdateSnippet':
    case 'DeleteSnippet': {
      const profile = state.profile;
      if (!profile) throw profileNotFound();
      const events: AgentProfileStreamEvent[] = decideKnowledge(command, state.knowledge, profile.id);
      // The first snippet turns knowledge search on, in the same append (spec: Profile flags). Later
      // ones leave the flag as it is: an admin who turned it off keeps it off.
      if (command.type === 'AddSnippet' && !state.knowledge.had_snippets && !profile.knowledge_search_enabled) {
        events.push({
          type: 'ProfileKnowledgeSearchEnabled',
          data: { profile_id: profile.id, reason: 'first_snippet', at: command.at },
        });
      }
      return events;
    }
  }
}

export const profileDecider: Decider<ProfileState, ProfileCommand, AgentProfileStreamEvent> = {
  initialState,
  evolve,
  decide,
};

/** The fields an event changed, for the profile's history; null for events that are not profile changes. */
export function changedFields(event: AgentProfileStreamEvent): string[] | null {
  switch (event.type) {
    case 'ProfileCreated':
      return ['id', 'slug', ...SETTINGS_FIELDS, 'channel_reply_mode', 'integrations'];
    case 'ProfileUpdated':
      return SETTINGS_FIELDS.filter((f) => f in event.data.changes);
    case 'ProfileReplyModeChanged':
      return ['channel_reply_mode'];
    case 'ProfileKnowledgeSearchEnabled':
      return ['knowledge_search_enabled'];
    default:
      return null;
  }
}
