// The bot's answer to one decrypted message (spec 1, inbound answering rules 2-5): whether to
// answer (reply mode, mentions), the profile's chat pipeline (grounded; a conversation per
// channel and sender; the per-user limits), and the reply, encrypted the way the message came,
// in its thread, mentioning the sender. A tripped limit sends a short canned reply (one per
// user a minute); other failures send nothing (logged and counted).

import {
  createSenderKey,
  encryptDm,
  encryptGroup,
  senderKeyDistribution,
  type Session,
} from '../../../crypto/e2ee/index.ts';
import {
  conversationIdFor,
  COST_REPLY,
  LIMIT_REPLY,
  mentions,
  shouldAnswer,
  type ReplyMode,
} from '../../../domain/orchestration/chatsvc/rules.ts';
import type { DecryptCommit } from '../../../infra/chatsvc/device-store.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { profileById, type ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { runTurn } from '../agent-chat/commands.ts';
import { restOf, type BotHost } from './bot-host.ts';
import type { ChatMessage } from './bot-inbox.ts';

export class BotReply {
  private readonly usernames = new Map<string, string>();

  constructor(
    private readonly host: BotHost,
    private readonly integration: IntegrationRow,
  ) {}

  private get deps() {
    return this.host.deps;
  }

  private get id() {
    return this.integration.integration_id;
  }

  /** `session`: the DM session as the decrypt just stored it (saves reading it back). */
  async answer(
    message: ChatMessage,
    text: string,
    surface: 'dm' | 'channel',
    session?: DecryptCommit['session'],
  ): Promise<void> {
    const mentioned = surface === 'channel' && mentions(text, this.integration.bot_username);
    // A channel message without a mention is never answered, whatever the mode: no lookup needed.
    if (surface === 'channel' && !mentioned) return;
    const profile = await profileById(this.deps.db, this.integration.profile_id);
    if (!profile || !profile.enabled) return;
    if (!shouldAnswer(profile.channel_reply_mode as ReplyMode, surface, mentioned)) return;
    const reply = await this.turn(profile, message, text);
    if (reply === null) return;
    await this.send(message, surface, reply, session);
  }

  /** The chat pipeline's answer, a canned reply when a per-user limit trips, or null (nothing is sent). */
  private async turn(profile: ProfileRow, message: ChatMessage, text: string): Promise<string | null> {
    const sender = message.sender_id;
    const context = { actor: { kind: 'system' as const, id: 'chatsvc-connector' }, correlationId: message.id };
    const derived = conversationIdFor(this.id, message.channel_id, sender);
    const named = (await this.host.store.conversation(this.id, message.channel_id, sender)) ?? derived;
    const tools = await this.host.modelTools(profile, context);
    try {
      const result = await runTurn(this.deps, {
        surface: 'chatsvc',
        kind: 'chatsvc',
        clientLimit: null,
        caller: `chatsvc:${this.id}:${sender}`,
        profile: async () => profile,
        owner: { kind: 'chatsvc_user', id: `${this.id}:${sender}` },
        visitorId: null,
        conversationId: named,
        newConversationId: () => derived,
        message: text,
        maxChars: this.deps.config.publicChat.maxChars,
        context,
        ownerCostCap: profile.cost_cap_daily_cents,
        ...(tools ? { tools } : {}),
      });
      if (result.conversation_id !== named)
        await this.host.store.saveConversation(this.id, message.channel_id, sender, result.conversation_id);
      return result.message;
    } catch (error) {
      const limit = error instanceof ApiError && (error.status === 429 || error.code === 'cost_cap_reached');
      if (!limit) {
        this.deps.log.warn('chatsvc_answer_failed', {
          profile_id: profile.id,
          error: error instanceof ApiError ? error.code : (error as Error).message,
        });
        this.deps.metrics.countChatsvcFailure('answer');
        return null;
      }
      const once = await this.deps.limiter.consume(`chatsvc:canned:${this.id}:${sender}`, {
        limit: 1,
        windowMs: 60_000,
      });
      return once.allowed ? (error.status === 429 ? LIMIT_REPLY : COST_REPLY) : null;
    }
  }

  private async username(userId: string): Promise<string | null> {
    if (this.usernames.has(userId)) return this.usernames.get(userId)!;
    const r = await restOf(this.host, this.integration).call('GET', `/api/users/${userId}`);
    const name = r.status === 200 && typeof r.body?.username === 'string' ? r.body.username : null;
    if (name) this.usernames.set(userId, name);
    return name;
  }

  /** The reply, encrypted the way the message came, in its thread, mentioning the sender. */
  async send(
    message: ChatMessage,
    surface: 'dm' | 'channel',
    text: string,
    committed?: DecryptCommit['session'],
  ): Promise<void> {
    const store = this.host.store;
    const now = this.deps.clock.now();
    const client = restOf(this.host, this.integration);
    let ciphertext: string;
    let body: Record<string, unknown>;
    if (surface === 'dm') {
      const stored = committed
        ? { session: committed.session, peer_fingerprint: committed.peer_fingerprint }
        : await store.session(this.id, message.sender_id);
      if (!stored) return;
      const wire = encryptDm(stored.session as Session, new TextEncoder().encode(text));
      await store.saveSession(this.id, message.sender_id, stored.peer_fingerprint, stored.session, now);
      ciphertext = JSON.stringify(wire);
      body = { ciphertext, ...(message.thread_root_id ? { thread_root_id: message.thread_root_id } : {}) };
    } else {
      const name = await this.username(message.sender_id);
      const content = name ? `@${name} ${text}` : text;
      let own = await store.ownSenderKey(this.id, message.channel_id);
      if (!own || (await store.rotationRequired(this.id, message.channel_id))) {
        own = createSenderKey(this.integration.bot_user_id);
        const posted = await client.call('POST', `/api/channels/${message.channel_id}/sender-keys`, {
          chain_id: own.chainId,
          distribution: senderKeyDistribution(own),
        });
        if (posted.status === 401) return this.host.revoked(this.integration, 'reply');
        if (posted.status !== 201 && posted.status !== 200) {
          this.deps.log.warn('chatsvc_sender_key_post_failed', {
            profile_id: this.integration.profile_id,
            status: posted.status,
          });
          return;
        }
      }
      const wire = encryptGroup(own, new TextEncoder().encode(content));
      await store.saveOwnSenderKey(this.id, message.channel_id, own, now);
      ciphertext = JSON.stringify(wire);
      body = { ciphertext, thread_root_id: message.thread_root_id ?? message.id, mentions: [message.sender_id] };
    }
    const posted = await client.call('POST', `/api/channels/${message.channel_id}/messages`, body);
    if (posted.status === 401) return this.host.revoked(this.integration, 'reply');
    if (posted.status !== 201)
      this.deps.log.warn('chatsvc_reply_failed', { profile_id: this.integration.profile_id, status: posted.status });
  }
}
