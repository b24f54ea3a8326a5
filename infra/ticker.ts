// A connection-bound ticker: runs a function every `ms` while it has at least one holder (a socket
// listening, a user connected), and not at all otherwise. The first `hold()` starts it, the last
// release stops it; the timer is unref'd (it never keeps a process alive). Request-side modules
// use this rather than a timer of their own: the timer's life is the holders', visibly.

export class Ticker {
  private readonly holders = new Set<symbol>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ms: number,
    private readonly tick: () => void,
  ) {}

  /** Whether it ticks now (some holder holds it). */
  get running(): boolean {
    return this.timer !== null;
  }

  /** Hold it: it ticks from now while held; returns the release (once is enough; more are no-ops). */
  hold(): () => void {
    const holder = Symbol('holder');
    this.holders.add(holder);
    if (!this.timer) {
      this.timer = setInterval(this.tick, this.ms);
      this.timer.unref();
    }
    return () => {
      if (!this.holders.delete(holder) || this.holders.size > 0 || !this.timer) return;
      clearInterval(this.timer);
      this.timer = null;
    };
  }
}
