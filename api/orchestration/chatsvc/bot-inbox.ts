// The bot's inbox (spec 1, inbound answering rule 1): each message decrypted (Double Ratchet for
// DMs, the first by X3DH as responder; sender keys for channels), its state committed with the
// handled mark and the channel's cursor, then handed to the answer. Own and webhook messages
// are skipped. A channel message on an unknown chain is held (200 per channel, 5 minutes) until
// a SenderKeyUpdated decrypts it. The catch-up reads what was posted after a channel's cursor.

import {
  createResponderSession,
  createSenderKeyReceiver,
  decryptDm,
  decryptGroup,
  E2eeError,
  fingerprint,
  type DmMessage,
  type SenderKeyDistribution,
  type SenderKeyMessage,
  type SenderKeyReceiver,
} from '../../../crypto/e2ee/index.ts';
import type { DecryptCommit } from '../../../infra/chatsvc/device-store.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { restOf, type BotHost } from './bot-host.ts';

export const HOLD_MAX = 200;
export const HOLD_TTL_MS = 5 * 60_000;
const CATCHUP_PAGES = 5;

/** A message as the chat service sends it (socket frame or listing). */
export interface ChatMessage {
  id: string;
  channel_id: string;
  sender_id: string;
  ciphertext: string;
  thread_root_id: string | null;
  created_at: string;
  via_webhook: boolean;
}

/** What the inbox hands on: a decrypted message to answer (or not). */
export type Answer = (
  message: ChatMessage,
  text: string,
  surface: 'dm' | 'channel',
  session?: DecryptCommit['session'],
) => Promise<void>;

type Decrypted = { plaintext: string; commit: DecryptCommit; surface: 'dm' | 'channel' } | 'held' | 'dropped';

export class BotInbox {
  constructor(
    private readonly host: BotHost,
    private readonly integration: IntegrationRow,
    private readonly answer: Answer,
  ) {}

  private get deps() {
    return this.host.deps;
  }

  private get store() {
    return this.host.store;
  }

  private get id() {
    return this.integration.integration_id;
  }

