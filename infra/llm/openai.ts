// The `openai` adapter: any OpenAI-compatible Chat Completions API (OpenAI, vLLM, Ollama,
// llama.cpp's server). POST `<base>/chat/completions`, where the base URL includes the API's
// version path (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` for Ollama). The key,
// when there is one, goes in `Authorization: Bearer`; local servers often need none.
//
// Usage read: `usage.prompt_tokens` (cached ones included), `usage.completion_tokens`,
// `usage.prompt_tokens_details.cached_tokens`. A server that reports no usage gets estimates.

import { postJson, trimBase, type RetryPolicy } from './http.ts';
import {
  estimateTokens,
  ModelError,
  type ChatMessage,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ToolCall,
} from './port.ts';

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

const malformed = (what: string) => new ModelError('unavailable', `the model provider's answer is malformed: ${what}`);

function toOpenAiMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      return message.tool_calls?.length
        ? {
            role: 'assistant',
            content: message.content || null,
            tool_calls: message.tool_calls.map((t) => ({
              id: t.id,
              type: 'function',
              function: { name: t.name, arguments: JSON.stringify(t.arguments) },
            })),
          }
        : { role: 'assistant', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content };
  }
}

export function openAiBody(request: ModelRequest): Record<string, unknown> {
  return {
    model: request.model,
    messages: [{ role: 'system', content: request.system }, ...request.messages.map(toOpenAiMessage)],
    max_tokens: request.max_tokens,
    temperature: request.temperature,
    ...(request.tools?.length
      ? {
          tools: request.tools.map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: t.parameters },
          })),
        }
      : {}),
  };
}

const count = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : null;

function parseArguments(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const value = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? value : { value };
  } catch {
    throw malformed("a tool call's arguments are not JSON");
  }
}

export function parseOpenAiReply(body: unknown, request: ModelRequest): ModelReply {
  const choice = (body as { choices?: unknown[] } | null)?.choices?.[0] as
    { message?: Record<string, unknown>; finish_reason?: string } | undefined;
  const message = choice?.message;
  if (!message || typeof message !== 'object') throw malformed('no choices[0].message');
  if (message.content != null && typeof message.content !== 'string')
    throw malformed('message.content is not a string');
  const text = (message.content as string | null) ?? '';
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  const tool_calls: ToolCall[] = calls.map(
    (c: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => {
      if (typeof c?.id !== 'string' || typeof c.function?.name !== 'string')
        throw malformed('a tool call without id or name');
      return { id: c.id, name: c.function.name, arguments: parseArguments(c.function.arguments) };
    },
  );
  const usage = (
    body as {
      usage?: {
        prompt_tokens?: unknown;
        completion_tokens?: unknown;
        prompt_tokens_details?: { cached_tokens?: unknown };
      };
    }
  ).usage;
  const promptText = request.system + request.messages.map((m) => m.content).join('');
  const stop =
    choice?.finish_reason === 'stop'
      ? 'end'
      : choice?.finish_reason === 'length'
        ? 'max_tokens'
        : choice?.finish_reason === 'tool_calls' || tool_calls.length
          ? 'tool_calls'
          : 'other';
  return {
    text,
    tool_calls,
    usage: {
      input: count(usage?.prompt_tokens) ?? estimateTokens(promptText),
      output: count(usage?.completion_tokens) ?? estimateTokens(text),
      cache_read: count(usage?.prompt_tokens_details?.cached_tokens) ?? 0,
    },
    stop,
  };
}

export class OpenAiProvider implements ModelProvider {
  readonly name = 'openai';
  private readonly url: string;

  constructor(private readonly options: { baseUrl: string | null; apiKey: string | null; retry: RetryPolicy }) {
    this.url = `${trimBase(options.baseUrl ?? OPENAI_BASE_URL)}/chat/completions`;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const headers: Record<string, string> = this.options.apiKey
      ? { authorization: `Bearer ${this.options.apiKey}` }
      : {};
    return parseOpenAiReply(await postJson(this.url, headers, openAiBody(request), this.options.retry), request);
  }
}
