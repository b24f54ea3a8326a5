// A bot's knowledge snippets. They live on their profile's stream (`agent_profile-<slug>`, see
// domain/orchestration/profiles/decider.ts), so the first snippet and the profile's
// `knowledge_search_enabled` turning true are one append, and a template instantiation (profile
// and seeded snippets) is one append too. This decider folds that stream for what it needs: the
// profile's id and flag, and which snippets exist.

import { DomainError, eventTypes, type Decider, type DomainEvent } from '../../shared/decider.ts';
import type { AgentProfileStreamEvent } from '../profiles/decider.ts';

/** Lengths count characters (code points), not UTF-16 units or bytes. */
export const TITLE_MAX = 200;
export const CONTENT_MAX = 4000;
export const charCount = (text: string) => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

export type SnippetFields = {
  title: string;
  content: string;
  source: string | null;
  metadata: Record<string, unknown> | null;
};

/** A snippet to add with a new profile (template instantiation). */
export type SnippetSeed = SnippetFields & { snippet_id: string };

export type KnowledgeEvent =
  | DomainEvent<'KnowledgeSnippetAdded', SnippetFields & { snippet_id: string; profile_id: string; added_by: string | null; at: string }>
  | DomainEvent<'KnowledgeSnippetUpdated', { snippet_id: string; profile_id: string; changes: Partial<SnippetFields>; updated_by: string | null; at: string }>
  | DomainEvent<'KnowledgeSnippetDeleted', { snippet_id: string; profile_id: string; deleted_by: string | null; at: string }>;

export const KNOWLEDGE_EVENT_TYPES = eventTypes<KnowledgeEvent>()(['KnowledgeSnippetAdded', 'KnowledgeSnippetUpdated', 'KnowledgeSnippetDeleted']);

export type KnowledgeCommand =
  | ({ type: 'AddSnippet'; snippet_id: string; by: string | null; at: string } & SnippetFields)
  | { type: 'UpdateSnippet'; snippet_id: string; changes: Partial<SnippetFields>; by: string | null; at: string }
  | { type: 'DeleteSnippet'; snippet_id: string; by: string | null; at: string };

export interface KnowledgeState {
  profile_id: string | null;
  knowledge_search_enabled: boolean;
  /** Whether a snippet was ever added: only the first one turns knowledge search on. */
  had_snippets: boolean;
  /**
   * Ids of the snippets that exist. One set is shared by the successive states of a fold (a fold
   * never looks back at an earlier state): copying it per event would make folding a profile
   * with n snippets cost n².
   */
  snippets: Set<string>;
}

const initialState = (): KnowledgeState => ({ profile_id: null, knowledge_search_enabled: false, had_snippets: false, snippets: new Set() });

function evolve(state: KnowledgeState, event: AgentProfileStreamEvent): KnowledgeState {
  switch (event.type) {
    case 'ProfileCreated':
      return { ...state, profile_id: event.data.profile_id, knowledge_search_enabled: event.data.knowledge_search_enabled };
    case 'ProfileUpdated':
      return event.data.changes.knowledge_search_enabled === undefined ? state
        : { ...state, knowledge_search_enabled: event.data.changes.knowledge_search_enabled };
    case 'ProfileKnowledgeSearchEnabled':
      return { ...state, knowledge_search_enabled: true };
    case 'KnowledgeSnippetAdded':
      state.snippets.add(event.data.snippet_id);
      return state.had_snippets ? state : { ...state, had_snippets: true };
    case 'KnowledgeSnippetDeleted':
      state.snippets.delete(event.data.snippet_id);
      return state;
    default:
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

export const snippetNotFound = () => new DomainError('not_found', 'snippet_not_found', 'no such knowledge snippet for this bot');

/** The events that seed a new profile's knowledge (template instantiation). */
export function seededSnippetEvents(profileId: string, seed: SnippetSeed[], by: string | null, at: string): KnowledgeEvent[] {
  return seed.map(({ snippet_id, ...fields }) => {
    checkSnippet(fields);
    return { type: 'KnowledgeSnippetAdded', data: { snippet_id, profile_id: profileId, ...fields, added_by: by, at } };
  });
}

function decide(command: KnowledgeCommand, state: KnowledgeState): AgentProfileStreamEvent[] {
  const profileId = state.profile_id;
  if (!profileId) throw new DomainError('not_found', 'profile_not_found', 'no such profile');
  switch (command.type) {
    case 'AddSnippet': {
      const { type: _type, snippet_id, by, at, ...fields } = command;
      if (state.snippets.has(snippet_id)) throw new DomainError('conflict', 'snippet_exists', 'snippet already exists');
      checkSnippet(fields);
      const events: AgentProfileStreamEvent[] = [{ type: 'KnowledgeSnippetAdded', data: { snippet_id, profile_id: profileId, ...fields, added_by: by, at } }];
      // The first snippet turns knowledge search on, in the same append (spec: Profile flags). Later
      // ones leave the flag as it is: an admin who turned it off keeps it off.
      if (!state.had_snippets && !state.knowledge_search_enabled) events.push({ type: 'ProfileKnowledgeSearchEnabled', data: { profile_id: profileId, reason: 'first_snippet', at } });
      return events;
    }
    case 'UpdateSnippet': {
      if (!state.snippets.has(command.snippet_id)) throw snippetNotFound();
      checkSnippet(command.changes);
      const changes = Object.fromEntries(Object.entries(command.changes).filter(([, v]) => v !== undefined)) as Partial<SnippetFields>;
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'KnowledgeSnippetUpdated', data: { snippet_id: command.snippet_id, profile_id: profileId, changes, updated_by: command.by, at: command.at } }];
    }
    case 'DeleteSnippet': {
      if (!state.snippets.has(command.snippet_id)) throw snippetNotFound();
      return [{ type: 'KnowledgeSnippetDeleted', data: { snippet_id: command.snippet_id, profile_id: profileId, deleted_by: command.by, at: command.at } }];
    }
  }
}

export const knowledgeDecider: Decider<KnowledgeState, KnowledgeCommand, AgentProfileStreamEvent> = { initialState, evolve, decide };
