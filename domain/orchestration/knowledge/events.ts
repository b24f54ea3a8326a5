// A bot's knowledge snippets as events. They are appended to their profile's stream
// (`orch.agent_profile-<slug>`, named in domain/orchestration/profiles/events.ts), so that the first
// snippet and the profile's `knowledge_search_enabled` turning true are one append.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type SnippetFields = {
  title: string;
  content: string;
  source: string | null;
  metadata: Record<string, unknown> | null;
};

export type KnowledgeEvent =
  | DomainEvent<
      'KnowledgeSnippetAdded',
      SnippetFields & { snippet_id: string; profile_id: string; added_by: string | null; at: string }
    >
  | DomainEvent<
      'KnowledgeSnippetUpdated',
      { snippet_id: string; profile_id: string; changes: Partial<SnippetFields>; updated_by: string | null; at: string }
    >
  | DomainEvent<
      'KnowledgeSnippetDeleted',
      { snippet_id: string; profile_id: string; deleted_by: string | null; at: string }
    >;

export const KNOWLEDGE_EVENT_TYPES = eventTypes<KnowledgeEvent>()([
  'KnowledgeSnippetAdded',
  'KnowledgeSnippetUpdated',
  'KnowledgeSnippetDeleted',
]);
