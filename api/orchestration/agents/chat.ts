// POST /api/v1/agents/{id}/chat (key): one turn with a spawned agent through the chat pipeline
// (agent-chat/commands.ts: limits, injection check, PII scrub, cost cap, model call with retries,
// leak detection, the turn recorded). The agent stands in for a profile: its template prompt is
// the system prompt, its model answers, and the pipeline's defaults give the limits. The turn's
// cost is added to the agent's total_cost_usd. A model that stays overloaded through the retries
// is 503 `model_overloaded`.

import { createRoute } from '@hono/zod-openapi';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, principalUser, requireKey } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { ChatReply, PrivateChatBody } from '../agent-chat/schemas.ts';
import { AUTH_ERRORS, orchErrors, orchRouter } from '../router.ts';
import { AgentUuidParam } from './schemas.ts';
import { chatWithAgent } from './commands.ts';

const AgentChatReply = ChatReply.omit({ visitor_token: true }).openapi('AgentChatReply');

export function agentChatTurnRoutes(deps: OrchDeps) {
  const app = orchRouter();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/agents/{id}/chat',
      tags: ['agents'],
      summary: 'Chat with a spawned agent (through the chat pipeline)',
      middleware: [requireKey()] as const,
      request: { params: AgentUuidParam, body: jsonBody(PrivateChatBody.omit({ visitor_id: true })) },
      responses: {
        200: ok(AgentChatReply, "the reply, its tokens and cost; the cost is added to the agent's total_cost_usd"),
        ...orchErrors({
          ...AUTH_ERRORS,
          400: 'validation_failed, message_too_long, prompt_injection_detected',
          404: 'agent_not_found',
          413: 'payload_too_large',
          429: 'rate_limited (Retry-After and retry_after)',
          503: 'model_overloaded (retryable, Retry-After), model_unavailable, cost_cap_reached',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const result = await chatWithAgent(
        deps,
        c.req.valid('param').id,
        principalUser(c).id,
        { message: body.message, conversation_id: body.conversation_id ?? null },
        actorOf(c),
      );
      return c.json(
        {
          conversation_id: result.conversation_id,
          message: result.message,
          tokens: result.tokens,
          cost_cents: result.cost_cents,
        },
        200,
      );
    },
  );
  return app;
}
