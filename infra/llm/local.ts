// The `local` model: offline and deterministic, no network, cost 0. It is the default when no
// provider key is configured, so the whole platform works with no account anywhere. It answers
// from what the request's hints say (port.ts):
//
// - grounding snippets present: it answers from the best one, quoting its title;
// - told to say it does not know (`none_found`): it says so;
// - otherwise: a short fixed sentence naming the profile.
//
// Token counts are estimated from the text (about four characters a token).
//
// Tools, offline: when tools are offered and the turn's message has lines `/tool <name> <json>`
// naming offered tools, it calls them (one call per line); once the last message is a tool
// result, it answers `Tool <name>: <result excerpt>`. So the tool loop runs without a network model.

import { estimateTokens, type ModelProvider, type ModelReply, type ModelRequest, type ToolCall } from './port.ts';

export const LOCAL_MODEL = 'local';
export const LOCAL_DONT_KNOW = "I don't know: nothing I have been given answers that.";
const EXCERPT_CHARS = 280;

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= EXCERPT_CHARS ? flat : `${flat.slice(0, EXCERPT_CHARS - 1).trimEnd()}…`;
}

export function localReplyText(request: ModelRequest): string {
  const grounding = request.hints?.grounding;
  if (grounding === 'none_found') return LOCAL_DONT_KNOW;
  if (grounding && grounding.length > 0) {
    const best = grounding[0]!;
    return `From "${best.title}": ${excerpt(best.content)}`;
  }
  return `${request.hints?.persona ?? 'This assistant'} here, answering with the offline local model.`;
}

const TOOL_LINE = /^\/tool\s+([a-zA-Z0-9_-]{1,64})\s+(\{.*\})\s*$/;

/** The `/tool <name> <json>` lines of the turn's message that name offered tools (bad JSON: empty arguments, the loop reports it). */
export function localToolCalls(request: ModelRequest): ToolCall[] {
  const last = request.messages[request.messages.length - 1];
  if (!request.tools?.length || !last || last.role !== 'user') return [];
  const offered = new Set(request.tools.map((t) => t.name));
  const calls: ToolCall[] = [];
  for (const line of last.content.split('\n')) {
    const match = TOOL_LINE.exec(line.trim());
    if (!match || !offered.has(match[1]!)) continue;
    let args: Record<string, unknown>;
    try {
      const parsed = JSON.parse(match[2]!);
      args = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : { _invalid: match[2] };
    } catch {
      args = { _invalid: match[2] };
    }
    calls.push({ id: `local_${calls.length + 1}_${request.messages.length}`, name: match[1]!, arguments: args });
  }
  return calls;
}

export class LocalProvider implements ModelProvider {
  readonly name = 'local';

  async complete(request: ModelRequest): Promise<ModelReply> {
    const calls = localToolCalls(request);
    const last = request.messages[request.messages.length - 1];
    let text: string;
    if (calls.length) text = '';
    else if (last?.role === 'tool') {
      const call = [...request.messages]
        .reverse()
        .find((m) => m.role === 'assistant' && m.tool_calls?.some((c) => c.id === last.tool_call_id));
      const name =
        call && call.role === 'assistant' ? call.tool_calls!.find((c) => c.id === last.tool_call_id)!.name : 'tool';
      text = `Tool ${name}: ${excerpt(last.content)}`;
    } else text = localReplyText(request);
    if (calls.length) {
      const prompt = request.system.length + request.messages.reduce((n, m) => n + m.content.length + 4, 0);
      return {
        text,
        tool_calls: calls,
        usage: { input: Math.ceil(prompt / 4), output: 8 * calls.length, cache_read: 0 },
        stop: 'tool_calls',
      };
    }
    const prompt = request.system.length + request.messages.reduce((n, m) => n + m.content.length + 4, 0);
    return {
      text,
      tool_calls: [],
      usage: {
        input: Math.ceil(prompt / 4),
        output: Math.min(request.max_tokens, estimateTokens(text)),
        cache_read: 0,
      },
      stop: 'end',
    };
  }
}
