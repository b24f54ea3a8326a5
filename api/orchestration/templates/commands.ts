// The templates slice's application layer: instantiate a bundled template into a new profile.
// Instantiation is all-or-nothing on both log adapters: the profile, its seeded snippets and the
// knowledge-search flag are one append on the new profile's stream (the profiles slice's
// createProfile), whose name is the slug, so that append is also the slug's reservation.

import type { CommandContext } from '../../../infra/commands.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { createProfile, newSettings, type ProfileDeps } from '../profiles/commands.ts';
import { templateOf } from './catalog.ts';

export interface Instantiation {
  slug: string;
  name: string;
  description?: string;
  system_prompt_override?: string;
  seed_memories: boolean;
  security_tier?: number;
  cost_cap_daily_cents?: number;
  rate_limit_rpm?: number;
  rate_limit_rpd?: number;
}

/** The new profile and how many starter memories were seeded; 404 `template_not_found`, 409 `slug_taken`. */
export async function instantiateTemplate(
  deps: ProfileDeps,
  templateSlug: string,
  body: Instantiation,
  context: CommandContext,
): Promise<{ profile: ProfileRow; seeded: number }> {
  const chosen = templateOf(templateSlug);
  const overrides = Object.fromEntries(
    Object.entries({
      security_tier: body.security_tier,
      cost_cap_daily_cents: body.cost_cap_daily_cents,
      rate_limit_rpm: body.rate_limit_rpm,
      rate_limit_rpd: body.rate_limit_rpd,
    }).filter(([, v]) => v !== undefined),
  );
  const settings = newSettings(deps, {
    ...chosen.default_security,
    ...overrides,
    name: body.name,
    description: body.description ?? chosen.description,
    system_prompt: body.system_prompt_override ?? chosen.default_system_prompt,
  });
  const seed = body.seed_memories
    ? chosen.starter_memories.map((m) => ({ ...m, source: `template:${chosen.slug}`, metadata: null }))
    : [];
  const profile = await createProfile(
    deps,
    { slug: body.slug, settings, template: { slug: chosen.slug, seed } },
    context,
  );
  return { profile, seeded: seed.length };
}
