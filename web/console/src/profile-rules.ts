// The profile fields as the server checks them (api/orchestration/profiles/schemas.ts and the
// decider's LIMITS), checked in the browser before a form is sent, so a mistake is named on its
// field at once. tests/orchestration/console/profile-rules.test.ts holds these numbers to the
// domain's, so the two cannot drift apart. The server stays the judge: its 400 lands on the
// same field.

export const SLUG_PATTERN = /^[a-z0-9]([a-z0-9-]{0,58}[a-z0-9])?$/;
const INT4 = 2_147_483_647;

export const LIMITS = {
  security_tier: { min: 1, max: 3 },
  max_tokens: { min: 1, max: 200_000 },
  temperature: { min: 0, max: 2 },
  cost_cap_daily_cents: { min: 0, max: INT4 },
  rate_limit_rpm: { min: 1, max: INT4 },
  rate_limit_rpd: { min: 1, max: INT4 },
  conversation_ttl_hours: { min: 1, max: 8760 },
} as const;

export const TEXT_LIMITS = { name: 200, model: 200, description: 2000, system_prompt: 100_000 } as const;

export type RangedField = keyof typeof LIMITS;

/** The message for a slug, or null when it is acceptable. */
export function checkSlug(slug: string): string | null {
  if (slug === '') return 'Enter a slug.';
  if (slug.length > 60) return 'A slug is at most 60 characters.';
  return SLUG_PATTERN.test(slug)
    ? null
    : 'Use lowercase letters, digits and hyphens, with no hyphen at the start or end.';
}

/** Name and model: 1-200 characters once trimmed. */
export function checkRequiredText(field: 'name' | 'model', text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return `Enter a ${field}.`;
  return trimmed.length > TEXT_LIMITS[field] ? `At most ${TEXT_LIMITS[field]} characters.` : null;
}

export function checkLongText(field: 'description' | 'system_prompt', text: string): string | null {
  return text.length > TEXT_LIMITS[field] ? `At most ${TEXT_LIMITS[field].toLocaleString('en')} characters.` : null;
}

/** A number field as typed: its value, or the message that says what is wrong. */
export function checkNumber(field: RangedField, text: string): { value: number } | { error: string } {
  const { min, max } = LIMITS[field];
  const trimmed = text.trim();
  if (trimmed === '') return { error: 'Enter a number.' };
  const value = Number(trimmed);
  if (!Number.isFinite(value)) return { error: 'Enter a number.' };
  if (field !== 'temperature' && !Number.isInteger(value)) return { error: 'Enter a whole number.' };
  if (value < min || value > max)
    return { error: `Between ${min.toLocaleString('en')} and ${max.toLocaleString('en')}.` };
  return { value };
}

export const TIERS = [
  { value: '1', label: '1: public' },
  { value: '2', label: '2: semi-public' },
  { value: '3', label: '3: internal' },
];
