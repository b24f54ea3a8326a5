// One bot socket per active integration (spec 1, inbound answering rules 1-5).
//
// - The socket (`ws`) always verifies chain and host name, with ORCH_CHATSVC_CA_BUNDLE's extra
//   roots; `verify_tls` false affects REST only. It takes the integration's advisory lock first:
//   across instances one holds each socket (the others show `standby`).
// - `Authenticate` with the bot token; a refusal (close 4401) is the chat service's 401: the
//   integration is revoked externally and the socket stops. Then `Subscribe` to every channel
//   and DM (paced under the chat's 10 frames per 2 s), and to those joined later
//   (`ChannelJoined`), each followed by a catch-up from its cursor.
// - Frames are handled one at a time, in order: decrypt (Double Ratchet for DMs, the first by
//   X3DH as responder; sender keys for channels), commit the state with the handled mark, then
//   maybe answer. Own and webhook messages are skipped. A channel message on an unknown chain is
//   held (200 per channel, 5 minutes) until a SenderKeyUpdated decrypts it.
// - The answer runs the profile's chat pipeline (grounded; conversation per channel and sender;
//   the per-user limits), and goes back encrypted the way the message came, in its thread,
//   mentioning the sender. A tripped limit sends a short canned reply (one per user a minute);
//   other failures send nothing (logged and counted).

import WebSocket from 'ws';
import {
  createResponderSession, createSenderKey, createSenderKeyReceiver, decryptDm, decryptGroup, E2eeError, encryptDm, encryptGroup, fingerprint,
  generateOneTimePrekeys, generateSignedPrekey, senderKeyDistribution, type DmMessage, type SenderKeyMessage, type Session,
} from '../../../crypto/e2ee/index.ts';
import type { ChatsvcAuditEvent } from '../../../domain/orchestration/chatsvc/events.ts';
import { backoffMs, conversationIdFor, COST_REPLY, LIMIT_REPLY, mentions, shouldAnswer, type ReplyMode } from '../../../domain/orchestration/chatsvc/rules.ts';
import { auditStream } from '../../../domain/orchestration/users/events.ts';
import { trustedRoots, type ChatsvcClient } from '../../../infra/chatsvc/client.ts';
import type { DecryptCommit, DeviceStore } from '../../../infra/chatsvc/device-store.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { profileById, type ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { runTurn } from '../agent-chat/pipeline.ts';
import { PREKEY_TARGET, SIGNED_PREKEY_KEEP_MS, SIGNED_PREKEY_ROTATE_MS, type ChatsvcConnector } from './connector.ts';
import { modelToolSpecs } from './tools.ts';
import { randomUUID } from 'node:crypto';

export type SocketState = 'connecting' | 'connected' | 'disconnected' | 'standby' | 'stopped';
export interface SocketView {
  state: SocketState;
  since: string | null;
  last_error: string | null;
}

export const HOLD_MAX = 200;
export const HOLD_TTL_MS = 5 * 60_000;
const SUBSCRIBE_GAP_MS = 250;
const SUBSCRIBE_RETRIES = 5;
const BATCH_MAX = 200;
const CATCHUP_PAGES = 5;
const RANDOM_FILL = () => Math.random();

interface ChatMessage {
  id: string;
  channel_id: string;
  sender_id: string;
  ciphertext: string;
  thread_root_id: string | null;
  created_at: string;
  via_webhook: boolean;
}

