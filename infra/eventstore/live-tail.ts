// A subscription to the log from its head, running only while someone listens: the `/ws` feed
// and the chat hub start one when their first socket arrives and close it when the last one
// leaves, so an idle instance reads nothing. Starting is shared by concurrent callers; stopping
// waits for a start in flight and re-checks that nobody arrived meanwhile.

import type { EventStore, LogFilter, RecordedEvent, Subscription } from './port.ts';

export interface LiveTailHandlers {
  /** Each event, in log order. */
  deliver(event: RecordedEvent): void;
  /** The subscription failed while running: listeners will hear nothing more (close them). */
  failed(error: Error): void;
  /** Nobody listens any more: a stop may proceed. */
  idle(): boolean;
}

export class LiveTail {
  private running: { subscription: Subscription; done: Promise<void> } | null = null;
  private starting: Promise<void> | null = null;

  constructor(
    private readonly events: Pick<EventStore, 'subscribe' | 'headPosition'>,
    private readonly handlers: LiveTailHandlers,
    private readonly filter?: LogFilter,
  ) {}

  /** Resolves once the subscription runs: every event appended after this call is delivered. */
  start(): Promise<void> {
    if (this.running) return Promise.resolve();
    this.starting ??= (async () => {
      const head = await this.events.headPosition();
      const subscription = this.events.subscribe({
        after: head ?? 'start',
        ...(this.filter ? { filter: this.filter } : {}),
      });
      this.running = { subscription, done: this.consume(subscription) };
    })().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  /** Closes the subscription when nobody listens (checked again after any start in flight); true when it stopped. */
  async stopIfIdle(): Promise<boolean> {
    await this.starting;
    const running = this.running;
    if (!running || !this.handlers.idle()) return false;
    this.running = null;
    await running.subscription.close();
    await running.done;
    return true;
  }

  private async consume(subscription: Subscription): Promise<void> {
    try {
      for await (const event of subscription) this.handlers.deliver(event);
    } catch (error) {
      if (this.running?.subscription !== subscription) return; // closed on purpose
      this.running = null;
      this.handlers.failed(error as Error);
    }
  }
}