  /** Messages after the channel's cursor (or, without one, within the catch-up window), oldest first. */
  async catchUp(channelId: string): Promise<void> {
    const cursor = await this.store.cursor(this.id, channelId);
    const horizon = this.deps.clock.now().getTime() - this.deps.config.chatsvc.catchupSecs * 1000;
    const found: ChatMessage[] = [];
    let before: string | null = null;
    pages: for (let page = 0; page < CATCHUP_PAGES; page++) {
      const r = await restOf(this.host, this.integration).call(
        'GET',
        `/api/channels/${channelId}/messages?limit=100${before ? `&before=${before}` : ''}`,
      );
      if (r.status === 401) return this.host.revoked(this.integration, 'socket');
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
      await this.store.commit(
        this.id,
        { message_id: message.id, cursor: { channel_id: message.channel_id, message_id: message.id, at } },
        this.deps.clock.now(),
      );
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
    const seen = await this.store.handledAmong(
      this.id,
      messages.map((m) => m.id),
    );
    const horizon = this.deps.clock.now().getTime() - this.deps.config.chatsvc.catchupSecs * 1000;
    let run: {
      ids: string[];
      receivers: Map<string, { channel_id: string; receiver: SenderKeyReceiver }>;
      cursors: Map<string, { channel_id: string; message_id: string; at: string }>;
      answers: { message: ChatMessage; text: string }[];
    } | null = null;
    const cache = new Map<string, SenderKeyReceiver | null>();
    const flush = async () => {
      if (!run) return;
      const current = run;
      run = null;
      const marked = await this.store.commitBatch(
        this.id,
        {
          message_ids: current.ids,
          receivers: [...current.receivers.values()],
          cursors: [...current.cursors.values()],
        },
        this.deps.clock.now(),
      );
      for (const a of current.answers)
        if (marked.has(a.message.id) && Date.parse(a.message.created_at) >= horizon)
          await this.answer(a.message, a.text, 'channel');
    };
    for (const message of messages) {
      if (seen.has(message.id)) continue;
      run ??= { ids: [], receivers: new Map(), cursors: new Map(), answers: [] };
      if (message.sender_id === this.integration.bot_user_id || message.via_webhook) {
        run.cursors.set(message.channel_id, {
          channel_id: message.channel_id,
          message_id: message.id,
          at: message.created_at,
        });
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
      if (!cache.has(key) && Number.isFinite(chainId))
        cache.set(key, await this.store.receiver(this.id, message.channel_id, message.sender_id, chainId));
      const receiver = cache.get(key);
      if (!receiver) {
        // A DM, an unknown chain (fetch, maybe hold) or something unreadable: on its own, in order.
        await flush();
        cache.delete(key);
        await this.handle(message, Date.parse(message.created_at) >= horizon);
        continue;
      }
      run.ids.push(message.id);
      run.cursors.set(message.channel_id, {
        channel_id: message.channel_id,
        message_id: message.id,
        at: message.created_at,
      });
      try {
        const text = new TextDecoder().decode(decryptGroup(receiver, wire as SenderKeyMessage));
        run.receivers.set(key, { channel_id: message.channel_id, receiver });
        run.answers.push({ message, text });
      } catch (error) {
        if (!(error instanceof E2eeError)) throw error;
        this.deps.log.warn('chatsvc_decrypt_failed', {
          profile_id: this.integration.profile_id,
          channel_id: message.channel_id,
          code: error.code,
        });
      }
    }
    await flush();
  }

  /** A peer's new sender key (SenderKeyUpdated): stored, then the messages held for it are released. */
  async senderKeyUpdated(
    channelId: string,
    userId: string,
    distribution: SenderKeyDistribution | undefined,
  ): Promise<void> {
    if (userId === this.integration.bot_user_id || !distribution) return;
    await this.store.saveReceiver(
      this.id,
      channelId,
      createSenderKeyReceiver(distribution),
      this.deps.clock.now(),
      undefined,
      true,
    );
    return this.releaseHeld(channelId);
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
      this.deps.log.warn('chatsvc_decrypt_failed', {
        profile_id: this.integration.profile_id,
        channel_id: message.channel_id,
        code: error.code,
      });
      return 'dropped';
    }
  }

  private async decryptDirect(message: ChatMessage, wire: DmMessage): Promise<Decrypted> {
    const peer = message.sender_id;
    const existing = await this.store.session(this.id, peer);
    if (existing) {
      try {
        const plaintext = decryptDm(existing.session, wire);
        return {
          plaintext: new TextDecoder().decode(plaintext),
          surface: 'dm',
          commit: {
            message_id: message.id,
            session: { peer_user_id: peer, peer_fingerprint: existing.peer_fingerprint, session: existing.session },
          },
        };
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
    if (existing && existing.peer_fingerprint !== peerFingerprint)
      await this.host.identityChanged(this.integration, peer, existing.peer_fingerprint, peerFingerprint);
    return {
      plaintext: new TextDecoder().decode(plaintext),
      surface: 'dm',
      commit: {
        message_id: message.id,
        session: { peer_user_id: peer, peer_fingerprint: peerFingerprint, session },
        used_prekey_id: otpId ?? null,
      },
    };
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
      await this.store.hold(
        this.id,
        message.channel_id,
        message.id,
        message as unknown as Record<string, unknown>,
        this.deps.clock.now(),
        HOLD_MAX,
        HOLD_TTL_MS,
      );
      return 'held';
    }
    const plaintext = decryptGroup(receiver, wire);
    return {
      plaintext: new TextDecoder().decode(plaintext),
      surface: 'channel',
      commit: {
        message_id: message.id,
        receiver: { channel_id: message.channel_id, sender_id: message.sender_id, receiver },
      },
    };
  }

  private async refreshSenderKeys(channelId: string): Promise<void> {
    const r = await restOf(this.host, this.integration).call('GET', `/api/channels/${channelId}/sender-keys`);
    if (r.status !== 200) return;
    const now = this.deps.clock.now();
    for (const entry of (r.body?.sender_keys ?? []) as { user_id: string; distribution: any }[]) {
      if (entry.user_id === this.integration.bot_user_id) continue;
      try {
        await this.store.saveReceiver(
          this.id,
          channelId,
          createSenderKeyReceiver(entry.distribution),
          now,
          undefined,
          true,
        );
      } catch (error) {
        if (!(error instanceof E2eeError)) throw error;
      }
    }
  }

  private async releaseHeld(channelId: string): Promise<void> {
    const now = this.deps.clock.now();
    for (const held of await this.store.held(this.id, channelId, now, HOLD_TTL_MS)) {
      await this.handle(
        held.message as ChatMessage,
        now.getTime() - Date.parse(held.message.created_at) <= this.deps.config.chatsvc.catchupSecs * 1000,
      );
    }
  }
}
