// Model providers: which one answers agents' model calls, and how those calls are retried.

import { type EnvVars, oneOf, positiveInt, secretValue, text, type Values } from './kinds.ts';

export const llmVars = {
  ORCH_LLM_MODEL: text({ description: 'the model of a profile created without one (unset: `local`)' }),
  ORCH_LLM_PROVIDER: oneOf(['local', 'openai', 'anthropic'], {
    description:
      '`local` (offline, deterministic), `openai` (any OpenAI-compatible Chat Completions API) or `anthropic` (Messages API). Unset: `openai` when a provider key is set, else `local`',
  }),
  ORCH_LLM_BASE_URL: text({
    description:
      "the provider's base URL, version path included (`http://127.0.0.1:11434/v1` for Ollama); unset: `https://api.openai.com/v1` or `https://api.anthropic.com`",
  }),
  ORCH_LLM_API_KEY: text({
    description: 'the provider key (`Authorization: Bearer` for openai, `x-api-key` for anthropic)',
    secret: true,
  }),
  ORCH_OPENAI_API_KEY: text({ description: 'the openai provider key when ORCH_LLM_API_KEY is unset', secret: true }),
  ORCH_OPENAI_API_KEY_FILE: text({ description: 'file holding ORCH_OPENAI_API_KEY', secret: true }),
  ORCH_LLM_PRICES_FILE: text({
    description:
      'JSON `{ "<model>": { "input": c, "output": c, "cache_read": c } }`, cents per million tokens; adds to and overrides the built-in table',
  }),
  ORCH_LLM_RETRY_MAX: positiveInt({
    description: 'attempts of a model call when the provider is overloaded',
    default: 3,
  }),
  ORCH_LLM_RETRY_CEIL_MS: positiveInt({
    description: 'longest wait between model call attempts, Retry-After included (milliseconds)',
    default: 8000,
  }),
  ORCH_LLM_TIMEOUT_MS: positiveInt({
    description: 'how long one model call attempt may take (milliseconds)',
    default: 60_000,
  }),
} satisfies EnvVars;

export type LlmProviderName = 'local' | 'openai' | 'anthropic';

export interface LlmConfig {
  provider: LlmProviderName;
  /** Null: the provider's own default. */
  baseUrl: string | null;
  apiKey: string | null;
  pricesFile: string | null;
  retryMax: number;
  retryCeilMs: number;
  timeoutMs: number;
}

export function llmConfig(v: Values<typeof llmVars>): LlmConfig {
  const llmKey = v.ORCH_LLM_API_KEY;
  const openAiKey = secretValue(v.ORCH_OPENAI_API_KEY, v.ORCH_OPENAI_API_KEY_FILE, 'ORCH_OPENAI_API_KEY_FILE').value;
  // Unset: the local model, unless a key says which network provider is meant.
  const provider = v.ORCH_LLM_PROVIDER ?? (llmKey || openAiKey ? 'openai' : 'local');
  return {
    provider,
    baseUrl: v.ORCH_LLM_BASE_URL,
    apiKey: provider === 'openai' ? (llmKey ?? openAiKey) : provider === 'anthropic' ? llmKey : null,
    pricesFile: v.ORCH_LLM_PRICES_FILE,
    retryMax: v.ORCH_LLM_RETRY_MAX,
    retryCeilMs: v.ORCH_LLM_RETRY_CEIL_MS,
    timeoutMs: v.ORCH_LLM_TIMEOUT_MS,
  };
}
