// The `anthropic` adapter: the Messages API. POST `<base>/v1/messages` (base default
// `https://api.anthropic.com`) with `x-api-key` and `anthropic-version`.
//
// Usage read: `usage.input_tokens`, `output_tokens`, `cache_read_input_tokens` (and
// `cache_creation_input_tokens`). Anthropic counts cache reads and writes apart from
// `input_tokens`; the port's `input` counts every prompt token, so they are added in.
//
// Messages map to Anthropic's alternating turns: consecutive messages of one role are merged
// into one turn of content blocks, tool calls become `tool_use` blocks and their answers
// `tool_result` blocks in a user turn.

import { postJson, trimBase, type RetryPolicy } from './http.ts';
import {
  ModelError,
  type ChatMessage,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ToolCall,
} from './port.ts';

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

const malformed = (what: string) => new ModelError('unavailable', `the model provider's answer is malformed: ${what}`);

type Block = Record<string, unknown>;

function blocksOf(message: ChatMessage): { role: 'user' | 'assistant'; blocks: Block[] } {
  switch (message.role) {
    case 'user':
      return { role: 'user', blocks: [{ type: 'text', text: message.content }] };
    case 'assistant':
      return {
        role: 'assistant',
        blocks: [
          ...(message.content ? [{ type: 'text', text: message.content }] : []),
          ...(message.tool_calls ?? []).map((t) => ({ type: 'tool_use', id: t.id, name: t.name, input: t.arguments })),
        ],
      };
    case 'tool':
      return {
        role: 'user',
        blocks: [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: message.content }],
      };
  }
}

export function anthropicMessages(
  messages: ChatMessage[],
): { role: 'user' | 'assistant'; content: string | Block[] }[] {
  const turns: { role: 'user' | 'assistant'; blocks: Block[] }[] = [];
  for (const message of messages) {
    const { role, blocks } = blocksOf(message);
    const last = turns.at(-1);
    if (last && last.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  // A turn of one text block is sent as a plain string (the common case, and the simplest form).
  return turns.map(({ role, blocks }) => ({
    role,
    content: blocks.length === 1 && blocks[0]!.type === 'text' ? (blocks[0]!.text as string) : blocks,
  }));
}

export function anthropicBody(request: ModelRequest): Record<string, unknown> {
  return {
    model: request.model,
    system: request.system,
    messages: anthropicMessages(request.messages),
    max_tokens: request.max_tokens,
    // Anthropic's range is 0-1; profiles allow 0-2.
    temperature: Math.min(1, request.temperature),
    ...(request.tools?.length
      ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) }
      : {}),
  };
}

const count = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0;

export function parseAnthropicReply(body: unknown): ModelReply {
  const content = (body as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) throw malformed('no content array');
  let text = '';
  const tool_calls: ToolCall[] = [];
  for (const block of content as Block[]) {
    if (block?.type === 'text') {
      if (typeof block.text !== 'string') throw malformed('a text block without text');
      text += block.text;
    } else if (block?.type === 'tool_use') {
      if (typeof block.id !== 'string' || typeof block.name !== 'string')
        throw malformed('a tool_use block without id or name');
      const input =
        block.input && typeof block.input === 'object' && !Array.isArray(block.input)
          ? (block.input as Record<string, unknown>)
          : {};
      tool_calls.push({ id: block.id, name: block.name, arguments: input });
    }
  }
  const usage = (body as { usage?: Record<string, unknown> }).usage;
  if (!usage || typeof usage !== 'object') throw malformed('no usage');
  const cacheRead = count(usage.cache_read_input_tokens);
  const reason = (body as { stop_reason?: string }).stop_reason;
  return {
    text,
    tool_calls,
    usage: {
      input: count(usage.input_tokens) + cacheRead + count(usage.cache_creation_input_tokens),
      output: count(usage.output_tokens),
      cache_read: cacheRead,
    },
    stop:
      reason === 'end_turn' || reason === 'stop_sequence'
        ? 'end'
        : reason === 'max_tokens'
          ? 'max_tokens'
          : reason === 'tool_use'
            ? 'tool_calls'
            : 'other',
  };
}

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  private readonly url: string;

  constructor(private readonly options: { baseUrl: string | null; apiKey: string | null; retry: RetryPolicy }) {
    this.url = `${trimBase(options.baseUrl ?? ANTHROPIC_BASE_URL)}/v1/messages`;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const headers: Record<string, string> = {
      'anthropic-version': ANTHROPIC_VERSION,
      ...(this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {}),
    };
    return parseAnthropicReply(await postJson(this.url, headers, anthropicBody(request), this.options.retry));
  }
}
