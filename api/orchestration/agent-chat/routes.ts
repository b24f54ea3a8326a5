// The chat surfaces and the admin's views of chat (spec: "Chat", "Profiles, usage, audit,
// conversations"):
//
// - `POST /api/v1/public/agents/chat/{slug}` (anonymous): enabled tier-1 profiles only; any
//   other slug is the same 404, so the tier is not revealed. The visitor is its token; the
//   per-client limit counts the observed address (client-key.ts). CORS only here, when
//   ORCH_CORS_ALLOWED_ORIGINS is set.
// - `POST /api/v1/agent-chat/chat/{slug}` (key or session): any tier, enabled profiles; the
//   conversation belongs to the calling account (and `visitor_id`); the personal assistant is
//   refused (403 `personal_assistant_forbidden`). Mirrored at /api/agent-chat/chat/{slug} for
//   the web console's try-it panel.
// - `POST /api/assistant-user/chat` and `GET /api/assistant-user/conversations` (browser
//   session): the personal assistant, and the caller's own conversations with it.
// - `GET /api/v1/agent-chat/usage/summary` (key or session; mirrored at
//   /api/agent-chat/usage/summary for the web console's usage page), `.../conversations` and
//   `.../conversations/{id}/messages` (admin, the route's own check; both mirrored under
//   /api/agent-chat/conversations... for the console's conversations page).
//
// Every surface runs the one pipeline (commands.ts, the slice's application layer), which also
// decides which profiles each surface may invoke.

import { createRoute, z } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import {
  conversationById,
  conversationsOf,
  messagesOf,
  recentConversations,
  usageSummary,
  type ConversationRow,
} from '../../../projections/orchestration/agent-chat.ts';
import { anyone } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { peerAddress } from '../../shared/peer.ts';
import { actorOf, principalUser, requireAdmin, requireKey, requireSession } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { clientKey } from './client-key.ts';
import { assistantTurn, privateTurn, publicTurn, type SurfaceTurn, type TurnResult } from './commands.ts';
import {
  ChatReply,
  Conversation,
  ConversationParam,
  conversationsQuery,
  Message,
  PrivateChatBody,
  PublicChatBody,
  SlugParam,
  UsageRow,
} from './schemas.ts';

const tags = ['chat'];
const PUBLIC_CHAT_PATH = '/api/v1/public/agents/chat/{slug}';
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'admin role required' };
const TURN_ERRORS = {
  400: 'validation_failed, message_too_long, prompt_injection_detected',
  404: 'profile_not_found',
  413: 'payload_too_large',
  429: 'rate_limited (Retry-After and retry_after)',
  503: 'model_overloaded (retryable, Retry-After), model_unavailable, cost_cap_reached',
};

const conversationNotFound = () => new ApiError(404, 'conversation_not_found', 'no such conversation');

const reply = (result: TurnResult, visitorToken?: string) => ({
  conversation_id: result.conversation_id,
  message: result.message,
  tokens: result.tokens,
  cost_cents: result.cost_cents,
  ...(visitorToken ? { visitor_token: visitorToken } : {}),
});

const iso = (d: Date) => new Date(d).toISOString();
export const conversationView = (c: ConversationRow) => ({
  id: c.id,
  profile_slug: c.profile_slug,
  kind: c.kind,
  message_count: c.message_count,
  started_at: iso(c.started_at),
  last_message_at: iso(c.last_message_at),
  expires_at: iso(c.expires_at),
});

