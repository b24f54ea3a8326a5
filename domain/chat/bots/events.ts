// The bots slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export const BOT_SCOPES = ['default', 'metrics', 'bot:provision'] as const;

export type BotScope = (typeof BOT_SCOPES)[number];

export type BotTokenEvent =
  | DomainEvent<
      'BotTokenMinted',
      {
        token_id: string;
        bot_id: string;
        token_hash: string;
        prefix: string;
        scope: BotScope;
        label: string | null;
        expires_at: string | null;
        rate_limit_per_window: number | null;
        created_by: string | null;
        at: string;
      }
    >
  | DomainEvent<'BotTokenRevoked', { token_id: string; bot_id: string; by: string; at: string }>;

export type BotTokenUseEvent = DomainEvent<'BotTokenUsed', { token_id: string; at: string }>;

export const BOT_TOKEN_EVENT_TYPES = eventTypes<BotTokenEvent>()(['BotTokenMinted', 'BotTokenRevoked']);

export const BOT_TOKEN_USE_EVENT_TYPES = eventTypes<BotTokenUseEvent>()(['BotTokenUsed']);
