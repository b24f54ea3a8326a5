// One bot socket per active integration (spec 1, inbound answering rules 1-5): its lifecycle.
// The inbox (./bot-inbox.ts), the keys (./bot-keys.ts) and the reply (./bot-reply.ts) are its
// parts; what it needs from outside is ./bot-host.ts, and the supervisor (./supervisor.ts)
// starts, retries and stops it.
//
// - The socket (`ws`) always verifies chain and host name, with ORCH_CHATSVC_CA_BUNDLE's extra
//   roots; `verify_tls` false affects REST only. It takes the integration's advisory lock first:
//   across instances one holds each socket (the others show `standby`).
// - `Authenticate` with the bot token; a refusal (close 4401) is the chat service's 401: the
//   integration is revoked externally and the socket stops. Then `Subscribe` to every channel
//   and DM (paced under the chat's 10 frames per 2 s), and to those joined later
//   (`ChannelJoined`), each followed by a catch-up from its cursor.
// - Frames are handled one at a time, in order (one queue: frames, key upkeep, catch-ups);
//   messages that arrive while earlier work runs are handed to the inbox as one batch.
// - Its timers (the reconnect backoff, the subscribe pacing and retries) belong to the
//   connection they serve and end with it.

import WebSocket from 'ws';
import { backoffMs } from '../../../domain/orchestration/chatsvc/rules.ts';
import { trustedRoots } from '../../../infra/chatsvc/client.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { restOf, type BotHost } from './bot-host.ts';
import { BotInbox, type ChatMessage } from './bot-inbox.ts';
import { BotKeys } from './bot-keys.ts';
import { BotReply } from './bot-reply.ts';

export type SocketState = 'connecting' | 'connected' | 'disconnected' | 'standby' | 'stopped';
export interface SocketView {
  state: SocketState;
  since: string | null;
  last_error: string | null;
}

const SUBSCRIBE_GAP_MS = 250;
const SUBSCRIBE_RETRIES = 5;
const BATCH_MAX = 200;
const RANDOM_FILL = () => Math.random();

export class BotSocket {
  private state: SocketState = 'stopped';
  private since: Date | null = null;
  private lastError: string | null = null;
  private stopped = false;
  private socket: WebSocket | null = null;
  private loop: Promise<void> | null = null;
  private queue: Promise<void> = Promise.resolve();
  private locked = false;
  private wake: (() => void) | null = null;
  /** Channel kinds by id (`dm` or `channel`), from the listings. */
  private readonly kinds = new Map<string, 'dm' | 'channel'>();
  private readonly subscribeRetries = new Map<string, number>();
  private batch: ChatMessage[] | null = null;
  readonly inbox: BotInbox;
  private readonly keys: BotKeys;

  constructor(
    private readonly host: BotHost,
    readonly integration: IntegrationRow,
  ) {
    const reply = new BotReply(host, integration);
    this.inbox = new BotInbox(host, integration, (message, text, surface, session) =>
      reply.answer(message, text, surface, session),
    );
    this.keys = new BotKeys(host, integration);
  }

  private get deps() {
    return this.host.deps;
  }

  private get id() {
    return this.integration.integration_id;
  }

  view(): SocketView {
    return { state: this.state, since: this.since?.toISOString() ?? null, last_error: this.lastError };
  }

  private setState(state: SocketState, error?: string): void {
    if (error !== undefined) this.lastError = error;
    if (state === this.state) return;
    this.state = state;
    this.since = this.deps.clock.now();
  }

  start(): void {
    this.stopped = false;
    this.loop ??= this.run().finally(() => {
      this.loop = null;
    });
  }

  /** The supervisor's retry of a standby (or stopped) socket. */
  retry(): void {
    if (!this.stopped) this.start();
  }

  /** Key maintenance (top-up, weekly signed-prekey rotation) in turn with the frames. */
  maintainSoon(): Promise<void> {
    this.enqueue(() => this.keys.maintain());
    return this.queue;
  }

