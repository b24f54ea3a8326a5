// Live delivery to this instance's sockets, from a subscription to the log (never from a
// request handler), so every instance delivers every event to the sockets it holds, whichever
// instance appended it:
//
// - `PrekeyConsumed` leaving fewer than 25 one-time prekeys: `KeysLow { remaining }` to the
//   owner's sockets;
// - `SessionRevoked`: that session's sockets close (4401);
// - `AccountDeleted`: the account's sockets close (4401).
//
// The subscription runs while at least one socket is authenticated here, starting from the head
// of the log as it was when the first socket joined; `join` resolves once it is in place, so a
// client told `Authenticated` hears of everything appended afterwards.

import type { EventStore, RecordedEvent, Subscription } from '../../../infra/eventstore/port.ts';
import type { Logger } from '../../../infra/logging.ts';
import { LOW_PREKEY_THRESHOLD } from '../../../domain/chat/keys/decider.ts';

export interface HubSocket {
  user_id: string;
  session_id: string;
  send(frame: Record<string, unknown>): void;
  close(code: number, reason: string): void;
}

const DELIVERED = ['PrekeyConsumed', 'SessionRevoked', 'AccountDeleted'];

export class SocketHub {
  private readonly byUser = new Map<string, Set<HubSocket>>();
  private size = 0;
  private running: { subscription: Subscription; done: Promise<void> } | null = null;
  private starting: Promise<void> | null = null;

  constructor(private readonly events: Pick<EventStore, 'subscribe' | 'headPosition'>, private readonly log: Logger) {}

  get connections(): number {
    return this.size;
  }

  async join(socket: HubSocket): Promise<void> {
    let set = this.byUser.get(socket.user_id);
    if (!set) this.byUser.set(socket.user_id, (set = new Set()));
    if (!set.has(socket)) {
      set.add(socket);
      this.size += 1;
    }
    await this.ensureRunning();
  }

  leave(socket: HubSocket): void {
    const set = this.byUser.get(socket.user_id);
    if (!set?.delete(socket)) return;
    this.size -= 1;
    if (set.size === 0) this.byUser.delete(socket.user_id);
    if (this.size === 0) void this.stop();
  }

  private ensureRunning(): Promise<void> {
    if (this.running) return Promise.resolve();
    this.starting ??= (async () => {
      const head = await this.events.headPosition();
      const subscription = this.events.subscribe({ after: head ?? 'start', filter: { eventTypes: DELIVERED } });
      this.running = { subscription, done: this.consume(subscription) };
    })().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async stop(): Promise<void> {
    await this.starting;
    const running = this.running;
    if (!running || this.size > 0) return;
    this.running = null;
    await running.subscription.close();
    await running.done;
  }

  private async consume(subscription: Subscription): Promise<void> {
    try {
      for await (const event of subscription) this.deliver(event);
    } catch (error) {
      if (this.running?.subscription === subscription) {
        this.log.error('chat_ws_subscription_failed', { error: (error as Error).message });
        this.running = null;
        // Sockets would otherwise hear nothing more: close them, clients reconnect.
        for (const set of this.byUser.values()) for (const socket of set) socket.close(1011, 'live delivery interrupted');
      }
    }
  }

  private deliver(event: RecordedEvent): void {
    const data = event.data as { user_id?: string; session_id?: string; remaining?: number };
    const sockets = data.user_id ? this.byUser.get(data.user_id) : undefined;
    if (!sockets) return;
    switch (event.type) {
      case 'PrekeyConsumed':
        if ((data.remaining ?? 0) < LOW_PREKEY_THRESHOLD) for (const s of sockets) s.send({ type: 'KeysLow', remaining: data.remaining });
        return;
      case 'SessionRevoked':
        for (const s of [...sockets]) if (s.session_id === data.session_id) s.close(4401, 'session revoked');
        return;
      case 'AccountDeleted':
        for (const s of [...sockets]) s.close(4401, 'account deleted');
        return;
    }
  }
}
