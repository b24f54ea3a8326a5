// Incoming webhooks (`chat.webhook-<uuid>`): created on a channel by a community owner or admin
// (or an instance admin), renamed, deactivated and reactivated, deleted. The token (64 random
// characters, both identifier and secret) is shown once, in the create response: the log keeps
// its SHA-256 only. Executions are messages (MessagePosted with `via_webhook`), not events here.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { WebhookChanges, WebhookEvent } from './events.ts';

export const WEBHOOK_NAME_MAX = 64;
export const WEBHOOK_CONTENT_MAX = 4000;
export const WEBHOOK_USERNAME_MAX = 64;
/** The spec's posting limit: one message per second per webhook. */
export const WEBHOOK_RATE = { limit: 1, windowMs: 1000 };

export type WebhookCommand =
  | {
      type: 'Create';
      webhook_id: string;
      channel_id: string;
      community_id: string | null;
      name: string;
      avatar_url: string | null;
      token_hash: string;
      by: string;
      at: string;
    }
  | { type: 'Update'; changes: WebhookChanges; by: string; at: string }
  | { type: 'Delete'; by: string; at: string };

export interface WebhookState {
  id: string | null;
  deleted: boolean;
  name: string;
  avatar_url: string | null;
  active: boolean;
}

export const webhookNotFound = () => new DomainError('not_found', 'webhook_not_found', 'no such webhook');

export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent> = {
  initialState: () => ({ id: null, deleted: false, name: '', avatar_url: null, active: true }),
  evolve(state, event) {
    switch (event.type) {
      case 'WebhookCreated':
        return {
          ...state,
          id: event.data.webhook_id,
          name: event.data.name,
          avatar_url: event.data.avatar_url,
          active: true,
        };
      case 'WebhookUpdated':
        return { ...state, ...event.data.changes };
      case 'WebhookDeleted':
        return { ...state, deleted: true };
    }
  },
  decide(command, state) {
    if (command.type === 'Create') {
      if (state.id) throw new DomainError('conflict', 'webhook_exists', 'webhook already exists');
      const { type: _type, by, ...data } = command;
      return [{ type: 'WebhookCreated', data: { ...data, created_by: by } }];
    }
    if (!state.id || state.deleted) throw webhookNotFound();
    if (command.type === 'Delete')
      return [{ type: 'WebhookDeleted', data: { webhook_id: state.id, by: command.by, at: command.at } }];
    const changes = Object.fromEntries(
      Object.entries(command.changes).filter(
        ([k, v]) => v !== undefined && (state as unknown as Record<string, unknown>)[k] !== v,
      ),
    ) as WebhookChanges;
    if (!Object.keys(changes).length) return [];
    return [{ type: 'WebhookUpdated', data: { webhook_id: state.id, changes, by: command.by, at: command.at } }];
  },
};

const MENTION = /(?<![A-Za-z0-9_.+\-@])@([A-Za-z0-9_]+)/g;
const IGNORED = new Set(['everyone', 'here', 'channel']);

/**
 * `@username` mentions in a webhook's Markdown, in order of first appearance, de-duplicated:
 * exact and case-sensitive, letters, digits and underscores; `@everyone`, `@here`, `@channel`
 * ignored; an address-like `name@host` is not a mention.
 */
export function mentionedUsernames(content: string): string[] {
  const seen: string[] = [];
  for (const match of content.matchAll(MENTION)) {
    const name = match[1]!;
    if (!IGNORED.has(name) && !seen.includes(name)) seen.push(name);
  }
  return seen;
}
