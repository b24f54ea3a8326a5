// The one rate limiter (DESIGN.md "Shared mechanisms"): keyed by any string, sliding-window
// semantics: at most `limit` hits counted in any window of `windowMs`. A refused hit is not
// counted, so hammering does not extend a block; the refusal says when the oldest counted hit
// leaves the window (`retryAfterSeconds`, at least 1), which every 429 carries as Retry-After.
//
// Two backends pass one test suite: in-process (the default) and Redis (REDIS_URL), where
// several instances of a service share the counters.

export interface RateRule {
  limit: number;
  windowMs: number;
}

export interface RateDecision {
  allowed: boolean;
  /** Hits still allowed in the current window (after this one, for `consume`). */
  remaining: number;
  /** 0 when allowed; else whole seconds until a hit would be allowed again (at least 1). */
  retryAfterSeconds: number;
  /** Whole seconds until the oldest counted hit leaves the window (X-RateLimit-Reset). */
  resetSeconds?: number;
}

export interface RateLimiter {
  /** Count one hit against `key` when it fits the rule; refuse it otherwise. */
  consume(key: string, rule: RateRule): Promise<RateDecision>;
  /** Would a hit be allowed now? Counts nothing. */
  peek(key: string, rule: RateRule): Promise<RateDecision>;
  /** Forget `key`'s hits (a successful login clears its failures). */
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

/** The decision for a window holding `count` hits, the oldest at `oldest` (ms), at `now` (ms). */
export function decide(
  rule: RateRule,
  count: number,
  oldest: number | null,
  now: number,
  counting: boolean,
): RateDecision {
  if (count < rule.limit) {
    const resetSeconds = Math.max(0, Math.ceil(((oldest ?? now) + rule.windowMs - now) / 1000));
    return { allowed: true, remaining: rule.limit - count - (counting ? 1 : 0), retryAfterSeconds: 0, resetSeconds };
  }
  const freeAt = (oldest ?? now) + rule.windowMs;
  const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now) / 1000));
  return { allowed: false, remaining: 0, retryAfterSeconds, resetSeconds: retryAfterSeconds };
}
