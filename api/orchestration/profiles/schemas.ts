// Request and response schemas of the profiles slice. Ranges come from the decider's LIMITS, so
// the API and the domain check the same numbers.

import { z } from '@hono/zod-openapi';
import { LIMITS, PROFILE_DEFAULTS, SLUG_PATTERN } from '../../../domain/orchestration/profiles/decider.ts';
import { REPLY_MODES } from '../../../domain/orchestration/profiles/events.ts';

const ranged = (field: keyof typeof LIMITS, what: string) => {
  const { min, max } = LIMITS[field];
  return z
    .int()
    .min(min)
    .max(max)
    .openapi({ description: `${what}; ${min}-${max}` });
};

export const fields = {
  slug: z
    .string()
    .regex(SLUG_PATTERN, 'slug must be 1-60 lowercase letters, digits or hyphens, with no leading or trailing hyphen')
    .openapi({
      description:
        'unique; lowercase letters, digits, hyphens; 1-60 characters; no leading or trailing hyphen; cannot be renamed',
      example: 'support-bot',
    }),
  name: z.string().trim().min(1).max(200).openapi({ example: 'Support bot' }),
  description: z.string().max(2000),
  security_tier: ranged(
    'security_tier',
    `1 = public, 2 = semi-public, 3 = internal (default ${PROFILE_DEFAULTS.security_tier})`,
  ),
  model: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .openapi({ description: 'model identifier (default ORCH_LLM_MODEL, else local)' }),
  system_prompt: z.string().max(100_000),
  max_tokens: ranged('max_tokens', `default ${PROFILE_DEFAULTS.max_tokens}`),
  temperature: z
    .number()
    .min(LIMITS.temperature.min)
    .max(LIMITS.temperature.max)
    .openapi({ description: `0-2 (default ${PROFILE_DEFAULTS.temperature})` }),
  pii_scrub: z.boolean(),
  cost_cap_daily_cents: ranged('cost_cap_daily_cents', `real cents (default ${PROFILE_DEFAULTS.cost_cap_daily_cents})`),
  rate_limit_rpm: ranged('rate_limit_rpm', `requests per minute (default ${PROFILE_DEFAULTS.rate_limit_rpm})`),
  rate_limit_rpd: ranged('rate_limit_rpd', `requests per day (default ${PROFILE_DEFAULTS.rate_limit_rpd})`),
  enabled: z.boolean(),
  knowledge_search_enabled: z.boolean(),
  can_use_tools: z.boolean(),
  conversation_ttl_hours: ranged(
    'conversation_ttl_hours',
    `public conversation lifetime (default ${PROFILE_DEFAULTS.conversation_ttl_hours})`,
  ),
};

/** Exactly the spec's create-profile fields; any other name (`tier`, `cost_cap_usd`, ...) is a 400 naming it. */
export const CreateProfileBody = z
  .strictObject({
    slug: fields.slug,
    name: fields.name,
    security_tier: fields.security_tier.optional(),
    model: fields.model.optional(),
    system_prompt: fields.system_prompt.optional(),
    max_tokens: fields.max_tokens.optional(),
    rate_limit_rpm: fields.rate_limit_rpm.optional(),
    rate_limit_rpd: fields.rate_limit_rpd.optional(),
    cost_cap_daily_cents: fields.cost_cap_daily_cents.optional(),
  })
  .openapi('CreateProfileRequest');

const refused = (message: string) =>
  z
    .unknown()
    .optional()
    .openapi({ description: `refused: ${message}` });
const SLUG_REFUSED = 'slug cannot be renamed after creation';
const REPLY_MODE_REFUSED =
  'channel_reply_mode is set by an operator: npx orchard profiles set-reply-mode <slug> <mode>';

/** A partial update: only sent fields change. `slug` and `channel_reply_mode` are named so their refusal says why. */
export const UpdateProfileBody = z
  .strictObject({
    name: fields.name.optional(),
    description: fields.description.optional(),
    security_tier: fields.security_tier.optional(),
    model: fields.model.optional(),
    system_prompt: fields.system_prompt.optional(),
    max_tokens: fields.max_tokens.optional(),
    temperature: fields.temperature.optional(),
    pii_scrub: fields.pii_scrub.optional(),
    cost_cap_daily_cents: fields.cost_cap_daily_cents.optional(),
    rate_limit_rpm: fields.rate_limit_rpm.optional(),
    rate_limit_rpd: fields.rate_limit_rpd.optional(),
    enabled: fields.enabled.optional(),
    knowledge_search_enabled: fields.knowledge_search_enabled.optional(),
    can_use_tools: fields.can_use_tools.optional(),
    conversation_ttl_hours: fields.conversation_ttl_hours.optional(),
    slug: refused(SLUG_REFUSED),
    channel_reply_mode: refused(REPLY_MODE_REFUSED),
  })
  .superRefine((body, ctx) => {
    if (body.slug !== undefined) ctx.addIssue({ code: 'custom', path: ['slug'], message: SLUG_REFUSED });
    if (body.channel_reply_mode !== undefined)
      ctx.addIssue({ code: 'custom', path: ['channel_reply_mode'], message: REPLY_MODE_REFUSED });
  })
  .openapi('UpdateProfileRequest');

export const Profile = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    security_tier: z.int(),
    model: z.string(),
    system_prompt: z.string(),
    max_tokens: z.int(),
    temperature: z.number(),
    pii_scrub: z.boolean(),
    cost_cap_daily_cents: z.int(),
    rate_limit_rpm: z.int(),
    rate_limit_rpd: z.int(),
    enabled: z.boolean(),
    knowledge_search_enabled: z.boolean(),
    channel_reply_mode: z.enum(REPLY_MODES),
    can_use_tools: z.boolean(),
    integrations: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'additive; empty unless a chat-service bot token is configured' }),
    conversation_ttl_hours: z.int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Profile');

export const HistoryEntry = z
  .object({
    revision: z
      .int()
      .openapi({ description: "the event's revision in the profile's stream (category orch.agent_profile)" }),
    event_type: z.string().openapi({ example: 'ProfileUpdated' }),
    changed_fields: z.array(z.string()),
    actor: z.object({ kind: z.string(), id: z.string().nullable() }),
    correlation_id: z.string().nullable().openapi({ description: 'the request id of the change' }),
    at: z.iso.datetime(),
  })
  .openapi('ProfileHistoryEntry');

export const SlugParam = z.object({
  slug: z.string().openapi({ param: { name: 'slug', in: 'path' }, example: 'support-bot' }),
});

export const AsOfQuery = z.object({
  as_of: z.iso.datetime({ offset: true }).optional().openapi({
    description: 'RFC 3339 instant: the profile as it was then, folded from its stream',
    example: '2026-01-01T00:00:00Z',
  }),
});
