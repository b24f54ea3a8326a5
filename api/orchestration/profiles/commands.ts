// The profiles slice's application layer (the only caller of the command runner for it): create
// (with the defaults, or from a template with its seeded knowledge), update, the operator's reply
// mode and the built-in profiles. Used by the profile and template routes and by the composition
// root (main/). The auditors' views, read from the profile's stream, are ./history.ts's.

import { randomUUID } from 'node:crypto';
import type { SnippetSeed } from '../../../domain/orchestration/knowledge/decisions.ts';
import {
  DEFAULT_MODEL,
  PERSONAL_ASSISTANT_ID,
  PERSONAL_ASSISTANT_SLUG,
  PROFILE_DEFAULTS,
  profileDecider,
  profileNotFound,
} from '../../../domain/orchestration/profiles/decider.ts';
import type { Profile, ProfileSettings, ReplyMode } from '../../../domain/orchestration/profiles/events.ts';
import { profileStream } from '../../../domain/orchestration/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import {
  PROFILE_COLUMNS,
  profileById,
  profileBySlug,
  type ProfileRow,
} from '../../../projections/orchestration/profiles.ts';
import type { OrchDeps } from '../deps.ts';

/** 404 `profile_not_found`: the one not-found of a profile, for every route of the service that names one. */
export { profileNotFound };

export type ProfileDeps = Pick<OrchDeps, 'commands' | 'db' | 'clock' | 'config'>;

const iso = (deps: Pick<ProfileDeps, 'clock'>) => deps.clock.now().toISOString();

/** A profile as every route shows it, from the read model or from a fold of its stream. */
export function profileView(profile: ProfileRow | Profile): Profile {
  const view = Object.fromEntries(PROFILE_COLUMNS.map((c) => [c, profile[c]])) as unknown as Profile;
  view.created_at = new Date(profile.created_at).toISOString();
  view.updated_at = new Date(profile.updated_at).toISOString();
  return view;
}

/** The full settings of a new profile: what was sent over the documented defaults. */
export function newSettings(
  deps: Pick<ProfileDeps, 'config'>,
  sent: Partial<ProfileSettings> & { name: string },
): ProfileSettings {
  const defined = Object.fromEntries(Object.entries(sent).filter(([, v]) => v !== undefined));
  return { ...PROFILE_DEFAULTS, model: deps.config.llmModel ?? DEFAULT_MODEL, ...defined } as ProfileSettings;
}

/**
 * Create a profile in one append on its stream (which is also the slug's reservation): 409
 * `slug_taken` when the slug exists. A template instantiation adds its seeded snippets and the
 * knowledge-search flag to the same append.
 */
export async function createProfile(
  deps: ProfileDeps,
  input: {
    slug: string;
    settings: ProfileSettings;
    template?: { slug: string; seed: Omit<SnippetSeed, 'snippet_id'>[] };
  },
  context: CommandContext,
): Promise<ProfileRow> {
  const template = input.template && {
    slug: input.template.slug,
    seed: input.template.seed.map((s) => ({ snippet_id: randomUUID(), ...s })),
  };
  await deps.commands.run(
    profileStream(input.slug),
    profileDecider,
    {
      type: 'CreateProfile',
      profile_id: randomUUID(),
      slug: input.slug,
      settings: input.settings,
      template,
      by: context.actor.id,
      at: iso(deps),
    },
    context,
  );
  return (await profileBySlug(deps.db, input.slug))!;
}

/** The profile a request names, from the read model: 404 `profile_not_found` (the slice's one not-found) when there is none. */
export async function profileOf(deps: Pick<ProfileDeps, 'db'>, slug: string): Promise<ProfileRow> {
  const profile = await profileBySlug(deps.db, slug);
  if (!profile) throw profileNotFound();
  return profile;
}

/** The profile with this uuid (the bot routes name profiles by id), with the same 404. */
export async function profileWithId(deps: Pick<ProfileDeps, 'db'>, id: string): Promise<ProfileRow> {
  const profile = await profileById(deps.db, id);
  if (!profile) throw profileNotFound();
  return profile;
}

/** Change only the fields sent (a change of nothing appends nothing); 404 before the decider sees an unknown slug. */
export async function updateProfile(
  deps: ProfileDeps,
  slug: string,
  changes: Partial<ProfileSettings>,
  context: CommandContext,
): Promise<ProfileRow> {
  await profileOf(deps, slug);
  await deps.commands.run(
    profileStream(slug),
    profileDecider,
    { type: 'UpdateProfile', changes, by: context.actor.id, at: iso(deps) },
    context,
  );
  return (await profileBySlug(deps.db, slug))!;
}

/** The operator's change of `channel_reply_mode` (no API sets it); false when it already was. */
export async function setReplyMode(
  deps: ProfileDeps,
  slug: string,
  mode: ReplyMode,
  context: CommandContext,
): Promise<boolean> {
  const { events } = await deps.commands.run(
    profileStream(slug),
    profileDecider,
    { type: 'SetReplyMode', mode, by: context.actor.id, at: iso(deps) },
    context,
  );
  return events.length > 0;
}

const PERSONAL_ASSISTANT_PROMPT = [
  'You are the personal assistant of the person signed in to this orchestration platform.',
  'Help them plan and track work, draft and summarise text, and answer questions about their projects and tasks.',
  'Be concise and accurate; say so when you do not know something rather than guessing.',
].join(' ');

/** The built-in personal assistant (tier 3): created once, at the first start, by an event; later starts change nothing. */
export async function ensurePersonalAssistant(
  deps: ProfileDeps,
  context: CommandContext,
): Promise<'created' | 'unchanged'> {
  const settings = newSettings(deps, {
    name: 'Personal assistant',
    security_tier: 3,
    system_prompt: PERSONAL_ASSISTANT_PROMPT,
  });
  const { events } = await deps.commands.run(
    profileStream(PERSONAL_ASSISTANT_SLUG),
    profileDecider,
    {
      type: 'EnsureProfile',
      profile_id: PERSONAL_ASSISTANT_ID,
      slug: PERSONAL_ASSISTANT_SLUG,
      settings,
      by: null,
      at: iso(deps),
    },
    context,
  );
  return events.length > 0 ? 'created' : 'unchanged';
}
