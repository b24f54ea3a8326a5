// Request and response schemas of the agent-chat slice: the chat surfaces (public, private,
// the personal assistant) and the admin's reads (usage, conversations, messages).
//
// The message's length cap is not a schema rule: the pipeline checks it after the rate limits
// (spec: public chat rule 2), so an over-long message still counts against the caller.

import { z } from '@hono/zod-openapi';
import { SLUG_PATTERN } from '../../../domain/orchestration/profiles/decider.ts';
import { pageQuery } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';

export const VISITOR_TOKEN_MAX_BYTES = 128;

const message = z
  .string()
  .refine((m) => m.trim() !== '', 'message must not be empty')
  .openapi({
    description:
      "the visitor's message (at most ORCH_PUBLIC_CHAT_MAX_CHARS characters, default 4000: longer is 400 message_too_long)",
  });
const conversationId = z
  .uuid()
  .nullable()
  .optional()
  .openapi({ description: 'the conversation to continue (null or absent: start one)' });

export const PublicChatBody = z
  .object({
    message,
    conversation_id: conversationId,
    visitor_token: z
      .string()
      .refine(
        (t) => Buffer.byteLength(t) <= VISITOR_TOKEN_MAX_BYTES,
        `visitor_token must be at most ${VISITOR_TOKEN_MAX_BYTES} bytes`,
      )
      .optional()
      .openapi({ description: 'the token a first turn returned; absent or empty: a new conversation and a new token' }),
  })
  .openapi('PublicChatRequest');

export const PrivateChatBody = z
  .object({
    message,
    conversation_id: conversationId,
    visitor_id: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .openapi({ description: 'separates conversations within one caller' }),
  })
  .openapi('PrivateChatRequest');

export const ChatReply = z
  .object({
    conversation_id: z.uuid(),
    message: z.string(),
    tokens: z.object({ input: z.number().int(), output: z.number().int(), cache_read: z.number().int() }),
    cost_cents: z.number(),
    visitor_token: z
      .string()
      .optional()
      .openapi({ description: "only in the answer that starts a visitor's conversation: keep it, it is shown once" }),
  })
  .openapi('ChatReply');

export const SlugParam = z.object({
  // Any text reaches the handler, so an unknown and a malformed slug get the same 404.
  slug: z
    .string()
    .openapi({ param: { name: 'slug', in: 'path' }, example: 'customer-support', pattern: SLUG_PATTERN.source }),
});

export const UsageRow = z
  .object({
    profile_slug: z.string(),
    profile_name: z.string(),
    today_cost_cents: z.number(),
    today_requests: z.number().int(),
    today_input_tokens: z.number().int(),
    today_output_tokens: z.number().int(),
    cap_cents: z.number().int(),
    cap_pct: z.number().openapi({ description: 'today_cost_cents / cap_cents × 100; 0 when the cap is 0' }),
  })
  .openapi('UsageSummaryRow');

export const Conversation = z
  .object({
    id: z.uuid(),
    profile_slug: z.string(),
    kind: z.enum(['public', 'private', 'assistant', 'chatsvc']),
    message_count: z.number().int(),
    started_at: z.iso.datetime(),
    last_message_at: z.iso.datetime(),
    expires_at: z.iso.datetime(),
  })
  .openapi('Conversation');

export const Message = z
  .object({
    id: z.uuid(),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    tokens: z
      .object({ input: z.number().int(), output: z.number().int(), cache_read: z.number().int() })
      .nullable()
      .openapi({ description: "the turn's tokens on the reply; null on the user's message" }),
    cost_cents: z.number(),
    model: z.string().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('ConversationMessage');

export const ConversationParam = uuidParams('id');

export const conversationsQuery = pageQuery({ defaultLimit: 20, maxLimit: 100 }).pick({ limit: true });