export function agentChatRoutes(deps: OrchDeps) {
  const app = orchRouter();
  const publicChat = deps.config.publicChat;

  // CORS (rule 8): exact origins, this route only, preflight included; unset or empty: none.
  if (publicChat.corsOrigins.length > 0) {
    const allowed = new Set(publicChat.corsOrigins);
    app.use(
      '/api/v1/public/agents/chat/*',
      cors({
        origin: (origin) => (allowed.has(origin) ? origin : null),
        allowMethods: ['POST', 'OPTIONS'],
        allowHeaders: ['content-type'],
      }),
    );
  }

  app.openapi(
    createRoute({
      method: 'post',
      path: PUBLIC_CHAT_PATH,
      tags,
      summary: 'Public chat with a tier-1 profile (no authentication)',
      middleware: anyone(),
      description:
        "Rules 1-8 of the spec. A turn without `visitor_token` starts a new conversation and returns a new token (shown once); a turn with one gets none back. A `conversation_id` of another visitor or profile is ignored; past the profile's `conversation_ttl_hours` a turn naming it starts a new one.",
      request: { params: SlugParam, body: jsonBody(PublicChatBody) },
      responses: { 200: ok(ChatReply, 'the reply'), ...orchErrors(TURN_ERRORS) },
    }),
    async (c) => {
      const { slug } = c.req.valid('param');
      const body = c.req.valid('json');
      // An empty token counts as none (rule 5): a new conversation and a new token.
      const presented = body.visitor_token || null;
      const token = presented ?? generateToken('', 32);
      const client = clientKey(
        peerAddress(c),
        publicChat.trustedProxyHeader ? c.req.header(publicChat.trustedProxyHeader) : undefined,
        publicChat,
      );
      const result = await publicTurn(deps, slug, {
        clientLimit: { key: `chat:client:${client}`, rule: { limit: publicChat.ratePerMin, windowMs: 60_000 } },
        caller: client,
        owner: { kind: 'visitor', id: hashToken(token) },
        visitorId: null,
        conversationId: presented ? (body.conversation_id ?? null) : null,
        message: body.message,
        maxChars: publicChat.maxChars,
        context: actorOf(c),
        tools: deps.chatsvc.turnTools(actorOf(c)),
      });
      return c.json(reply(result, presented ? undefined : token), 200);
    },
  );

  /** A signed-in account's turn: its conversations, its `visitor_id`. */
  const accountTurn = (
    c: Parameters<Parameters<typeof app.openapi>[1]>[0],
    body: { message: string; conversation_id?: string | null; visitor_id?: string | null },
  ): SurfaceTurn => {
    const user = principalUser(c);
    return {
      clientLimit: null,
      caller: `account:${user.id}`,
      owner: { kind: 'account', id: user.id },
      visitorId: body.visitor_id ?? null,
      conversationId: body.conversation_id ?? null,
      message: body.message,
      maxChars: publicChat.maxChars,
      context: actorOf(c),
      tools: deps.chatsvc.turnTools(actorOf(c)),
    };
  };

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/agent-chat/chat/{slug}',
      tags,
      summary: 'Chat with any enabled profile (key or session)',
      description:
        "The public chat's pipeline and answer, for any tier. A conversation belongs to the calling account; `visitor_id` separates conversations within one caller; another caller's conversation id starts a new one. The personal assistant is refused here (its surface is POST /api/assistant-user/chat).",
      middleware: requireKey(),
      request: { params: SlugParam, body: jsonBody(PrivateChatBody) },
      responses: {
        200: ok(ChatReply, 'the reply (no visitor_token)'),
        ...orchErrors({ ...AUTH_ERRORS, ...TURN_ERRORS, 403: 'personal_assistant_forbidden, csrf_failed' }),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid('param');
      const result = await privateTurn(deps, slug, accountTurn(c, c.req.valid('json')));
      return c.json(reply(result), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/assistant-user/chat',
      tags: [...tags, 'web UI'],
      summary: 'Chat with the personal assistant (browser session)',
      description:
        "The web UI's surface of the built-in personal assistant; same request and answer as the private chat.",
      middleware: requireSession(),
      request: { body: jsonBody(PrivateChatBody) },
      responses: {
        200: ok(ChatReply, 'the reply'),
        ...orchErrors({ ...AUTH_ERRORS, ...TURN_ERRORS, 403: 'session_required, csrf_failed' }),
      },
    }),
    async (c) => c.json(reply(await assistantTurn(deps, accountTurn(c, c.req.valid('json')))), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/assistant-user/conversations',
      tags: [...tags, 'web UI'],
      summary: "The caller's own personal-assistant conversations, newest first",
      middleware: requireSession(),
      request: { query: conversationsQuery },
      responses: {
        200: ok(z.array(Conversation), 'a bare array, newest first'),
        ...orchErrors({ ...AUTH_ERRORS, 403: 'session_required' }),
      },
    }),
    async (c) => {
      const rows = await conversationsOf(deps.db, principalUser(c).id, 'assistant', c.req.valid('query').limit);
      return c.json(rows.map(conversationView), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/usage/summary',
      tags,
      summary: "Today's (UTC) usage and cost, one row per profile",
      middleware: requireKey(),
      responses: { 200: ok(z.array(UsageRow), 'a bare array, one row per profile'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => c.json(await usageSummary(deps.db, deps.clock.now().toISOString().slice(0, 10)), 200),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/conversations',
      tags,
      summary: 'Recent conversations across profiles and callers, newest first',
      middleware: requireAdmin(true),
      request: { query: conversationsQuery },
      responses: {
        200: ok(z.array(Conversation), 'a bare array, newest first (by last message)'),
        ...orchErrors(ADMIN_ERRORS),
      },
    }),
    async (c) => c.json((await recentConversations(deps.db, c.req.valid('query').limit)).map(conversationView), 200),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/conversations/{id}/messages',
      tags,
      summary: "A conversation's messages, oldest first",
      middleware: requireAdmin(true),
      request: { params: ConversationParam },
      responses: {
        200: ok(z.array(Message), 'a bare array, oldest first'),
        ...orchErrors({ ...ADMIN_ERRORS, 404: 'conversation_not_found' }),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      // A malformed id is the route's 404 before this (its uuid param).
      if (!(await conversationById(deps.db, id))) throw conversationNotFound();
      const rows = await messagesOf(deps.db, id);
      return c.json(
        rows.map((m) => ({ ...m, created_at: iso(m.created_at) })),
        200,
      );
    },
  );

  return app;
}
