// In-process backend: each key keeps the times of its counted hits inside the window.

import type { Clock } from '../clock.ts';
import { decide, type RateDecision, type RateLimiter, type RateRule } from './port.ts';

const SWEEP_ABOVE = 100_000;

export class MemoryRateLimiter implements RateLimiter {
  private readonly hits = new Map<string, number[]>();
  /** The longest window seen, so a sweep never drops hits a rule still counts. */
  private longestWindowMs = 0;

  constructor(private readonly clock: Clock) {}

  private window(key: string, rule: RateRule, now: number): number[] {
    this.longestWindowMs = Math.max(this.longestWindowMs, rule.windowMs);
    const kept = (this.hits.get(key) ?? []).filter((t) => t > now - rule.windowMs);
    if (kept.length) this.hits.set(key, kept);
    else this.hits.delete(key);
    return kept;
  }

  async consume(key: string, rule: RateRule): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const hits = this.window(key, rule, now);
    const decision = decide(rule, hits.length, hits[0] ?? null, now, true);
    if (decision.allowed) {
      hits.push(now);
      this.hits.set(key, hits);
      if (this.hits.size > SWEEP_ABOVE) this.sweep(now);
    }
    return decision;
  }

  async peek(key: string, rule: RateRule): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const hits = this.window(key, rule, now);
    return decide(rule, hits.length, hits[0] ?? null, now, false);
  }

  async reset(key: string): Promise<void> {
    this.hits.delete(key);
  }

  async close(): Promise<void> {
    this.hits.clear();
  }

  private sweep(now: number): void {
    for (const [key, hits] of this.hits) if ((hits.at(-1) ?? 0) <= now - this.longestWindowMs) this.hits.delete(key);
  }
}
