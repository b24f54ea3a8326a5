// The model calls of the platform: the configured provider (ORCH_LLM_PROVIDER), the offline
// local model, and prices. `Models.complete` is what a use case calls: it picks the adapter for
// the request's model, calls it (the adapters retry overloads themselves) and prices the usage.
//
// Which adapter answers: a model named `local` (the default model of a profile) always runs on
// the local model, whatever the provider, so a profile left on the default keeps working
// offline; every other model goes to the configured provider (the local one when none is).

import type { LlmConfig } from '../config.ts';
import type { Logger } from '../logging.ts';
import { AnthropicProvider } from './anthropic.ts';
import type { RetryPolicy } from './http.ts';
import { LOCAL_MODEL, LocalProvider } from './local.ts';
import { OpenAiProvider } from './openai.ts';
import type { ModelProvider, ModelReply, ModelRequest } from './port.ts';
import { BUILT_IN_PRICES, loadPricesFile, Prices } from './pricing.ts';

export * from './port.ts';
export { LOCAL_MODEL } from './local.ts';

export interface ModelCall extends ModelReply {
  cost_cents: number;
}

export class Models {
  private readonly local = new LocalProvider();
  private readonly warned = new Set<string>();

  constructor(
    readonly provider: ModelProvider,
    readonly prices: Prices,
    private readonly log: Logger,
  ) {}

  providerFor(model: string): ModelProvider {
    return model === LOCAL_MODEL ? this.local : this.provider;
  }

  /** False for a model with no price: it costs 0, and a daily cost cap never refuses it. */
  isPriced(model: string): boolean {
    return this.prices.of(model) !== null;
  }

  /** Can a call of this model cost anything? False for unpriced and free (local) models: a cost cap never refuses them. */
  canSpend(model: string): boolean {
    const price = this.prices.of(model);
    return !!price && (price.input > 0 || price.output > 0 || price.cache_read > 0);
  }

  async complete(request: ModelRequest): Promise<ModelCall> {
    const reply = await this.providerFor(request.model).complete(request);
    if (!this.isPriced(request.model) && !this.warned.has(request.model)) {
      this.warned.add(request.model);
      this.log.warn('model_unpriced', {
        model: request.model,
        hint: 'its calls cost 0; add it to ORCH_LLM_PRICES_FILE',
      });
    }
    return { ...reply, cost_cents: this.prices.costCents(request.model, reply.usage) };
  }
}

export function createProvider(config: LlmConfig, overrides: Partial<RetryPolicy> = {}): ModelProvider {
  const retry: RetryPolicy = {
    maxAttempts: config.retryMax,
    ceilMs: config.retryCeilMs,
    timeoutMs: config.timeoutMs,
    ...overrides,
  };
  switch (config.provider) {
    case 'openai':
      return new OpenAiProvider({ baseUrl: config.baseUrl, apiKey: config.apiKey, retry });
    case 'anthropic':
      return new AnthropicProvider({ baseUrl: config.baseUrl, apiKey: config.apiKey, retry });
    case 'local':
      return new LocalProvider();
  }
}

/** The models of a process, from configuration. `overrides` lets tests record retry waits. */
export function createModels(config: LlmConfig, log: Logger, overrides: Partial<RetryPolicy> = {}): Models {
  const table = config.pricesFile ? { ...BUILT_IN_PRICES, ...loadPricesFile(config.pricesFile) } : BUILT_IN_PRICES;
  return new Models(createProvider(config, overrides), new Prices(table), log);
}