  lockLost(): void {
    this.locked = false;
    this.socket?.terminate();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    this.socket?.terminate();
    await this.loop;
    await this.queue;
    if (this.locked) await this.host.unlock(this.id);
    this.locked = false;
    this.setState('stopped');
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      if (!this.locked) {
        this.locked = await this.host.lock(this.id).catch(() => false);
        if (!this.locked) {
          this.setState('standby');
          return;
        }
      }
      this.setState('connecting');
      let outcome: 'revoked' | 'closed';
      try {
        outcome = await this.session();
        if (this.state === 'connected') attempt = 0;
      } catch (error) {
        outcome = 'closed';
        this.lastError = (error as Error).message;
      }
      if (outcome === 'revoked') {
        this.stopped = true;
        break;
      }
      if (this.stopped) break;
      this.setState('disconnected');
      await this.sleep(backoffMs(attempt++, RANDOM_FILL));
    }
    if (this.locked) await this.host.unlock(this.id);
    this.locked = false;
    this.setState('stopped');
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** One connection, until it closes; 'revoked' when the chat service refused the token. */
  private session(): Promise<'revoked' | 'closed'> {
    const url = `${this.integration.instance_url.replace(/^http/, 'ws')}/api/ws`;
    const ca = trustedRoots(this.deps.config.chatsvc.caBundle?.pem ?? null);
    return new Promise((resolve, reject) => {
      let authenticated = false;
      let refused = false;
      const socket = new WebSocket(url, { ...(ca ? { ca } : {}), rejectUnauthorized: true, handshakeTimeout: 10_000 });
      this.socket = socket;
      socket.on('open', () =>
        socket.send(JSON.stringify({ type: 'Authenticate', token: this.host.botToken(this.integration) })),
      );
      socket.on('message', (data) => {
        let frame: Record<string, any>;
        try {
          frame = JSON.parse(String(data));
        } catch {
          return;
        }
        if (!authenticated) {
          if (frame.type === 'Authenticated') {
            authenticated = true;
            this.lastError = null;
            // Connected means live: every channel subscribed and caught up. A message posted
            // before that is found by the catch-up; one posted after it arrives on the socket.
            this.enqueue(async () => {
              try {
                await this.onAuthenticated(socket);
              } finally {
                if (socket.readyState === WebSocket.OPEN) this.setState('connected', undefined);
              }
            });
          } else if (frame.type === 'Error') refused = true;
          return;
        }
        if (frame.type === 'MessageCreated' && frame.message) {
          // Messages that arrive while earlier work runs are handled as one batch (one transaction).
          if (!this.batch) {
            const batch: ChatMessage[] = (this.batch = []);
            this.enqueue(() => {
              if (this.batch === batch) this.batch = null;
              return this.inbox.handleMany(batch);
            });
          }
          this.batch.push(frame.message as ChatMessage);
          if (this.batch.length >= BATCH_MAX) this.batch = null;
          return;
        }
        this.batch = null;
        this.enqueue(() => this.onFrame(socket, frame));
      });
      socket.on('error', (error) => {
        this.lastError = error.message;
      });
      socket.on('close', (code) => {
        this.socket = null;
        if (!authenticated && (code === 4401 || refused)) {
          this.lastError = 'the chat service refused the bot token (Authenticate)';
          this.enqueue(() => this.host.revoked(this.integration, 'socket'));
          this.queue.then(
            () => resolve('revoked'),
            () => resolve('revoked'),
          );
          return;
        }
        resolve('closed');
      });
      socket.on('unexpected-response', (_req, res) => {
        reject(new Error(`upgrade refused with ${res.statusCode}`));
      });
    });
  }

  private enqueue(work: () => Promise<unknown>): void {
    this.queue = this.queue.then(work).then(
      () => {},
      (error) => {
        this.deps.log.error('chatsvc_frame_failed', {
          profile_id: this.integration.profile_id,
          error: (error as Error).message,
        });
        this.deps.metrics.countChatsvcFailure('frame');
      },
    );
  }

  private send(socket: WebSocket, frame: Record<string, unknown>): void {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  // --- subscriptions and frames -----------------------------------------------------------------

  private async onAuthenticated(socket: WebSocket): Promise<void> {
    await this.keys.maintain();
    const channels = await restOf(this.host, this.integration).call('GET', '/api/channels');
    const dms = await restOf(this.host, this.integration).call('GET', '/api/dms');
    if (channels.status === 401 || dms.status === 401) {
      await this.host.revoked(this.integration, 'socket');
      socket.close();
      return;
    }
    for (const c of (channels.body?.channels ?? []) as { id: string }[]) this.kinds.set(c.id, 'channel');
    for (const c of (dms.body?.dms ?? []) as { id: string }[]) this.kinds.set(c.id, 'dm');
    for (const channelId of this.kinds.keys()) {
      if (socket.readyState !== WebSocket.OPEN) return;
      await this.subscribe(socket, channelId);
    }
  }

  private async subscribe(socket: WebSocket, channelId: string): Promise<void> {
    this.send(socket, { type: 'Subscribe', channel_id: channelId });
    await new Promise((r) => setTimeout(r, SUBSCRIBE_GAP_MS));
    await this.inbox.catchUp(channelId);
  }

  private async onFrame(socket: WebSocket, frame: Record<string, any>): Promise<void> {
    this.deps.log.debug('chatsvc_frame', {
      profile_id: this.integration.profile_id,
      type: frame.type,
      channel_id: frame.channel_id ?? null,
      code: frame.code ?? null,
    });
    switch (frame.type) {
      case 'MessageCreated':
        return this.inbox.handle(frame.message as ChatMessage, true);
      case 'SenderKeyUpdated':
        return this.inbox.senderKeyUpdated(frame.channel_id, frame.user_id, frame.distribution);
      case 'SenderKeyRotationRequired':
      case 'MemberLeft':
        return this.host.store.requireRotation(this.id, frame.channel_id);
      case 'KeysLow':
        return this.keys.maintain();
      case 'ChannelJoined': {
        const channelId = frame.channel_id as string;
        if (this.kinds.has(channelId)) return;
        this.kinds.set(channelId, frame.scope === 'dm' ? 'dm' : 'channel');
        return this.subscribe(socket, channelId);
      }
      case 'Unsubscribed':
        if (frame.reason !== 'requested') this.kinds.delete(frame.channel_id);
        return;
      case 'Error': {
        // A ChannelJoined can arrive before the chat's read model shows the channel: try again shortly.
        const channelId = frame.channel_id as string | undefined;
        if (!channelId || !this.kinds.has(channelId) || (frame.code !== 'not_found' && frame.code !== 'forbidden'))
          return;
        const attempt = (this.subscribeRetries.get(channelId) ?? 0) + 1;
        if (attempt > SUBSCRIBE_RETRIES) {
          this.subscribeRetries.delete(channelId);
          return;
        }
        this.subscribeRetries.set(channelId, attempt);
        setTimeout(() => this.enqueue(() => this.subscribe(socket, channelId)), 200 * attempt);
        return;
      }
      case 'Subscribed':
        this.subscribeRetries.delete(frame.channel_id);
        return;
      default:
        return;
    }
  }
}