type Decrypted = { plaintext: string; commit: DecryptCommit; surface: 'dm' | 'channel' } | 'held' | 'dropped';

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
  private readonly usernames = new Map<string, string>();
  private readonly subscribeRetries = new Map<string, number>();
  private batch: ChatMessage[] | null = null;
  private readonly store: DeviceStore;

  constructor(private readonly connector: ChatsvcConnector, readonly integration: IntegrationRow) {
    this.store = connector.store!;
  }

  private get deps() {
    return this.connector.deps;
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
    this.enqueue(() => this.maintainKeys());
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
    if (this.locked) await this.connector.unlock(this.id);
    this.locked = false;
    this.setState('stopped');
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      if (!this.locked) {
        this.locked = await this.connector.lock(this.id).catch(() => false);
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
    if (this.locked) await this.connector.unlock(this.id);
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

  /** The integration's REST client, waiting out the chat's per-token limit (429) a few times. */
  private rest(): ChatsvcClient {
    return this.connector.client(this.integration).patient(3);
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
      socket.on('open', () => socket.send(JSON.stringify({ type: 'Authenticate', token: this.connector.botToken(this.integration) })));
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
              return this.handleMany(batch);
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
          this.enqueue(() => this.connector.revoked(this.integration, 'socket'));
          this.queue.then(() => resolve('revoked'), () => resolve('revoked'));
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
    this.queue = this.queue.then(work).then(() => {}, (error) => {
      this.deps.log.error('chatsvc_frame_failed', { profile_id: this.integration.profile_id, error: (error as Error).message });
      this.deps.metrics.countChatsvcFailure('frame');
    });
  }

  private send(socket: WebSocket, frame: Record<string, unknown>): void {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(frame));
  }

  // --- channels and catch-up ---------------------------------------------------------------------

  private async onAuthenticated(socket: WebSocket): Promise<void> {
    await this.maintainKeys();
    const channels = await this.rest().call('GET', '/api/channels');
    const dms = await this.rest().call('GET', '/api/dms');
    if (channels.status === 401 || dms.status === 401) {
      await this.connector.revoked(this.integration, 'socket');
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
    await this.catchUp(channelId);
  }

  /** Messages after the channel's cursor (or, without one, within the catch-up window), oldest first. */
  async catchUp(channelId: string): Promise<void> {
    const cursor = await this.store.cursor(this.id, channelId);
    const horizon = this.deps.clock.now().getTime() - this.deps.config.chatsvc.catchupSecs * 1000;
    const found: ChatMessage[] = [];
    let before: string | null = null;
    pages: for (let page = 0; page < CATCHUP_PAGES; page++) {
      const r = await this.rest().call('GET', `/api/channels/${channelId}/messages?limit=100${before ? `&before=${before}` : ''}`);
      if (r.status === 401) return this.connector.revoked(this.integration, 'socket');
      if (r.status !== 200) return;
      const messages = (r.body?.messages ?? []) as ChatMessage[];
      for (const m of messages) {
        if (cursor && m.id === cursor.last_message_id) break pages;
        if (!cursor && Date.parse(m.created_at) < horizon) break pages;
        found.push(m);
      }
      if (messages.length < 100) break;
      before = messages[messages.length - 1]!.id;
    }
    for (const m of found.reverse()) await this.handle(m, Date.parse(m.created_at) >= horizon);
  }

  private async onFrame(socket: WebSocket, frame: Record<string, any>): Promise<void> {
    this.deps.log.debug('chatsvc_frame', { profile_id: this.integration.profile_id, type: frame.type, channel_id: frame.channel_id ?? null, code: frame.code ?? null });
    switch (frame.type) {
      case 'MessageCreated':
        return this.handle(frame.message as ChatMessage, true);
      case 'SenderKeyUpdated': {
        if (frame.user_id === this.integration.bot_user_id || !frame.distribution) return;
        await this.store.saveReceiver(this.id, frame.channel_id, createSenderKeyReceiver(frame.distribution), this.deps.clock.now(), undefined, true);
        return this.releaseHeld(frame.channel_id);
      }
      case 'SenderKeyRotationRequired':
      case 'MemberLeft':
        return this.store.requireRotation(this.id, frame.channel_id);
      case 'KeysLow':
        return this.maintainKeys();
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
        if (!channelId || !this.kinds.has(channelId) || (frame.code !== 'not_found' && frame.code !== 'forbidden')) return;
        const attempt = (this.subscribeRetries.get(channelId) ?? 0) + 1;
        if (attempt > SUBSCRIBE_RETRIES) {
          this.subscribeRetries.delete(channelId);
          return;
        }
        this.subscribeRetries.set(channelId, attempt);
        setTimeout(() => this.enqueue(() => this.subscribe(socket, channelId)), 200 * attempt).unref();
        return;
      }
      case 'Subscribed':
        this.subscribeRetries.delete(frame.channel_id);
        return;
      default:
        return;
    }
  }

  // --- keys --------------------------------------------------------------------------------------

  /**
   * KeysLow, every connect and every supervisor pass: one-time prekeys back to 100; the signed
   * prekey rotated weekly (the old kept 30 days, so a DM begun from a bundle fetched before the
   * rotation still opens).
   */
  async maintainKeys(): Promise<void> {
    const keys = await this.store.keys(this.id);
    if (!keys) return;
    const client = this.rest();
    const now = this.deps.clock.now();
    const count = await client.call('GET', '/api/keys/prekeys/count');
    if (count.status === 200 && typeof count.body?.count === 'number' && count.body.count < PREKEY_TARGET) {
      const fresh = generateOneTimePrekeys(keys.next_prekey_id, Math.min(200, PREKEY_TARGET - count.body.count));
      keys.next_prekey_id += fresh.length;
      await this.store.saveKeys(this.id, keys, now);
      await this.store.addPrekeys(this.id, fresh);
      await client.call('POST', '/api/keys/prekeys/one-time', { prekeys: fresh.map((p) => ({ key_id: p.keyId, public_key: Array.from(p.publicKey) })) });
    }
    const current = keys.signed[0]!;
    if (now.getTime() - Date.parse(current.created_at) >= SIGNED_PREKEY_ROTATE_MS) {
      const next = generateSignedPrekey(keys.identity, keys.next_signed_id);
      keys.next_signed_id += 1;
      keys.signed = [
        { ...next, created_at: now.toISOString(), retired_at: null },
        { ...current, retired_at: now.toISOString() },
        ...keys.signed.slice(1).filter((s) => s.retired_at && now.getTime() - Date.parse(s.retired_at) < SIGNED_PREKEY_KEEP_MS),
      ];
      const before = await this.store.keys(this.id);
      // Stored before it is published: the chat never hands out a signed prekey the bot lacks.
      await this.store.saveKeys(this.id, keys, now);
      const posted = await client.call('POST', '/api/keys/prekeys/signed', { key_id: next.keyId, public_key: Array.from(next.publicKey), signature: Array.from(next.signature) });
      if (posted.status === 401) return this.connector.revoked(this.integration, 'socket');
      if (posted.status === 200 || posted.status === 201) this.deps.log.info('chatsvc_signed_prekey_rotated', { profile_id: this.integration.profile_id, key_id: next.keyId });
      else {
        // Not published: keep the old one current, so the next pass tries again.
        if (before) await this.store.saveKeys(this.id, { ...keys, signed: before.signed }, now);
        this.deps.log.warn('chatsvc_signed_prekey_rotation_failed', { profile_id: this.integration.profile_id, status: posted.status });
      }
    }
  }

  // --- inbound -----------------------------------------------------------------------------------

  /** Rule 1 onwards for one message; `answerable` false: decrypt and commit only (older than the catch-up window). */
  async handle(message: ChatMessage, answerable: boolean): Promise<void> {
    const at = message.created_at;
    if (message.sender_id === this.integration.bot_user_id || message.via_webhook) {
      await this.store.moveCursor(this.id, message.channel_id, message.id, at);
      return;
    }
    if (await this.store.handled(this.id, message.id)) return;
    const decrypted = await this.decrypt(message);
    if (decrypted === 'held') return;
    if (decrypted === 'dropped') {
      await this.store.commit(this.id, { message_id: message.id, cursor: { channel_id: message.channel_id, message_id: message.id, at } }, this.deps.clock.now());
      return;
    }
    decrypted.commit.cursor = { channel_id: message.channel_id, message_id: message.id, at };
    if (!(await this.store.commit(this.id, decrypted.commit, this.deps.clock.now()))) return;
    if (answerable) await this.answer(message, decrypted.plaintext, decrypted.surface, decrypted.commit.session);
  }

  /**
   * Several messages in order. Channel (sender-key) messages are decrypted in memory and
   * committed together (handled marks, receivers, cursors in one transaction) before any of
   * them is answered; a DM, or a message that must be held, ends the run and goes through
   * `handle` on its own.
   */
  async handleMany(messages: ChatMessage[]): Promise<void> {
    if (messages.length === 1) return this.handle(messages[0]!, true);
    const seen = await this.store.handledAmong(this.id, messages.map((m) => m.id));
    const horizon = this.deps.clock.now().getTime() - this.deps.config.chatsvc.catchupSecs * 1000;
    let run: { ids: string[]; receivers: Map<string, { channel_id: string; receiver: import('../../../crypto/e2ee/index.ts').SenderKeyReceiver }>; cursors: Map<string, { channel_id: string; message_id: string; at: string }>; answers: { message: ChatMessage; text: string }[] } | null = null;
    const cache = new Map<string, import('../../../crypto/e2ee/index.ts').SenderKeyReceiver | null>();
    const flush = async () => {
      if (!run) return;
      const current = run;
      run = null;
      const marked = await this.store.commitBatch(this.id, { message_ids: current.ids, receivers: [...current.receivers.values()], cursors: [...current.cursors.values()] }, this.deps.clock.now());
      for (const a of current.answers) if (marked.has(a.message.id) && Date.parse(a.message.created_at) >= horizon) await this.answer(a.message, a.text, 'channel');
    };
    for (const message of messages) {
      if (seen.has(message.id)) continue;
      run ??= { ids: [], receivers: new Map(), cursors: new Map(), answers: [] };
      if (message.sender_id === this.integration.bot_user_id || message.via_webhook) {
        run.cursors.set(message.channel_id, { channel_id: message.channel_id, message_id: message.id, at: message.created_at });
        continue;
      }
      let wire: Record<string, any> | null = null;
      try {
        wire = JSON.parse(message.ciphertext);
      } catch {
        wire = null;
      }
      const chainId = wire?.sk === true ? Number(wire.message?.chain_id) : NaN;
      const key = `${message.channel_id}:${message.sender_id}:${chainId}`;
      if (!cache.has(key) && Number.isFinite(chainId)) cache.set(key, await this.store.receiver(this.id, message.channel_id, message.sender_id, chainId));
      const receiver = cache.get(key);
      if (!receiver) {
        // A DM, an unknown chain (fetch, maybe hold) or something unreadable: on its own, in order.
        await flush();
        cache.delete(key);
        await this.handle(message, Date.parse(message.created_at) >= horizon);
        continue;
      }
      run.ids.push(message.id);
      run.cursors.set(message.channel_id, { channel_id: message.channel_id, message_id: message.id, at: message.created_at });
      try {
        const text = new TextDecoder().decode(decryptGroup(receiver, wire as SenderKeyMessage));
        run.receivers.set(key, { channel_id: message.channel_id, receiver });
        run.answers.push({ message, text });
      } catch (error) {
        if (!(error instanceof E2eeError)) throw error;
        this.deps.log.warn('chatsvc_decrypt_failed', { profile_id: this.integration.profile_id, channel_id: message.channel_id, code: error.code });
      }
    }
    await flush();
  }

  private async decrypt(message: ChatMessage): Promise<Decrypted> {
    let wire: Record<string, any>;
    try {
      wire = JSON.parse(message.ciphertext);
    } catch {
      return 'dropped';
    }
    try {
      if (wire?.sk === true) return await this.decryptChannel(message, wire as SenderKeyMessage);
      if (wire?.header) return await this.decryptDirect(message, wire as DmMessage);
      return 'dropped';
    } catch (error) {
      if (!(error instanceof E2eeError)) throw error;
      this.deps.log.warn('chatsvc_decrypt_failed', { profile_id: this.integration.profile_id, channel_id: message.channel_id, code: error.code });
      return 'dropped';
    }
  }

  private async decryptDirect(message: ChatMessage, wire: DmMessage): Promise<Decrypted> {
    const peer = message.sender_id;
    const existing = await this.store.session(this.id, peer);
    if (existing) {
      try {
        const plaintext = decryptDm(existing.session, wire);
        return { plaintext: new TextDecoder().decode(plaintext), surface: 'dm', commit: { message_id: message.id, session: { peer_user_id: peer, peer_fingerprint: existing.peer_fingerprint, session: existing.session } } };
      } catch (error) {
        if (!wire.x3dh) throw error;
      }
    }
    if (!wire.x3dh) return 'dropped';
    // A first message: X3DH as responder, with the prekeys it names.
    const keys = (await this.store.keys(this.id))!;
    const signed = keys.signed.find((s) => s.keyId === wire.x3dh!.signed_prekey_id);
    if (!signed) return 'dropped';
    const otpId = wire.x3dh.one_time_prekey_id;
    const oneTime = otpId == null ? null : await this.store.prekey(this.id, otpId);
    if (otpId != null && !oneTime) return 'dropped';
    const { session, plaintext } = createResponderSession(keys.identity, signed, oneTime, wire);
    const peerFingerprint = fingerprint(session.remoteIdentityKey);
    if (existing && existing.peer_fingerprint !== peerFingerprint) await this.identityChanged(peer, existing.peer_fingerprint, peerFingerprint);
    return {
      plaintext: new TextDecoder().decode(plaintext), surface: 'dm',
      commit: { message_id: message.id, session: { peer_user_id: peer, peer_fingerprint: peerFingerprint, session }, used_prekey_id: otpId ?? null },
    };
  }

  private async identityChanged(peer: string, oldFingerprint: string, newFingerprint: string): Promise<void> {
    const profile = await profileById(this.deps.db, this.integration.profile_id);
    const event: ChatsvcAuditEvent = {
      type: 'ChatsvcIdentityKeyChanged',
      data: {
        profile_id: this.integration.profile_id, profile_slug: profile?.slug ?? '', integration_id: this.id, peer_user_id: peer,
        old_fingerprint: oldFingerprint, new_fingerprint: newFingerprint, at: this.deps.clock.now().toISOString(),
      },
    };
    await this.deps.commands.record(auditStream(randomUUID()), event, { actor: { kind: 'system', id: 'chatsvc-connector' }, correlationId: randomUUID() });
  }

  private async decryptChannel(message: ChatMessage, wire: SenderKeyMessage): Promise<Decrypted> {
    const chainId = Number(wire.message?.chain_id);
    let receiver = await this.store.receiver(this.id, message.channel_id, message.sender_id, chainId);
    if (!receiver) {
      // An unknown chain: fetch the channel's sender keys again before holding the message.
      await this.refreshSenderKeys(message.channel_id);
      receiver = await this.store.receiver(this.id, message.channel_id, message.sender_id, chainId);
    }
    if (!receiver) {
      await this.store.hold(this.id, message.channel_id, message.id, message as unknown as Record<string, unknown>, this.deps.clock.now(), HOLD_MAX, HOLD_TTL_MS);
      return 'held';
    }
    const plaintext = decryptGroup(receiver, wire);
    return { plaintext: new TextDecoder().decode(plaintext), surface: 'channel', commit: { message_id: message.id, receiver: { channel_id: message.channel_id, sender_id: message.sender_id, receiver } } };
  }

  private async refreshSenderKeys(channelId: string): Promise<void> {
    const r = await this.rest().call('GET', `/api/channels/${channelId}/sender-keys`);
    if (r.status !== 200) return;
    const now = this.deps.clock.now();
    for (const entry of (r.body?.sender_keys ?? []) as { user_id: string; distribution: any }[]) {
      if (entry.user_id === this.integration.bot_user_id) continue;
      try {
        await this.store.saveReceiver(this.id, channelId, createSenderKeyReceiver(entry.distribution), now, undefined, true);
      } catch (error) {
        if (!(error instanceof E2eeError)) throw error;
      }
    }
  }

  private async releaseHeld(channelId: string): Promise<void> {
    const now = this.deps.clock.now();
    for (const held of await this.store.held(this.id, channelId, now, HOLD_TTL_MS)) {
      await this.handle(held.message as ChatMessage, now.getTime() - Date.parse(held.message.created_at) <= this.deps.config.chatsvc.catchupSecs * 1000);
    }
  }

  // --- answering ---------------------------------------------------------------------------------

  private async answer(message: ChatMessage, text: string, surface: 'dm' | 'channel', session?: DecryptCommit['session']): Promise<void> {
    const mentioned = surface === 'channel' && mentions(text, this.integration.bot_username);
    // A channel message without a mention is never answered, whatever the mode: no lookup needed.
    if (surface === 'channel' && !mentioned) return;
    const profile = await profileById(this.deps.db, this.integration.profile_id);
    if (!profile || !profile.enabled) return;
    if (!shouldAnswer(profile.channel_reply_mode as ReplyMode, surface, mentioned)) return;
    const reply = await this.turn(profile, message, text);
    if (reply === null) return;
    await this.sendReply(message, surface, reply, session);
  }

  /** The chat pipeline's answer, a canned reply when a per-user limit trips, or null (nothing is sent). */
  private async turn(profile: ProfileRow, message: ChatMessage, text: string): Promise<string | null> {
    const sender = message.sender_id;
    const context = { actor: { kind: 'system' as const, id: 'chatsvc-connector' }, correlationId: message.id };
    const derived = conversationIdFor(this.id, message.channel_id, sender);
    const named = (await this.store.conversation(this.id, message.channel_id, sender)) ?? derived;
    const useTools = await this.connector.toolsAvailable(profile);
    try {
      const result = await runTurn(this.deps, {
        surface: 'chatsvc', kind: 'chatsvc', clientLimit: null, caller: `chatsvc:${this.id}:${sender}`,
        profile: async () => profile, owner: { kind: 'chatsvc_user', id: `${this.id}:${sender}` }, visitorId: null,
        conversationId: named, newConversationId: () => derived, message: text, maxChars: this.deps.config.publicChat.maxChars, context,
        ownerCostCap: profile.cost_cap_daily_cents,
        ...(useTools ? { tools: { specs: modelToolSpecs(), execute: (call) => this.connector.modelTool(profile, call.name, call.arguments, context) } } : {}),
      });
      if (result.conversation_id !== named) await this.store.saveConversation(this.id, message.channel_id, sender, result.conversation_id);
      return result.message;
    } catch (error) {
      const limit = error instanceof ApiError && (error.status === 429 || error.code === 'cost_cap_reached');
      if (!limit) {
        this.deps.log.warn('chatsvc_answer_failed', { profile_id: profile.id, error: error instanceof ApiError ? error.code : (error as Error).message });
        this.deps.metrics.countChatsvcFailure('answer');
        return null;
      }
      const once = await this.deps.limiter.consume(`chatsvc:canned:${this.id}:${sender}`, { limit: 1, windowMs: 60_000 });
      return once.allowed ? (error.status === 429 ? LIMIT_REPLY : COST_REPLY) : null;
    }
  }

  private async username(userId: string): Promise<string | null> {
    if (this.usernames.has(userId)) return this.usernames.get(userId)!;
    const r = await this.rest().call('GET', `/api/users/${userId}`);
    const name = r.status === 200 && typeof r.body?.username === 'string' ? r.body.username : null;
    if (name) this.usernames.set(userId, name);
    return name;
  }

  /** The reply, encrypted the way the message came, in its thread, mentioning the sender. */
  /** `committed`: the DM session as the decrypt just stored it (saves reading it back). */
  async sendReply(message: ChatMessage, surface: 'dm' | 'channel', text: string, committed?: DecryptCommit['session']): Promise<void> {
    const now = this.deps.clock.now();
    const client = this.rest();
    let ciphertext: string;
    let body: Record<string, unknown>;
    if (surface === 'dm') {
      const stored = committed ? { session: committed.session, peer_fingerprint: committed.peer_fingerprint } : await this.store.session(this.id, message.sender_id);
      if (!stored) return;
      const wire = encryptDm(stored.session as Session, new TextEncoder().encode(text));
      await this.store.saveSession(this.id, message.sender_id, stored.peer_fingerprint, stored.session, now);
      ciphertext = JSON.stringify(wire);
      body = { ciphertext, ...(message.thread_root_id ? { thread_root_id: message.thread_root_id } : {}) };
    } else {
      const name = await this.username(message.sender_id);
      const content = name ? `@${name} ${text}` : text;
      let own = await this.store.ownSenderKey(this.id, message.channel_id);
      if (!own || (await this.store.rotationRequired(this.id, message.channel_id))) {
        own = createSenderKey(this.integration.bot_user_id);
        const posted = await client.call('POST', `/api/channels/${message.channel_id}/sender-keys`, { chain_id: own.chainId, distribution: senderKeyDistribution(own) });
        if (posted.status === 401) return this.connector.revoked(this.integration, 'reply');
        if (posted.status !== 201 && posted.status !== 200) {
          this.deps.log.warn('chatsvc_sender_key_post_failed', { profile_id: this.integration.profile_id, status: posted.status });
          return;
        }
      }
      const wire = encryptGroup(own, new TextEncoder().encode(content));
      await this.store.saveOwnSenderKey(this.id, message.channel_id, own, now);
      ciphertext = JSON.stringify(wire);
      body = { ciphertext, thread_root_id: message.thread_root_id ?? message.id, mentions: [message.sender_id] };
    }
    const posted = await client.call('POST', `/api/channels/${message.channel_id}/messages`, body);
    if (posted.status === 401) return this.connector.revoked(this.integration, 'reply');
    if (posted.status !== 201) this.deps.log.warn('chatsvc_reply_failed', { profile_id: this.integration.profile_id, status: posted.status });
  }
}
