// POST /api/v1/agents/{id}/chat (key): one turn with a spawned agent through the chat pipeline
// (agent-chat/pipeline.ts: limits, injection check, PII scrub, cost cap, model call with retries,
// leak detection, the turn recorded). The agent stands in for a profile: its template prompt is
// the system prompt, its model answers, and the pipeline's defaults give the limits. The turn's
// cost is added to the agent's total_cost_usd. A model that stays overloaded through the retries
// is 503 `model_overloaded`.

import { createRoute } from '@hono/zod-openapi';
import { agentSystemPrompt } from '../../../domain/orchestration/agents/templates.ts';
import { DEFAULT_REPLY_MODE, PROFILE_DEFAULTS } from '../../../domain/orchestration/profiles/decider.ts';
import type { AgentRow } from '../../../projections/orchestration/agents.ts';
import { projectById } from '../../../projections/orchestration/projects.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, principalUser, requireKey } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { runTurn } from '../agent-chat/pipeline.ts';
import { ChatReply, PrivateChatBody } from '../agent-chat/schemas.ts';
import { AUTH_ERRORS, orchErrors, orchRouter } from '../router.ts';
import { AgentIdParam } from './schemas.ts';
import { findAgent, recordAgentCost } from './commands.ts';

/** The profile the pipeline sees for an agent: the agent's id, name, model and template prompt, the default limits. */
function agentAsProfile(agent: AgentRow, projectName: string): ProfileRow {
  return {
    ...PROFILE_DEFAULTS, id: agent.id, slug: `agent-${agent.name.toLowerCase()}`, name: agent.name, model: agent.model,
    system_prompt: agentSystemPrompt({ template: agent.template, custom_agent_md: agent.custom_agent_md, name: agent.name, role: agent.role, project_name: projectName }),
    channel_reply_mode: DEFAULT_REPLY_MODE, integrations: {}, created_at: agent.created_at, updated_at: agent.created_at,
  };
}

const AgentChatReply = ChatReply.omit({ visitor_token: true }).openapi('AgentChatReply');

export function agentChatTurnRoutes(deps: OrchDeps) {
  const app = orchRouter();
  app.openapi(createRoute({
    method: 'post', path: '/api/v1/agents/{id}/chat', tags: ['agents'], summary: 'Chat with a spawned agent (through the chat pipeline)',
    middleware: [requireKey()] as const,
    request: { params: AgentIdParam, body: jsonBody(PrivateChatBody.omit({ visitor_id: true })) },
    responses: {
      200: ok(AgentChatReply, 'the reply, its tokens and cost; the cost is added to the agent\'s total_cost_usd'),
      ...orchErrors({
        ...AUTH_ERRORS, 400: 'validation_failed, message_too_long, prompt_injection_detected', 404: 'agent_not_found', 413: 'payload_too_large',
        429: 'rate_limited (Retry-After and retry_after)', 503: 'model_overloaded (retryable, Retry-After), model_unavailable, cost_cap_reached',
      }),
    },
  }), async (c) => {
    const agent = await findAgent(deps, c.req.valid('param').id);
    const body = c.req.valid('json');
    const user = principalUser(c);
    const project = await projectById(deps.db, agent.project_id);
    const result = await runTurn(deps, {
      surface: 'private', kind: 'private', clientLimit: null, caller: `account:${user.id}`, profile: async () => agentAsProfile(agent, project?.name ?? ''),
      owner: { kind: 'account', id: user.id }, visitorId: null, conversationId: body.conversation_id ?? null,
      message: body.message, maxChars: deps.config.publicChat.maxChars, context: actorOf(c),
    });
    await recordAgentCost(deps, agent.id, result.cost_cents, actorOf(c));
    return c.json({ conversation_id: result.conversation_id, message: result.message, tokens: result.tokens, cost_cents: result.cost_cents }, 200);
  });
  return app;
}

