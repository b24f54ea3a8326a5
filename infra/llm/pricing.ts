// What a model call costs, in cents, from the usage the provider reported. Prices are cents per
// million tokens for `input` (uncached prompt tokens), `output` and `cache_read` (prompt tokens
// read from the provider's cache). A built-in table covers common models; ORCH_LLM_PRICES_FILE
// (JSON: model → {input, output, cache_read}) adds to it and overrides it. A model is matched by
// its exact name, else by the longest table name it starts with (`gpt-4o-2024-08-06` is
// `gpt-4o`, `claude-sonnet-4-20250514` is `claude-sonnet-4`). An unpriced model costs 0 (and
// is never refused by a cost cap); the caller logs one warning per model.

import { readFileSync } from 'node:fs';
import type { Usage } from './port.ts';

export interface Price {
  input: number;
  output: number;
  cache_read: number;
}

export type PriceTable = Record<string, Price>;

/** Cents per million tokens (list prices when written; override them with ORCH_LLM_PRICES_FILE). */
export const BUILT_IN_PRICES: PriceTable = {
  local: { input: 0, output: 0, cache_read: 0 },
  'gpt-4o': { input: 250, output: 1000, cache_read: 125 },
  'gpt-4o-mini': { input: 15, output: 60, cache_read: 7.5 },
  'gpt-4.1': { input: 200, output: 800, cache_read: 50 },
  'gpt-4.1-mini': { input: 40, output: 160, cache_read: 10 },
  'gpt-4.1-nano': { input: 10, output: 40, cache_read: 2.5 },
  'o4-mini': { input: 110, output: 440, cache_read: 27.5 },
  'claude-opus-4': { input: 1500, output: 7500, cache_read: 150 },
  'claude-sonnet-4': { input: 300, output: 1500, cache_read: 30 },
  'claude-3-7-sonnet': { input: 300, output: 1500, cache_read: 30 },
  'claude-3-5-sonnet': { input: 300, output: 1500, cache_read: 30 },
  'claude-haiku-4-5': { input: 100, output: 500, cache_read: 10 },
  'claude-3-5-haiku': { input: 80, output: 400, cache_read: 8 },
};

function isPrice(value: unknown): value is Price {
  const p = value as Record<string, unknown> | null;
  return (
    !!p &&
    typeof p === 'object' &&
    ['input', 'output', 'cache_read'].every(
      (k) => typeof p[k] === 'number' && Number.isFinite(p[k]) && (p[k] as number) >= 0,
    )
  );
}

/** The prices file's table; a file that is not such a table is a startup error naming it. */
export function loadPricesFile(file: string): PriceTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`ORCH_LLM_PRICES_FILE ${file}: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`ORCH_LLM_PRICES_FILE ${file}: not a JSON object of model prices`);
  for (const [model, price] of Object.entries(parsed)) {
    if (!isPrice(price))
      throw new Error(
        `ORCH_LLM_PRICES_FILE ${file}: ${model} needs non-negative numbers input, output and cache_read (cents per million tokens)`,
      );
  }
  return parsed as PriceTable;
}

export class Prices {
  private readonly names: string[];

  constructor(private readonly table: PriceTable) {
    this.names = Object.keys(table).sort((a, b) => b.length - a.length);
  }

  of(model: string): Price | null {
    const exact = this.table[model];
    if (exact) return exact;
    const prefix = this.names.find((name) => model.startsWith(name));
    return prefix ? this.table[prefix]! : null;
  }

  /** Cents, to six decimal places; 0 for an unpriced model. */
  costCents(model: string, usage: Usage): number {
    const price = this.of(model);
    if (!price) return 0;
    const cached = Math.min(usage.cache_read, usage.input);
    const cents =
      ((usage.input - cached) * price.input + cached * price.cache_read + usage.output * price.output) / 1_000_000;
    return Math.round(cents * 1e6) / 1e6;
  }
}
