// The knowledge decisions: add, update and delete a bot's snippets. They are functions, not a
// decider: snippets live on their profile's stream, and one stream has one decider, the
// profile's (domain/orchestration/profiles/decider.ts), which folds the snippets with
// `evolveKnowledge` and decides snippet commands with `decideKnowledge`. Turning knowledge
// search on with the first snippet is a profile decision, so it stays there.

import { DomainError } from '../../shared/decider.ts';
import type { KnowledgeEvent, SnippetFields } from './events.ts';

/** Lengths count characters (code points), not UTF-16 units or bytes. */
export const TITLE_MAX = 200;
export const CONTENT_MAX = 4000;
export const charCount = (text: string) => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/** A snippet to add with a new profile (template instantiation). */
export type SnippetSeed = SnippetFields & { snippet_id: string };

export type KnowledgeCommand =
  | ({ type: 'AddSnippet'; snippet_id: string; by: string | null; at: string } & SnippetFields)
  | { type: 'UpdateSnippet'; snippet_id: string; changes: Partial<SnippetFields>; by: string | null; at: string }
  | { type: 'DeleteSnippet'; snippet_id: string; by: string | null; at: string };

export interface KnowledgeState {
  /** Whether a snippet was ever added: only the first one turns knowledge search on. */
  had_snippets: boolean;
  /**
   * Ids of the snippets that exist. One set is shared by the successive states of a fold (a fold
   * never looks back at an earlier state): copying it per event would make folding a profile
   * with n snippets cost n².
   */
  snippets: Set<string>;
}

export const initialKnowledge = (): KnowledgeState => ({ had_snippets: false, snippets: new Set() });

export function evolveKnowledge(state: KnowledgeState, event: KnowledgeEvent): KnowledgeState {
  switch (event.type) {
    case 'KnowledgeSnippetAdded':
      state.snippets.add(event.data.snippet_id);
      return state.had_snippets ? state : { ...state, had_snippets: true };
    case 'KnowledgeSnippetDeleted':
      state.snippets.delete(event.data.snippet_id);
      return state;
    case 'KnowledgeSnippetUpdated':
      return state;
  }
}

const invalid = (message: string) => new DomainError('invalid', 'validation_failed', message);

/** The snippet invariants, whoever sends the fields (the API's schemas check the same first). */
export function checkSnippet(fields: Partial<SnippetFields>): void {
  if (fields.title !== undefined && (charCount(fields.title) < 1 || charCount(fields.title) > TITLE_MAX)) {
    throw invalid(`title must be 1-${TITLE_MAX} characters`);
  }
  if (fields.content !== undefined && (charCount(fields.content) < 1 || charCount(fields.content) > CONTENT_MAX)) {
    throw invalid(`content must be 1-${CONTENT_MAX} characters`);
  }
}

export const snippetNotFound = () =>
  new DomainError('not_found', 'snippet_not_found', 'no such knowledge snippet for this bot');

/** The events that seed a new profile's knowledge (template instantiation). */
export function seededSnippetEvents(
  profileId: string,
  seed: SnippetSeed[],
  by: string | null,
  at: string,
): KnowledgeEvent[] {
  return seed.map(({ snippet_id, ...fields }) => {
    checkSnippet(fields);
    return { type: 'KnowledgeSnippetAdded', data: { snippet_id, profile_id: profileId, ...fields, added_by: by, at } };
  });
}

/** A snippet command on the profile `profileId` (the caller has checked that it exists). */
export function decideKnowledge(command: KnowledgeCommand, state: KnowledgeState, profileId: string): KnowledgeEvent[] {
  switch (command.type) {
    case 'AddSnippet': {
      const { type: _type, snippet_id, by, at, ...fields } = command;
      if (state.snippets.has(snippet_id)) throw new DomainError('conflict', 'snippet_exists', 'snippet already exists');
      checkSnippet(fields);
      return [
        { type: 'KnowledgeSnippetAdded', data: { snippet_id, profile_id: profileId, ...fields, added_by: by, at } },
      ];
    }
    case 'UpdateSnippet': {
      if (!state.snippets.has(command.snippet_id)) throw snippetNotFound();
      checkSnippet(command.changes);
      const changes = Object.fromEntries(
        Object.entries(command.changes).filter(([, v]) => v !== undefined),
      ) as Partial<SnippetFields>;
      if (Object.keys(changes).length === 0) return [];
      return [
        {
          type: 'KnowledgeSnippetUpdated',
          data: {
            snippet_id: command.snippet_id,
            profile_id: profileId,
            changes,
            updated_by: command.by,
            at: command.at,
          },
        },
      ];
    }
    case 'DeleteSnippet': {
      if (!state.snippets.has(command.snippet_id)) throw snippetNotFound();
      return [
        {
          type: 'KnowledgeSnippetDeleted',
          data: { snippet_id: command.snippet_id, profile_id: profileId, deleted_by: command.by, at: command.at },
        },
      ];
    }
  }
}
