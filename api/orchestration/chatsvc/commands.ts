// The chat-service connector's use cases (spec 1, "Chat-service integration"): connect (a
// reconnect is a connect from `revoked_externally`), the communities a provision token sees,
// status, test, delete, the tools (from the route and from a model's tool loop), and the facts
// the bot sockets discover. The slice's application layer: the read-model lookups a decision
// needs, then the command runner, which nothing else in the slice calls. The chat-service
// calls are ./provision.ts's and ./tool-calls.ts's; the sockets are the supervisor's, told here
// when an integration starts or goes.
//
// - The integration key seals the bot token in the log, the webhook tokens and the device
//   state; without it every use case answers 503 `integration_key_missing`.
// - A chat-service 401 to the bot token, wherever it is met (test, tool, socket Authenticate, a
//   reply), appends IntegrationRevokedExternally; the integration then answers 409
//   `integration_disabled` until a fresh connect. A chat 401 is never passed on as ours.

import { randomUUID } from 'node:crypto';
import { fingerprint } from '../../../crypto/e2ee/index.ts';
import { sealSecret } from '../../../crypto/seal.ts';
import { botTokenSealContext, integrationDecider } from '../../../domain/orchestration/chatsvc/decider.ts';
import type { ChatsvcAuditEvent, ToolSource } from '../../../domain/orchestration/chatsvc/events.ts';
import { integrationStream, auditStream } from '../../../domain/orchestration/streams.ts';
import { BOT_TOKEN, TOKEN_PREFIX_CHARS } from '../../../domain/orchestration/chatsvc/rules.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { ChatsvcUnreachable, type ChatsvcReply } from '../../../infra/chatsvc/client.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { integrationOf, type IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { profileById, type ProfileRow } from '../../../projections/orchestration/profiles.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { TurnTools } from '../agent-chat/commands.ts';
import type { OrchDeps } from '../deps.ts';
import { profileNotFound } from '../profiles/commands.ts';
import type { SocketView } from './bot.ts';
import type { ChatsvcClients } from './clients.ts';
import { listCommunities, provisionBot, StepFailed, type ConnectRequest } from './provision.ts';
import type { ToolCalls } from './tool-calls.ts';
import { modelToolSpecs, TOOL_INPUTS, type ToolName, type ToolResult } from './tools.ts';

export type CommandsDeps = Pick<OrchDeps, 'commands' | 'db' | 'clock' | 'log'>;

/** What the use cases need of the bot sockets (the supervisor, ./supervisor.ts). */
export interface BotSockets {
  startIfRunning(row: IntegrationRow): void;
  stopBot(profileId: string): Promise<void>;
  view(row: IntegrationRow): SocketView;
}

export const integrationDisabled = (status: number | null = null) =>
  new ApiError(
    409,
    'integration_disabled',
    "the chat service refused this integration's bot token; connect again with a fresh provision token",
    status === null ? {} : { chatsvc_status: status },
  );

export const mintFailed = (detail: string, status: number | null) =>
  new ApiError(502, 'chatsvc_mint_bot_failed', 'provisioning the bot on the chat service failed', {
    detail,
    chatsvc_status: status,
  });

const notConfigured = (message = 'this profile has no chat-service integration') =>
  new ApiError(404, 'not_configured', message);

/** The facts the connector finds out by itself (a socket, a reply) are the system's. */
const systemContext = (): CommandContext => ({
  actor: { kind: 'system', id: 'chatsvc-connector' },
  correlationId: randomUUID(),
});

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

export class ChatsvcCommands {
  constructor(
    private readonly deps: CommandsDeps,
    private readonly clients: ChatsvcClients,
    private readonly toolCalls: ToolCalls,
    private readonly sockets: BotSockets,
  ) {}

  private async profileOf(profileId: string): Promise<ProfileRow> {
    const profile = await profileById(this.deps.db, profileId);
    if (!profile) throw profileNotFound();
    return profile;
  }

  private async configured(profileId: string): Promise<IntegrationRow> {
    const row = await integrationOf(this.deps.db, profileId);
    if (!row) throw notConfigured();
    return row;
  }

  private view(row: IntegrationRow): IntegrationStatusView {
    return {
      instance_url: row.instance_url,
      bot_user_id: row.bot_user_id,
      bot_username: row.bot_username,
      token_prefix: row.token_prefix,
      token_expires_at: row.token_expires_at?.toISOString() ?? null,
      status: row.status,
      verify_tls: row.verify_tls,
      identity_fingerprint: row.identity_fingerprint,
      connected_at: row.connected_at.toISOString(),
      socket: this.sockets.view(row),
    };
  }

  // --- connect -------------------------------------------------------------------------------

  /** Lists the communities the provision token may join a bot to; nothing is stored. */
  async communities(
    profileId: string,
    body: { instance_url: string; provision_token: string; verify_tls?: boolean | undefined },
  ): Promise<unknown> {
    await this.profileOf(profileId);
    this.clients.requireKey();
    const client = this.clients.transient(body.instance_url, body.verify_tls ?? true);
    try {
      return await listCommunities(client.withProvisionToken(body.provision_token));
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

  async connect(profileId: string, body: ConnectRequest, context: CommandContext): Promise<IntegrationStatusView> {
    const profile = await this.profileOf(profileId);
    const { store, key } = this.clients.requireKey();
    if (!BOT_TOKEN.test(body.provision_token))
      throw new ApiError(
        400,
        'validation_failed',
        'provision_token must be cb_ followed by 64 lowercase hex characters',
      );
    const existing = await integrationOf(this.deps.db, profile.id);
    if (existing?.status === 'active')
      throw new ApiError(
        409,
        'already_connected',
        'this profile already has an active chat-service integration; delete it first',
      );
    const verifyTls = body.verify_tls ?? true;
    const base = this.clients.transient(body.instance_url, verifyTls);
    const provision = base.withProvisionToken(body.provision_token);
    const now = this.deps.clock.now();
    // A revoked integration keeps its device: the same bot on the same instance comes back with it.
    const keptKeys =
      existing && existing.instance_url === base.baseUrl && existing.bot_username === body.bot_username
        ? await store.keys(existing.integration_id)
        : null;
    const reusable = existing && keptKeys ? { botId: existing.bot_user_id, keys: keptKeys } : null;
    let plan;
    try {
      plan = await provisionBot(provision, body, now, reusable);
    } catch (error) {
      throw this.connectFailure(error);
    }
    // The chat side is done: store the device (a new identity only), then the fact (nothing is stored on failure above).
    const at = this.deps.clock.now();
    const integrationId = plan.reused ? existing!.integration_id : randomUUID();
    try {
      if (!plan.reused) {
        await store.create(integrationId, profile.id, plan.keys, plan.prekeys, at);
        for (const [channelId, state] of plan.senderKeys)
          await store.saveOwnSenderKey(integrationId, channelId, state, at);
      }
      await this.deps.commands.run(
        integrationStream(profile.id),
        integrationDecider(profile.id),
        {
          type: 'Connect',
          data: {
            profile_id: profile.id,
            integration_id: integrationId,
            instance_url: base.baseUrl,
            bot_user_id: plan.botId,
            bot_username: body.bot_username,
            token_prefix: plan.token.slice(0, TOKEN_PREFIX_CHARS),
            token_sealed: sealSecret(key, plan.token, botTokenSealContext(profile.id, integrationId)),
            token_expires_at: plan.expiresAt,
            verify_tls: verifyTls,
            identity_fingerprint: fingerprint(plan.keys.identity.publicKey),
            default_community_id: body.default_community_id ?? (plan.reused ? existing!.default_community_id : null),
            at: at.toISOString(),
          },
        },
        context,
      );
    } catch (error) {
      if (!plan.reused) await store.destroy(integrationId);
      if (error instanceof DomainError && error.code === 'already_connected')
        throw new ApiError(409, 'already_connected', error.message);
      throw error;
    }
    if (existing) {
      // The socket of the revoked token goes; a new identity replaces the old device entirely.
      await this.sockets.stopBot(profile.id);
      if (!plan.reused) {
        await store.destroy(existing.integration_id);
        this.clients.forget(existing.integration_id);
      }
    }
    const row = (await integrationOf(this.deps.db, profile.id))!;
    this.sockets.startIfRunning(row);
    return this.view(row);
  }

  // --- status, test, delete --------------------------------------------------------------------

  async status(profileId: string): Promise<IntegrationStatusView> {
    await this.profileOf(profileId);
    this.clients.requireKey();
    return this.view(await this.configured(profileId));
  }

  async test(
    profileId: string,
    context: CommandContext,
  ): Promise<{ ok: boolean; chatsvc_status: number; latency_ms: number; status: string }> {
    await this.profileOf(profileId);
    this.clients.requireKey();
    const row = await this.configured(profileId);
    if (row.status !== 'active') throw integrationDisabled();
    const started = performance.now();
    let reply: ChatsvcReply;
    try {
      reply = await this.clients.client(row).call('GET', '/api/account/me');
    } catch (error) {
      if (error instanceof ChatsvcUnreachable) throw new ApiError(502, 'chatsvc_unreachable', error.detail);
      throw error;
    }
    const latency = Math.round(performance.now() - started);
    if (reply.status === 401) {
      await this.markRevoked(row, 'test', context);
      throw integrationDisabled(401);
    }
    return { ok: reply.status === 200, chatsvc_status: reply.status, latency_ms: latency, status: row.status };
  }

  async remove(profileId: string, context: CommandContext): Promise<void> {
    await this.profileOf(profileId);
    const { store } = this.clients.requireKey();
    const row = await this.configured(profileId);
    try {
      await this.deps.commands.run(
        integrationStream(profileId),
        integrationDecider(profileId),
        { type: 'Delete', at: this.deps.clock.now().toISOString() },
        context,
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_configured') throw notConfigured(error.message);
      throw error;
    }
    // Stopped once the read model shows the delete: no later pass of the supervisor starts it again.
    await this.sockets.stopBot(profileId);
    await store.destroy(row.integration_id);
    this.clients.forget(row.integration_id);
  }

  // --- what the sockets find out ---------------------------------------------------------------

  /** The first 401 to the bot token: the integration is revoked externally (once). A socket that found it stops itself. */
  async markRevoked(
    row: IntegrationRow,
    discoveredBy: 'test' | 'tool' | 'socket' | 'reply',
    context?: CommandContext,
  ): Promise<void> {
    await this.deps.commands.run(
      integrationStream(row.profile_id),
      integrationDecider(row.profile_id),
      {
        type: 'MarkRevoked',
        integration_id: row.integration_id,
        token_prefix: row.token_prefix,
        discovered_by: discoveredBy,
        chatsvc_status: 401,
        at: this.deps.clock.now().toISOString(),
      },
      context ?? systemContext(),
    );
    this.deps.log.warn('chatsvc_integration_revoked', { profile_id: row.profile_id, discovered_by: discoveredBy });
    if (discoveredBy !== 'socket') void this.sockets.stopBot(row.profile_id);
  }

  /** A DM peer's identity key is not the one its session began with (audited). */
  async identityChanged(
    row: IntegrationRow,
    peerUserId: string,
    oldFingerprint: string,
    newFingerprint: string,
  ): Promise<void> {
    const profile = await profileById(this.deps.db, row.profile_id);
    const event: ChatsvcAuditEvent = {
      type: 'ChatsvcIdentityKeyChanged',
      data: {
        profile_id: row.profile_id,
        profile_slug: profile?.slug ?? '',
        integration_id: row.integration_id,
        peer_user_id: peerUserId,
        old_fingerprint: oldFingerprint,
        new_fingerprint: newFingerprint,
        at: this.deps.clock.now().toISOString(),
      },
    };
    await this.deps.commands.record(auditStream(randomUUID()), event, systemContext());
  }

  // --- tools -----------------------------------------------------------------------------------

  /** The tool route's call (inputs validated by the route). */
  async tool(
    profileId: string,
    name: ToolName,
    input: Record<string, unknown>,
    context: CommandContext,
  ): Promise<{ status: number; result: ToolResult; retryAfter?: number }> {
    const profile = await this.profileOf(profileId);
    return this.runTool(profile, name, input, 'api', context);
  }

  /** Every call writes an audit row; a 401 revokes the integration and answers 409. */
  private async runTool(
    profile: ProfileRow,
    name: ToolName,
    input: Record<string, unknown>,
    source: ToolSource,
    context: CommandContext,
  ): Promise<{ status: number; result: ToolResult; retryAfter?: number }> {
    this.clients.requireKey();
    const row = await this.configured(profile.id);
    if (row.status !== 'active') throw integrationDisabled();
    const { result, retryAfter, refused } = await this.toolCalls.call(profile, row, name, input);
    if (refused) await this.markRevoked(row, 'tool', context);
    await this.recordToolCall(profile, row, name, source, result, context);
    if (refused) throw integrationDisabled(401);
    return { status: result.ok ? 200 : result.status, result, ...(retryAfter !== undefined ? { retryAfter } : {}) };
  }

  private async recordToolCall(
    profile: ProfileRow,
    row: IntegrationRow,
    tool: string,
    source: ToolSource,
    result: ToolResult,
    context: CommandContext,
  ): Promise<void> {
    const event: ChatsvcAuditEvent = {
      type: 'ChatsvcToolCalled',
      data: {
        profile_id: profile.id,
        profile_slug: profile.slug,
        integration_id: row.integration_id,
        tool,
        source,
        target_id: result.target_id,
        ok: result.ok,
        status: result.status,
        error_msg: result.error_msg,
        at: this.deps.clock.now().toISOString(),
      },
    };
    await this.deps.commands.record(auditStream(randomUUID()), event, context);
  }

  /** The tools a profile's model is offered in a chat turn: null unless can_use_tools, the key and an active integration. */
  async modelTools(profile: ProfileRow, context: CommandContext): Promise<TurnTools | null> {
    if (!profile.can_use_tools || !this.clients.enabled) return null;
    if ((await integrationOf(this.deps.db, profile.id))?.status !== 'active') return null;
    return { specs: modelToolSpecs(), execute: (call) => this.modelTool(profile, call.name, call.arguments, context) };
  }

  /** The model's side of a tool: validated with the same zod; errors and invalid arguments go back as results. */
  private async modelTool(
    profile: ProfileRow,
    fullName: string,
    args: Record<string, unknown>,
    context: CommandContext,
  ): Promise<string> {
    const name = fullName.replace(/^chatsvc_/, '') as ToolName;
    if (!(name in TOOL_INPUTS)) return JSON.stringify({ ok: false, error: `unknown tool ${fullName}` });
    const parsed = TOOL_INPUTS[name].safeParse(args);
    if (!parsed.success)
      return JSON.stringify({
        ok: false,
        error: `invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
      });
    try {
      const { result } = await this.runTool(profile, name, parsed.data as Record<string, unknown>, 'model', context);
      return JSON.stringify(result);
    } catch (error) {
      return JSON.stringify({ ok: false, error: error instanceof ApiError ? error.code : (error as Error).message });
    }
  }
}
