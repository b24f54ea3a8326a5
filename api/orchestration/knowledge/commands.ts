// The knowledge slice's application layer (the only caller of the command runner for it): add,
// change and delete a bot's snippets. Snippets are events on their profile's stream, decided by
// the profile decider (domain/orchestration/knowledge/decisions.ts holds the knowledge rules), so
// every command is found through the profile's slug. Each answers once the read models show it.

import { randomUUID } from 'node:crypto';
import { snippetNotFound, type KnowledgeCommand } from '../../../domain/orchestration/knowledge/decisions.ts';
import { profileDecider } from '../../../domain/orchestration/profiles/decider.ts';
import type { SnippetFields } from '../../../domain/orchestration/knowledge/events.ts';
import { profileStream } from '../../../domain/orchestration/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { snippetOf, type SnippetRow } from '../../../projections/orchestration/knowledge.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import type { OrchDeps } from '../deps.ts';
import { profileWithId } from '../profiles/commands.ts';

export type KnowledgeDeps = Pick<OrchDeps, 'commands' | 'db' | 'clock'>;

/** What a request sends for a new snippet (source and metadata may be left out). */
type NewSnippet = Pick<SnippetFields, 'title' | 'content'> & Partial<Pick<SnippetFields, 'source' | 'metadata'>>;

/** The snippet of this profile, from the read model: 404 `snippet_not_found` (also a snippet of another bot). */
export async function snippetIn(deps: Pick<OrchDeps, 'db'>, profile: ProfileRow, id: string): Promise<SnippetRow> {
  const snippet = await snippetOf(deps.db, profile.id, id);
  if (!snippet) throw snippetNotFound();
  return snippet;
}

const run = (deps: KnowledgeDeps, profile: ProfileRow, command: KnowledgeCommand, context: CommandContext) =>
  deps.commands.run(profileStream(profile.slug), profileDecider, command, context);

export async function addSnippet(
  deps: KnowledgeDeps,
  profileId: string,
  body: NewSnippet,
  context: CommandContext,
): Promise<SnippetRow> {
  const profile = await profileWithId(deps, profileId);
  const id = randomUUID();
  await run(
    deps,
    profile,
    {
      type: 'AddSnippet',
      snippet_id: id,
      title: body.title,
      content: body.content,
      source: body.source ?? null,
      metadata: body.metadata ?? null,
      by: context.actor.id,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return snippetIn(deps, profile, id);
}

export async function updateSnippet(
  deps: KnowledgeDeps,
  profileId: string,
  id: string,
  changes: Partial<SnippetFields>,
  context: CommandContext,
): Promise<SnippetRow> {
  const profile = await profileWithId(deps, profileId);
  await snippetIn(deps, profile, id);
  await run(
    deps,
    profile,
    { type: 'UpdateSnippet', snippet_id: id, changes, by: context.actor.id, at: deps.clock.now().toISOString() },
    context,
  );
  return snippetIn(deps, profile, id);
}

export async function deleteSnippet(
  deps: KnowledgeDeps,
  profileId: string,
  id: string,
  context: CommandContext,
): Promise<void> {
  const profile = await profileWithId(deps, profileId);
  await snippetIn(deps, profile, id);
  await run(
    deps,
    profile,
    { type: 'DeleteSnippet', snippet_id: id, by: context.actor.id, at: deps.clock.now().toISOString() },
    context,
  );
}
