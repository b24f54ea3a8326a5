// The chat-service connector (spec 1, "Chat-service integration"): connect, status, test,
// delete, the tools, and the bot sockets (./bot.ts) with their supervisor. One per process; the
// routes (./routes.ts) and the health route use it.
//
// - The integration key (ORCH_INTEGRATION_ENCRYPTION_KEY) seals the bot token in the log, the
//   webhook tokens and the device state; without it the connector is `disabled`.
// - A chat-service 401 to the bot token, wherever it is met (test, tool, socket Authenticate, a
//   reply), appends IntegrationRevokedExternally; the integration then answers 409
//   `integration_disabled` until a fresh connect. A chat 401 is never passed on as ours.
// - REST calls of an integration use its own undici Agent (verify_tls per integration); the
//   socket always verifies (./bot.ts).

import { randomUUID } from 'node:crypto';
import { fingerprint, generateIdentityKeyPair, generateOneTimePrekeys, generateSignedPrekey, createSenderKey, senderKeyDistribution, type SenderKeyState } from '../../../crypto/e2ee/index.ts';
import { openSecret, parseKeyHex, sealSecret } from '../../../crypto/seal.ts';
import {
  CHATSVC_AUDIT_EVENT_TYPES, type ChatsvcAuditEvent, type ToolSource, integrationStream,
} from '../../../domain/orchestration/chatsvc/events.ts';
import { botTokenSealContext, integrationDecider } from '../../../domain/orchestration/chatsvc/decider.ts';
import { BOT_TOKEN, botsHealth, normaliseInstanceUrl, TOKEN_PREFIX_CHARS } from '../../../domain/orchestration/chatsvc/rules.ts';
import { auditStream } from '../../../domain/orchestration/users/events.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { ChatsvcClient, ChatsvcUnreachable, createDispatcher, type ChatsvcReply } from '../../../infra/chatsvc/client.ts';
import { DeviceStore, type DeviceKeys } from '../../../infra/chatsvc/device-store.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { PoolClient } from '../../../infra/db/pool.ts';
import { activeIntegrations, integrationOf, type IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { OrchDeps } from '../deps.ts';
import { BotSocket, type SocketView } from './bot.ts';
import { modelToolSpecs, TOOL_INPUTS, type ToolName, type ToolResult } from './tools.ts';

export type ConnectorDeps = Pick<OrchDeps, 'commands' | 'db' | 'clock' | 'config' | 'log' | 'limiter' | 'models' | 'sealKey' | 'metrics'>;

/** One-time prekeys registered at connect and kept topped up to. */
export const PREKEY_TARGET = 100;
/** A signed prekey is replaced after a week; the old one is kept 30 days more. */
export const SIGNED_PREKEY_ROTATE_MS = 7 * 86_400_000;
export const SIGNED_PREKEY_KEEP_MS = 30 * 86_400_000;
/** The chat service's pace for one webhook, and how long a send waits for its turn. */
const WEBHOOK_INTERVAL_MS = 1050;
const WEBHOOK_MAX_WAIT_MS = 5000;

export interface ConnectRequest {
  instance_url: string;
  provision_token: string;
  bot_username: string;
  display_name: string;
  default_community_id?: string | undefined;
  default_community_role?: 'member' | undefined;
  expires_in_hours?: number | undefined;
  verify_tls?: boolean | undefined;
}

/** The seconds a chat 429 asks to wait (its Retry-After, 1 to 5). */
const chatRetryAfter = (reply: ChatsvcReply) => Math.min(5, Math.max(1, Math.ceil(Number(reply.headers.get('retry-after')) || 1)));

export const integrationDisabled = (status: number | null = null) =>
  new ApiError(409, 'integration_disabled', 'the chat service refused this integration\'s bot token; connect again with a fresh provision token', status === null ? {} : { chatsvc_status: status });

/** The name is a bot whose end-to-end identity this profile does not hold: it cannot speak for it. */
export const botIdentityTaken = (username: string) =>
  new ApiError(409, 'bot_identity_taken', `the chat-service bot ${username} already registered its end-to-end keys, and this profile does not hold them `
    + '(they were destroyed when its integration was deleted, or the bot is another integration\'s); choose another bot_username, or have a chat-service admin delete that bot first');

export const mintFailed = (detail: string, status: number | null) =>
  new ApiError(502, 'chatsvc_mint_bot_failed', 'provisioning the bot on the chat service failed', { detail, chatsvc_status: status });

/** A chat-service reply that is not what a step needed. */
class StepFailed extends Error {
  constructor(readonly step: string, readonly reply: ChatsvcReply) {
    super(`${step}: the chat service answered ${reply.status}${typeof reply.body?.error === 'string' ? ` (${String(reply.body.error).slice(0, 200)})` : ''}`);
  }
}

async function expect(step: string, reply: Promise<ChatsvcReply>, ok: number[] = [200, 201]): Promise<any> {
  const r = await reply;
  if (!ok.includes(r.status)) throw new StepFailed(step, r);
  return r.body;
}

export interface IntegrationStatusView {
  instance_url: string;
  bot_user_id: string;
  bot_username: string;
  token_prefix: string;
  token_expires_at: string | null;
  status: 'active' | 'revoked_externally';
  verify_tls: boolean;
  identity_fingerprint: string;
  connected_at: string;
  socket: SocketView;
}

export class ChatsvcConnector {
  readonly key: Uint8Array | null;
  readonly store: DeviceStore | null;
  private readonly dispatchers = new Map<string, { verifyTls: boolean; dispatcher: ReturnType<typeof createDispatcher> }>();
  private readonly bots = new Map<string, BotSocket>();
  private readonly webhookPace = new Map<string, number>();
  private supervisor: NodeJS.Timeout | null = null;
  private lockClient: PoolClient | null = null;
  private running = false;
  private ticking: Promise<void> | null = null;

  constructor(readonly deps: ConnectorDeps) {
    const hex = deps.config.chatsvc.integrationKeyHex;
    this.key = hex ? parseKeyHex(hex) : null;
    this.store = this.key ? new DeviceStore(deps.db, this.key) : null;
  }

  get enabled(): boolean {
    return this.key !== null;
  }

  private requireKey(): { key: Uint8Array; store: DeviceStore } {
    if (!this.key || !this.store) throw new ApiError(503, 'integration_key_missing', 'the chat-service connector needs ORCH_INTEGRATION_ENCRYPTION_KEY (or ORCH_INTEGRATION_ENCRYPTION_KEY_FILE)');
    return { key: this.key, store: this.store };
  }

  /** A REST client for an instance with this TLS setting (the connect and communities calls). */
  private transient(instanceUrl: string, verifyTls: boolean): ChatsvcClient {
    if (!verifyTls) this.deps.log.warn('chatsvc_tls_verification_off', { instance_url: instanceUrl });
    return new ChatsvcClient(normaliseInstanceUrl(instanceUrl), createDispatcher({ verifyTls, caBundlePem: this.deps.config.chatsvc.caBundle?.pem ?? null }));
  }

  /** The integration's own client: its undici Agent, its bot token. */
  client(integration: IntegrationRow): ChatsvcClient {
    let entry = this.dispatchers.get(integration.integration_id);
    if (!entry || entry.verifyTls !== integration.verify_tls) {
      if (!integration.verify_tls) this.deps.log.warn('chatsvc_tls_verification_off', { profile_id: integration.profile_id, instance_url: integration.instance_url });
      entry = { verifyTls: integration.verify_tls, dispatcher: createDispatcher({ verifyTls: integration.verify_tls, caBundlePem: this.deps.config.chatsvc.caBundle?.pem ?? null }) };
      this.dispatchers.set(integration.integration_id, entry);
    }
    return new ChatsvcClient(integration.instance_url, entry.dispatcher, { botToken: this.botToken(integration) });
  }

  botToken(integration: IntegrationRow): string {
    const { key } = this.requireKey();
    return openSecret(key, integration.token_sealed, botTokenSealContext(integration.profile_id, integration.integration_id));
  }

  async integration(profileId: string): Promise<IntegrationRow | null> {
    return integrationOf(this.deps.db, profileId);
  }

  // --- connect -------------------------------------------------------------------------------

  /** Lists the communities the provision token may join a bot to; nothing is stored. */
  async communities(body: { instance_url: string; provision_token: string; verify_tls?: boolean | undefined }): Promise<unknown> {
    this.requireKey();
    const client = this.transient(body.instance_url, body.verify_tls ?? true);
    try {
      const r = await client.withProvisionToken(body.provision_token).call('GET', '/api/admin/communities');
      if (r.status !== 200) throw new StepFailed('list communities', r);
      return r.body;
    } catch (error) {
      throw this.connectFailure(error);
    }
  }

  private connectFailure(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (error instanceof ChatsvcUnreachable) return mintFailed(error.detail, null);
    if (error instanceof StepFailed) return mintFailed(error.message, error.reply.status);
    this.deps.log.error('chatsvc_connect_failed', { error: (error as Error).message });
    return mintFailed(`unexpected failure: ${(error as Error).message}`, null);
  }

  async connect(profile: ProfileRow, body: ConnectRequest, context: CommandContext): Promise<IntegrationStatusView> {
    const { store, key } = this.requireKey();
    if (!BOT_TOKEN.test(body.provision_token)) throw new ApiError(400, 'validation_failed', 'provision_token must be cb_ followed by 64 lowercase hex characters');
    const existing = await this.integration(profile.id);
    if (existing?.status === 'active') throw new ApiError(409, 'already_connected', 'this profile already has an active chat-service integration; delete it first');
    const verifyTls = body.verify_tls ?? true;
    const base = this.transient(body.instance_url, verifyTls);
    const provision = base.withProvisionToken(body.provision_token);
    const now = this.deps.clock.now();
    // A revoked integration keeps its device: the same bot on the same instance comes back with it.
    const keptKeys = existing && existing.instance_url === base.baseUrl && existing.bot_username === body.bot_username
      ? await store.keys(existing.integration_id) : null;
    const reusable = existing && keptKeys ? { botId: existing.bot_user_id, keys: keptKeys } : null;
    let plan;
    try {
      plan = await this.provision(provision, body, now, reusable);
    } catch (error) {
      throw this.connectFailure(error);
    }
    // The chat side is done: store the device (a new identity only), then the fact (nothing is stored on failure above).
    const at = this.deps.clock.now();
    const integrationId = plan.reused ? existing!.integration_id : randomUUID();
    try {
      if (!plan.reused) {
        await store.create(integrationId, profile.id, plan.keys, plan.prekeys, at);
        for (const [channelId, state] of plan.senderKeys) await store.saveOwnSenderKey(integrationId, channelId, state, at);
      }
      await this.deps.commands.run(integrationStream(profile.id), integrationDecider(profile.id), {
        type: 'Connect',
        data: {
          profile_id: profile.id, integration_id: integrationId, instance_url: base.baseUrl, bot_user_id: plan.botId, bot_username: body.bot_username,
          token_prefix: plan.token.slice(0, TOKEN_PREFIX_CHARS), token_sealed: sealSecret(key, plan.token, botTokenSealContext(profile.id, integrationId)),
          token_expires_at: plan.expiresAt, verify_tls: verifyTls, identity_fingerprint: fingerprint(plan.keys.identity.publicKey),
          default_community_id: body.default_community_id ?? (plan.reused ? existing!.default_community_id : null), at: at.toISOString(),
        },
      }, context);
    } catch (error) {
      if (!plan.reused) await store.destroy(integrationId);
      if (error instanceof DomainError && error.code === 'already_connected') throw new ApiError(409, 'already_connected', error.message);
      throw error;
    }
    if (existing) {
      // The socket of the revoked token goes; a new identity replaces the old device entirely.
      await this.stopBot(profile.id);
      if (!plan.reused) {
        await store.destroy(existing.integration_id);
        this.dispatchers.delete(existing.integration_id);
      }
    }
    const row = (await this.integration(profile.id))!;
    if (this.running) this.startBot(row);
    return this.view(row);
  }

  /**
   * The chat-service side of connect: the bot, its token, its community, a sender key for every
   * member channel, and last its keys (the one step a retry could not repeat: the chat service
   * registers a bot's identity once), so a half-done connect can be retried.
   *
   * `reusable`: the bot and device keys of this profile's revoked integration. When the name
   * still belongs to that bot, the reconnect only mints a token (and joins the community if the
   * bot is not in it): same identity, sessions and sender keys. A bot of that name with keys
   * registered but not kept here (deleted, or another profile's) cannot be used: its private
   * keys are gone or not ours, and the chat service lets a bot register its identity only once.
   */
  private async provision(provision: ChatsvcClient, body: ConnectRequest, now: Date, reusable: { botId: string; keys: DeviceKeys } | null) {
    // 1. The bot: created, or the one of that name reused (a half-done connect retried, or a revoked one reconnected).
    let botId: string | undefined;
    let reused = false;
    const created = await provision.call('POST', '/api/admin/bots', { username: body.bot_username, display_name: body.display_name });
    if (created.status === 201 || created.status === 200) botId = created.body?.id;
    else if (created.status === 409) {
      for (let offset = 0; offset < 10_000 && !botId; offset += 200) {
        const list = await expect('list bots', provision.call('GET', `/api/admin/bots?limit=200&offset=${offset}`));
        const bots: { id: string; username: string; has_identity_key?: boolean }[] = list.bots ?? [];
        const found = bots.find((b) => b.username === body.bot_username);
        if (found?.has_identity_key) {
          if (found.id !== reusable?.botId) throw botIdentityTaken(body.bot_username);
          reused = true;
        }
        botId = found?.id;
        if (bots.length < 200) break;
      }
      if (!botId) throw new StepFailed('create bot (the name belongs to an account that is not a bot)', created);
    } else throw new StepFailed('create bot', created);
    if (!botId) throw new StepFailed('create bot (no id in the answer)', created);
    // 2. Its default-scope token.
    const hours = body.expires_in_hours ?? 720;
    const minted = await expect('mint bot token', provision.call('POST', `/api/admin/bots/${botId}/tokens`, { scope: 'default', label: `orchestration:${body.bot_username}`, expires_in_hours: hours }));
    const token: string = minted?.token;
    if (typeof token !== 'string' || !BOT_TOKEN.test(token)) throw new StepFailed('mint bot token (no token in the answer)', { status: 502, headers: new Headers(), body: null, text: '' });
    const expiresAt: string | null = minted.expires_at ?? new Date(now.getTime() + hours * 3_600_000).toISOString();
    // 3. The community, as member only; a reused bot already in it keeps its role (an admin raised it for send_message).
    if (body.default_community_id) {
      const member = reused && ((await expect('list bot communities', provision.call('GET', `/api/admin/bots/${botId}/communities`))).communities ?? [])
        .some((c: { community_id: string }) => c.community_id === body.default_community_id);
      if (!member) await expect('join community', provision.call('POST', `/api/admin/bots/${botId}/communities`, { community_id: body.default_community_id, role: 'member' }), [200, 201, 204]);
    }
    // A reused bot keeps its keys and sender keys; its socket tops up the prekeys once connected.
    if (reused) return { botId, token, expiresAt, keys: reusable!.keys, prekeys: [], senderKeys: new Map<string, SenderKeyState>(), reused };
    // 4. With the bot token: a sender key for every member channel.
    const bot = provision.withBotToken(token);
    const senderKeys = new Map<string, SenderKeyState>();
    const channels = await expect('list channels', bot.call('GET', '/api/channels'));
    for (const channel of (channels.channels ?? []) as { id: string }[]) {
      const state = createSenderKey(botId);
      await expect('post sender key', bot.call('POST', `/api/channels/${channel.id}/sender-keys`, { chain_id: state.chainId, distribution: senderKeyDistribution(state) }), [200, 201]);
      senderKeys.set(channel.id, state);
    }
    // 5. Its identity, a signed prekey and 100 one-time prekeys.
    const identity = generateIdentityKeyPair();
    const signed = generateSignedPrekey(identity, 1);
    const prekeys = generateOneTimePrekeys(1, PREKEY_TARGET);
    await expect('register keys', bot.call('POST', '/api/keys/register', {
      identity_key: Array.from(identity.publicKey),
      signed_prekey: { key_id: signed.keyId, public_key: Array.from(signed.publicKey), signature: Array.from(signed.signature) },
      one_time_prekeys: prekeys.map((p) => ({ key_id: p.keyId, public_key: Array.from(p.publicKey) })),
    }), [200, 201]);
    const keys: DeviceKeys = {
      bot_user_id: botId, identity, signed: [{ ...signed, created_at: now.toISOString(), retired_at: null }], next_prekey_id: PREKEY_TARGET + 1, next_signed_id: 2,
    };
    return { botId, token, expiresAt, keys, prekeys, senderKeys, reused };
  }

  // --- status, test, delete --------------------------------------------------------------------

  view(row: IntegrationRow): IntegrationStatusView {
    return {
      instance_url: row.instance_url, bot_user_id: row.bot_user_id, bot_username: row.bot_username, token_prefix: row.token_prefix,
      token_expires_at: row.token_expires_at?.toISOString() ?? null, status: row.status, verify_tls: row.verify_tls,
      identity_fingerprint: row.identity_fingerprint, connected_at: row.connected_at.toISOString(),
      socket: this.bots.get(row.profile_id)?.view() ?? { state: row.status === 'active' ? (this.running ? 'disconnected' : 'stopped') : 'stopped', since: null, last_error: null },
    };
  }

  async status(profileId: string): Promise<IntegrationStatusView> {
    this.requireKey();
    const row = await this.integration(profileId);
    if (!row) throw new ApiError(404, 'not_configured', 'this profile has no chat-service integration');
    return this.view(row);
  }

  private async configured(profileId: string): Promise<IntegrationRow> {
    const row = await this.integration(profileId);
    if (!row) throw new ApiError(404, 'not_configured', 'this profile has no chat-service integration');
    return row;
  }

  async test(profileId: string, context: CommandContext): Promise<{ ok: boolean; chatsvc_status: number; latency_ms: number; status: string }> {
    this.requireKey();
    const row = await this.configured(profileId);
    if (row.status !== 'active') throw integrationDisabled();
    const started = performance.now();
    let reply: ChatsvcReply;
    try {
      reply = await this.client(row).call('GET', '/api/account/me');
    } catch (error) {
      if (error instanceof ChatsvcUnreachable) throw new ApiError(502, 'chatsvc_unreachable', error.detail);
      throw error;
    }
    const latency = Math.round(performance.now() - started);
    if (reply.status === 401) {
      await this.revoked(row, 'test', context);
      throw integrationDisabled(401);
    }
    return { ok: reply.status === 200, chatsvc_status: reply.status, latency_ms: latency, status: row.status };
  }

  /** The first 401 to the bot token: the integration is revoked externally (once). */
  async revoked(row: IntegrationRow, discoveredBy: string, context?: CommandContext): Promise<void> {
    await this.deps.commands.run(integrationStream(row.profile_id), integrationDecider(row.profile_id), {
      type: 'MarkRevoked', integration_id: row.integration_id, token_prefix: row.token_prefix, discovered_by: discoveredBy, chatsvc_status: 401, at: this.deps.clock.now().toISOString(),
    }, context ?? { actor: { kind: 'system', id: 'chatsvc-connector' }, correlationId: randomUUID() });
    this.deps.log.warn('chatsvc_integration_revoked', { profile_id: row.profile_id, discovered_by: discoveredBy });
    const bot = this.bots.get(row.profile_id);
    if (bot && discoveredBy !== 'socket') void this.stopBot(row.profile_id);
  }

  async remove(profileId: string, context: CommandContext): Promise<void> {
    const { store } = this.requireKey();
    const row = await this.configured(profileId);
    await this.stopBot(profileId);
    try {
      await this.deps.commands.run(integrationStream(profileId), integrationDecider(profileId), { type: 'Delete', at: this.deps.clock.now().toISOString() }, context);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_configured') throw new ApiError(404, 'not_configured', error.message);
      throw error;
    }
    await store.destroy(row.integration_id);
    this.dispatchers.delete(row.integration_id);
  }

  // --- tools -----------------------------------------------------------------------------------

  async tool(profile: ProfileRow, name: ToolName, input: Record<string, unknown>, source: ToolSource, context: CommandContext): Promise<{ status: number; result: ToolResult; retryAfter?: number }> {
    const { store } = this.requireKey();
    const row = await this.configured(profile.id);
    if (row.status !== 'active') throw integrationDisabled();
    const client = this.client(row);
    let reply: ChatsvcReply | null = null;
    let targetId: string | null = null;
    let errorMsg: string | null = null;
    let status = 502;
    try {
      if (name === 'send_message') {
        targetId = String(input.channel_id);
        const paced = await this.paceWebhook(row.integration_id, targetId);
        if (paced !== null) {
          const result: ToolResult = { ok: false, tool: name, target_id: targetId, status: 429, payload: null, error_msg: `one message per second per webhook; retry in ${paced} s` };
          await this.auditTool(profile, row, name, source, result, context);
          return { status: 429, result, retryAfter: paced };
        }
        reply = await this.sendViaWebhook(client, store, row, targetId, String(input.content), profile);
        if (reply.status === 429) {
          // Our pace reserves each send's second when the call arrives, but on a loaded machine two
          // sends can still reach the chat less than a second apart: wait out its Retry-After once.
          await new Promise((r) => setTimeout(r, chatRetryAfter(reply!) * 1000));
          reply = await this.sendViaWebhook(client, store, row, targetId, String(input.content), profile);
        }
      } else if (name === 'create_channel') {
        targetId = String(input.group_id);
        reply = await client.call('POST', `/api/groups/${targetId}/channels`, { name: input.name, kind: input.kind ?? 'text', description: input.description ?? '' });
      } else {
        targetId = String(input.community_id);
        const role = input.role && input.role !== 'member' ? input.role : null;
        reply = await client.call('POST', `/api/communities/${targetId}/invites`, { grants_role: role, ...(input.expires_at ? { expires_at: input.expires_at } : {}) });
      }
      status = reply.status;
    } catch (error) {
      if (!(error instanceof ChatsvcUnreachable)) throw error;
      errorMsg = error.detail;
    }
    if (reply?.status === 401) {
      await this.revoked(row, 'tool', context);
      const result: ToolResult = { ok: false, tool: name, target_id: targetId, status: 401, payload: null, error_msg: 'the chat service refused the bot token' };
      await this.auditTool(profile, row, name, source, result, context);
      throw integrationDisabled(401);
    }
    const ok = !!reply && reply.status >= 200 && reply.status < 300;
    if (reply && !ok) errorMsg = typeof reply.body?.error === 'string' ? String(reply.body.error).slice(0, 500) : `the chat service answered ${reply.status}`;
    const result: ToolResult = { ok, tool: name, target_id: targetId, status, payload: reply?.body ?? null, error_msg: errorMsg };
    await this.auditTool(profile, row, name, source, result, context);
    // A chat 429 mirrored as ours carries the chat's Retry-After (at least 1 s), like our own pacing's.
    return { status: ok ? 200 : status, result, ...(reply?.status === 429 ? { retryAfter: chatRetryAfter(reply) } : {}) };
  }

  /** null when the send may go now (after waiting up to 5 s); else the seconds to wait. */
  private async paceWebhook(integrationId: string, channelId: string): Promise<number | null> {
    const key = `${integrationId}:${channelId}`;
    const now = Date.now();
    const next = this.webhookPace.get(key) ?? 0;
    const wait = Math.max(0, next - now);
    if (wait > WEBHOOK_MAX_WAIT_MS) return Math.ceil(wait / 1000);
    this.webhookPace.set(key, Math.max(now, next) + WEBHOOK_INTERVAL_MS);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    return null;
  }

  private async sendViaWebhook(client: ChatsvcClient, store: DeviceStore, row: IntegrationRow, channelId: string, content: string, profile: ProfileRow): Promise<ChatsvcReply> {
    for (let attempt = 0; attempt < 2; attempt++) {
      let hook = await store.webhook(row.integration_id, channelId);
      if (!hook) {
        const created = await client.call('POST', `/api/channels/${channelId}/webhooks`, { name: profile.name.slice(0, 64) || row.bot_username });
        if (created.status !== 201 && created.status !== 200) return created;
        const token = created.body?.token;
        const id = created.body?.id ?? created.body?.webhook?.id;
        if (typeof token !== 'string') return created;
        await store.saveWebhook(row.integration_id, channelId, String(id), token);
        hook = { webhook_id: String(id), token };
      }
      const sent = await client.call('POST', `/api/webhooks/execute/${encodeURIComponent(hook.token)}`, { content });
      if (sent.status === 404 && attempt === 0) {
        // Deleted or deactivated on the chat side: recreate once.
        await store.dropWebhook(row.integration_id, channelId);
        continue;
      }
      return sent;
    }
    throw new Error('unreachable');
  }

  private async auditTool(profile: ProfileRow, row: IntegrationRow, tool: string, source: ToolSource, result: ToolResult, context: CommandContext): Promise<void> {
    const event: ChatsvcAuditEvent = {
      type: 'ChatsvcToolCalled',
      data: {
        profile_id: profile.id, profile_slug: profile.slug, integration_id: row.integration_id, tool, source, target_id: result.target_id,
        ok: result.ok, status: result.status, error_msg: result.error_msg, at: this.deps.clock.now().toISOString(),
      },
    };
    await this.deps.commands.record(auditStream(randomUUID()), event, context);
  }

  /** The model's side of a tool: validated with the same zod; errors and invalid arguments go back as results. */
  async modelTool(profile: ProfileRow, fullName: string, args: Record<string, unknown>, context: CommandContext): Promise<string> {
    const name = fullName.replace(/^chatsvc_/, '') as ToolName;
    if (!(name in TOOL_INPUTS)) return JSON.stringify({ ok: false, error: `unknown tool ${fullName}` });
    const parsed = TOOL_INPUTS[name].safeParse(args);
    if (!parsed.success) return JSON.stringify({ ok: false, error: `invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` });
    try {
      const { result } = await this.tool(profile, name, parsed.data as Record<string, unknown>, 'model', context);
      return JSON.stringify(result);
    } catch (error) {
      return JSON.stringify({ ok: false, error: error instanceof ApiError ? error.code : (error as Error).message });
    }
  }

  /** The tools a chat surface offers a profile's model: null unless can_use_tools, the key and an active integration. */
  turnTools(context: CommandContext): (profile: ProfileRow) => Promise<{ specs: ReturnType<typeof modelToolSpecs>; execute: (call: { name: string; arguments: Record<string, unknown> }) => Promise<string> } | null> {
    return async (profile) => (await this.toolsAvailable(profile))
      ? { specs: modelToolSpecs(), execute: (call) => this.modelTool(profile, call.name, call.arguments, context) }
      : null;
  }

  /** Does this profile's chat offer the tools (can_use_tools, the key, an active integration)? */
  async toolsAvailable(profile: ProfileRow): Promise<boolean> {
    if (!profile.can_use_tools || !this.enabled) return false;
    return (await this.integration(profile.id))?.status === 'active';
  }

  // --- sockets ---------------------------------------------------------------------------------

  /** Start the supervisor: sockets for every active integration now, then every ORCH_CHATSVC_SUPERVISOR_SECS. */
  async start(): Promise<void> {
    if (!this.enabled || this.running) return;
    this.running = true;
    await this.tick();
    this.supervisor = setInterval(() => void this.tick(), this.deps.config.chatsvc.supervisorSecs * 1000);
    this.supervisor.unref();
  }

  /** One supervisor pass: start missing sockets, retry standby ones, stop stale ones. */
  tick(): Promise<void> {
    this.ticking ??= (async () => {
      try {
        const active = await activeIntegrations(this.deps.db);
        const wanted = new Map(active.map((r) => [r.profile_id, r]));
        for (const [profileId, bot] of this.bots) {
          const row = wanted.get(profileId);
          // Another integration, or the same one reconnected with a new token (by another instance).
          if (!row || row.integration_id !== bot.integration.integration_id || row.token_sealed !== bot.integration.token_sealed) await this.stopBot(profileId);
        }
        for (const row of active) {
          const bot = this.bots.get(row.profile_id);
          if (!bot) this.startBot(row);
          else if (bot.view().state === 'standby' || bot.view().state === 'stopped') bot.retry();
          // The weekly signed-prekey rotation rides on the supervisor's pass (a socket may stay up for weeks).
          else if (bot.view().state === 'connected') bot.maintainSoon();
        }
      } catch (error) {
        this.deps.log.error('chatsvc_supervisor_failed', { error: (error as Error).message });
      }
    })().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private startBot(row: IntegrationRow): void {
    const bot = new BotSocket(this, row);
    this.bots.set(row.profile_id, bot);
    bot.start();
  }

  async stopBot(profileId: string): Promise<void> {
    const bot = this.bots.get(profileId);
    if (!bot) return;
    this.bots.delete(profileId);
    await bot.stop();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.supervisor) clearInterval(this.supervisor);
    this.supervisor = null;
    await this.ticking;
    await Promise.all([...this.bots.keys()].map((id) => this.stopBot(id)));
    if (this.lockClient) {
      const client = this.lockClient;
      this.lockClient = null;
      await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      client.release();
    }
    for (const { dispatcher } of this.dispatchers.values()) await (dispatcher as { close?: () => Promise<void> }).close?.().catch(() => {});
    this.dispatchers.clear();
  }

  // One socket per integration across instances: an advisory lock on one session per process.
  private lockQueue: Promise<unknown> = Promise.resolve();

  private withLockClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const run = this.lockQueue.then(async () => {
      if (!this.lockClient) {
        this.lockClient = await this.deps.db.connect();
        this.lockClient.on('error', (error) => {
          this.deps.log.error('chatsvc_lock_session_lost', { error: error.message });
          this.lockClient = null;
          for (const bot of this.bots.values()) bot.lockLost();
        });
      }
      return work(this.lockClient);
    });
    this.lockQueue = run.catch(() => {});
    return run;
  }

  async lock(integrationId: string): Promise<boolean> {
    return this.withLockClient(async (c) => (await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended('chatsvc:' || $1, 0)) AS ok`, [integrationId])).rows[0]!.ok);
  }

  async unlock(integrationId: string): Promise<void> {
    if (!this.lockClient) return;
    await this.withLockClient((c) => c.query(`SELECT pg_advisory_unlock(hashtextextended('chatsvc:' || $1, 0))`, [integrationId])).catch(() => {});
  }

  /** `integrations.chatsvc_bot_ws` of the health route. */
  health(): { status: string; active: number; connected: number; down: number; standby: number } {
    if (!this.enabled) return { status: 'disabled', active: 0, connected: 0, down: 0, standby: 0 };
    return botsHealth([...this.bots.values()].map((b) => b.view().state));
  }
}

export { CHATSVC_AUDIT_EVENT_TYPES };
