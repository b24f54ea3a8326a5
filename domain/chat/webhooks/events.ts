// The webhooks slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type WebhookChanges = { name?: string; avatar_url?: string | null; active?: boolean };

export type WebhookEvent =
  | DomainEvent<
      'WebhookCreated',
      {
        webhook_id: string;
        channel_id: string;
        community_id: string | null;
        name: string;
        avatar_url: string | null;
        token_hash: string;
        created_by: string;
        at: string;
      }
    >
  | DomainEvent<'WebhookUpdated', { webhook_id: string; changes: WebhookChanges; by: string; at: string }>
  | DomainEvent<'WebhookDeleted', { webhook_id: string; by: string; at: string }>;

export const WEBHOOK_EVENT_TYPES = eventTypes<WebhookEvent>()(['WebhookCreated', 'WebhookUpdated', 'WebhookDeleted']);
