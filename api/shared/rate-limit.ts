// A fixed-window failure counter per key, in memory. Used for login throttling; each process
// counts its own attempts (a multi-instance deployment divides the budget across instances).

export class FailureCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(private readonly limit: number, private readonly windowMs: number) {}

  private current(key: string, now: number) {
    const w = this.windows.get(key);
    if (!w || w.resetAt <= now) return null;
    return w;
  }

  /** True once `limit` failures were counted in the current window. */
  blocked(key: string, now = Date.now()): boolean {
    return (this.current(key, now)?.count ?? 0) >= this.limit;
  }

  /** Seconds until the window resets. */
  retryAfter(key: string, now = Date.now()): number {
    const w = this.current(key, now);
    return w ? Math.max(1, Math.ceil((w.resetAt - now) / 1000)) : 0;
  }

  fail(key: string, now = Date.now()): void {
    const w = this.current(key, now);
    if (w) w.count += 1;
    else this.windows.set(key, { count: 1, resetAt: now + this.windowMs });
    if (this.windows.size > 100_000) this.sweep(now);
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
  }
}
