// The model-provider port (DESIGN.md "Shared mechanisms": model calls). Every model call of the
// platform goes through it: the chat pipeline today, the agent runtime's tool loop later. One
// request shape, one reply shape, one error type, whatever the provider:
//
// - `system` is the whole system prompt (base prompt, grounding, canary); `messages` the
//   conversation, oldest first, ending with the turn to answer.
// - `tools` (optional) are offered to the model as JSON-Schema functions; a reply that calls
//   them carries `tool_calls`, and the caller answers each with a `tool` message naming its id
//   (the adapters map both to the provider's own format: OpenAI `tools`/`tool_calls`,
//   Anthropic `tool_use`/`tool_result` blocks).
// - `hints` say, in structured form, what the prompt already says in words: the offline `local`
//   model builds its reply from them; network models ignore them.
// - `usage.input` counts every prompt token, cached ones included; `usage.cache_read` is the
//   part of them read from the provider's prompt cache (priced apart, see pricing.ts).
// - Failures are `ModelError`: `overloaded` (429/503/529 still after the last attempt, with the
//   seconds to wait) or `unavailable` (unreachable, timed out, any other refusal, or an answer
//   that is not the protocol's). Messages never carry the provider key or the provider's body.

export interface ToolSpec {
  /** `^[a-zA-Z0-9_-]{1,64}$` (both providers' rule). */
  name: string;
  description: string;
  /** A JSON Schema of type `object`. */
  parameters: Record<string, unknown>;
}

export interface ToolCall {
  /** The provider's id, echoed back in the `tool` message that answers it. */
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type ChatMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface GroundingSnippet {
  title: string;
  content: string;
}

export interface ModelHints {
  /** The profile's name, which the local model names in its fallback sentence. */
  persona?: string;
  /**
   * Grounding retrieved for this turn: the snippets (best first), or `none_found` when the
   * model was told to say it does not know. Absent: no grounding was attempted.
   */
  grounding?: GroundingSnippet[] | 'none_found';
}

export interface ModelRequest {
  model: string;
  system: string;
  messages: ChatMessage[];
  max_tokens: number;
  temperature: number;
  tools?: ToolSpec[];
  hints?: ModelHints;
}

export interface Usage {
  input: number;
  output: number;
  cache_read: number;
}

export interface ModelReply {
  text: string;
  tool_calls: ToolCall[];
  usage: Usage;
  /** Why the model stopped. */
  stop: 'end' | 'max_tokens' | 'tool_calls' | 'other';
}

export interface ModelProvider {
  readonly name: 'local' | 'openai' | 'anthropic';
  complete(request: ModelRequest): Promise<ModelReply>;
}

export class ModelError extends Error {
  constructor(
    readonly kind: 'overloaded' | 'unavailable',
    message: string,
    /** `overloaded`: whole seconds the caller should wait before retrying. */
    readonly retryAfterSeconds = 0,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** A rough token count of text (about four characters a token), for the local model and estimates. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}
