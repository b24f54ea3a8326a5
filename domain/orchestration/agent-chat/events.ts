// The agent-chat slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export const CONVERSATION_KINDS = ['public', 'private', 'assistant', 'chatsvc'] as const;

export type ConversationKind = (typeof CONVERSATION_KINDS)[number];

/** Who a conversation belongs to: a visitor (by token hash) or an account (key or session). */
export interface ConversationOwner {
  kind: 'visitor' | 'account' | 'chatsvc_user';
  /** The visitor token's SHA-256 (hex), the account's id, or `<integration id>:<chat user id>` (the chat-service bot's). */
  id: string;
}

export interface TurnTokens {
  input: number;
  output: number;
  cache_read: number;
}

export type ConversationEvent =
  | DomainEvent<
      'ConversationStarted',
      {
        conversation_id: string;
        profile_id: string;
        profile_slug: string;
        kind: ConversationKind;
        owner_kind: ConversationOwner['kind'];
        owner_id: string;
        visitor_id: string | null;
        /** The expired conversation this one replaces, when a turn named one. */
        follows: string | null;
        at: string;
      }
    >
  | DomainEvent<
      'ChatTurnCompleted',
      {
        conversation_id: string;
        profile_id: string;
        profile_slug: string;
        user_message_id: string;
        reply_message_id: string;
        /** Personal data: the visitor's message as the model saw it (PII scrubbed when the profile says so). */
        user_message: string;
        /** Personal data: the reply as returned (a fixed refusal when the leak detector fired). */
        reply: string;
        model: string;
        tokens: TurnTokens;
        cost_cents: number;
        /** Snippets the turn was grounded on (0 when none, or grounding is off). */
        grounding_hits: number;
        leak_blocked: boolean;
        expires_at: string;
        at: string;
      }
    >;

export const CONVERSATION_EVENT_TYPES = eventTypes<ConversationEvent>()(['ConversationStarted', 'ChatTurnCompleted']);

// The chat pipeline's security events (spec: "Audit entry"): each is appended to its own
// `orch.audit-<uuid>` stream (like the identity slice's audit events, domain/orchestration/users/events.ts)
// and shown by the audit route. No message text beyond `excerpt`: at most EXCERPT_CHARS characters
// of the caller's message, PII scrubbed whatever the profile says. No visitor token, ever.

export const EXCERPT_CHARS = 100;

export type ChatSurface = 'public' | 'private' | 'assistant' | 'chatsvc';

/** Which limit a refused request hit. */
export type ChatLimit = 'client_rpm' | 'profile_rpm' | 'profile_rpd';

export type ChatSecurityEvent =
  | DomainEvent<
      'PromptInjectionDetected',
      {
        profile_id: string;
        profile_slug: string;
        surface: ChatSurface;
        client: string;
        patterns: string[];
        excerpt: string;
        at: string;
      }
    >
  | DomainEvent<
      'ChatRateLimitExceeded',
      {
        /** Null when the per-client limit refused the request before the profile was looked up. */
        profile_id: string | null;
        profile_slug: string | null;
        surface: ChatSurface;
        client: string;
        limit: ChatLimit;
        retry_after: number;
        at: string;
      }
    >
  | DomainEvent<
      'PromptLeakDetected',
      {
        profile_id: string;
        profile_slug: string;
        surface: ChatSurface;
        conversation_id: string;
        client: string;
        detector: 'system_prompt' | 'canary';
        excerpt: string;
        at: string;
      }
    >
  | DomainEvent<
      'CostCapBlocked',
      {
        profile_id: string;
        profile_slug: string;
        surface: ChatSurface;
        client: string;
        cost_today_cents: number;
        cap_cents: number;
        at: string;
      }
    >;

export const CHAT_SECURITY_EVENT_TYPES = eventTypes<ChatSecurityEvent>()([
  'PromptInjectionDetected',
  'ChatRateLimitExceeded',
  'PromptLeakDetected',
  'CostCapBlocked',
]);
