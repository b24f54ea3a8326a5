// One agent's run: its model, alternating with the task tools, up to a bounded number of model
// calls. Each call's cost is reported as it is spent. The loop stops at once when `stop` says the
// agent was stopped or killed (the model call in flight is abandoned, not awaited).

import { ModelError, type ChatMessage, type Models } from '../../infra/llm/index.ts';
import type { ApiClient, ClaimedAgent } from './client.ts';
import { runTool, TASK_TOOLS } from './tools.ts';

export type Outcome = { outcome: 'completed' } | { outcome: 'failed'; reason: string } | { outcome: 'abandoned' };

const MAX_TOKENS = 4096;
export const DEFAULT_PROMPT = "Begin: look at the project's tasks and do your part.";

export async function runAgentLoop(
  claim: ClaimedAgent,
  deps: { api: ApiClient; models: Models; maxIterations: number; workDir: string },
  stop: Promise<void>,
): Promise<Outcome> {
  const { agent, project } = claim;
  const messages: ChatMessage[] = [{ role: 'user', content: agent.initial_prompt || DEFAULT_PROMPT }];
  const system = `${claim.system_prompt}\n\nYour working directory: ${deps.workDir}`;
  const stopped = stop.then(() => 'stopped' as const);
  for (let i = 0; i < deps.maxIterations; i++) {
    let call;
    try {
      const answer = await Promise.race([
        deps.models.complete({
          model: agent.model,
          system,
          messages,
          max_tokens: MAX_TOKENS,
          temperature: 0.2,
          tools: TASK_TOOLS,
          hints: { persona: agent.name },
        }),
        stopped,
      ]);
      if (answer === 'stopped') return { outcome: 'abandoned' };
      call = answer;
    } catch (error) {
      if (error instanceof ModelError) return { outcome: 'failed', reason: `model_${error.kind}: ${error.message}` };
      throw error;
    }
    if (call.cost_cents > 0) {
      const status = await deps.api.report(agent.id, { event: 'cost', cost_usd: call.cost_cents / 100 });
      if (status !== 'running') return { outcome: 'abandoned' };
    }
    messages.push({
      role: 'assistant',
      content: call.text,
      ...(call.tool_calls.length ? { tool_calls: call.tool_calls } : {}),
    });
    if (call.tool_calls.length === 0) return { outcome: 'completed' };
    for (const toolCall of call.tool_calls) {
      const content = await runTool(deps.api, claim.credential, project.id, toolCall);
      messages.push({ role: 'tool', tool_call_id: toolCall.id, content });
    }
  }
  return { outcome: 'failed', reason: `iteration_limit: no final answer after ${deps.maxIterations} model calls` };
}
