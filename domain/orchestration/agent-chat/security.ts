// The chat pipeline's security events (spec: "Audit entry"): each is appended to its own
// `audit-<uuid>` stream (like the identity slice's, domain/orchestration/users/audit.ts) and
// shown by the audit route. No message text beyond `excerpt`: at most 100 characters of the
// caller's message, PII scrubbed whatever the profile says. No visitor token, ever.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type ChatSurface = 'public' | 'private' | 'assistant' | 'chatsvc';

/** Which limit a refused request hit. */
export type ChatLimit = 'client_rpm' | 'profile_rpm' | 'profile_rpd';

export type ChatSecurityEvent =
  | DomainEvent<'PromptInjectionDetected', {
    profile_id: string; profile_slug: string; surface: ChatSurface; client: string; patterns: string[]; excerpt: string; at: string;
  }>
  | DomainEvent<'ChatRateLimitExceeded', {
    /** Null when the per-client limit refused the request before the profile was looked up. */
    profile_id: string | null; profile_slug: string | null; surface: ChatSurface; client: string; limit: ChatLimit; retry_after: number; at: string;
  }>
  | DomainEvent<'PromptLeakDetected', {
    profile_id: string; profile_slug: string; surface: ChatSurface; conversation_id: string; client: string;
    detector: 'system_prompt' | 'canary'; excerpt: string; at: string;
  }>
  | DomainEvent<'CostCapBlocked', {
    profile_id: string; profile_slug: string; surface: ChatSurface; client: string; cost_today_cents: number; cap_cents: number; at: string;
  }>;

export const CHAT_SECURITY_EVENT_TYPES = eventTypes<ChatSecurityEvent>()(['PromptInjectionDetected', 'ChatRateLimitExceeded', 'PromptLeakDetected', 'CostCapBlocked']);

export const EXCERPT_CHARS = 100;
