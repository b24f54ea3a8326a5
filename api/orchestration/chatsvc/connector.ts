// The chat-service connector, one per process (main/apps.ts builds it): it wires the slice's
// parts and is the bots' host.
//
// - ./clients.ts   the integration key, the device store, each integration's REST client
// - ./commands.ts  the use cases (connect, status, test, delete, tools); the routes call them
// - ./tool-calls.ts and ./provision.ts  the chat-service side of the tools and of connect
// - ./supervisor.ts  starts, retries and stops the bot sockets; holds their locks
// - ./reactor.ts   the supervisor's processor (in every instance), which drives its passes;
//                  main/ registers it with the processor engine
// - ./bot.ts       one bot socket (with ./bot-inbox.ts, ./bot-keys.ts, ./bot-reply.ts), which
//                  depends on ./bot-host.ts, implemented here, and never on this class

import type { DeviceStore } from '../../../infra/chatsvc/device-store.ts';
import type { ChatsvcClient } from '../../../infra/chatsvc/client.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import type { TurnTools } from '../agent-chat/commands.ts';
import type { OrchDeps } from '../deps.ts';
import type { BotHost } from './bot-host.ts';
import { ChatsvcClients } from './clients.ts';
import { ChatsvcCommands } from './commands.ts';
import { BotSupervisor } from './supervisor.ts';
import { ToolCalls } from './tool-calls.ts';

export type ConnectorDeps = Pick<
  OrchDeps,
  'commands' | 'db' | 'clock' | 'config' | 'log' | 'limiter' | 'models' | 'sealKey' | 'metrics'
>;

export class ChatsvcConnector implements BotHost {
  readonly clients: ChatsvcClients;
  readonly supervisor: BotSupervisor;
  readonly commands: ChatsvcCommands;

  constructor(readonly deps: ConnectorDeps) {
    this.clients = new ChatsvcClients(deps);
    this.supervisor = new BotSupervisor(deps, this);
    this.commands = new ChatsvcCommands(deps, this.clients, new ToolCalls(this.clients), this.supervisor);
  }

  /** False without the integration key: every route answers 503, no socket runs. */
  get enabled(): boolean {
    return this.clients.enabled;
  }

  /** Run the bot sockets in this process (main/chatsvc-bots.ts, with the orchestration service); the supervisor's processor starts them. */
  async start(): Promise<void> {
    if (this.enabled) this.supervisor.start();
  }

  async stop(): Promise<void> {
    await this.supervisor.stop();
    await this.clients.close();
  }

  /** `integrations.chatsvc_bot_ws` of the health route. */
  health(): { status: string; active: number; connected: number; down: number; standby: number } {
    if (!this.enabled) return { status: 'disabled', active: 0, connected: 0, down: 0, standby: 0 };
    return this.supervisor.health();
  }

  /** The chatsvc tools a chat surface offers a profile's model (agent-chat's turns). */
  turnTools(context: CommandContext): (profile: ProfileRow) => Promise<TurnTools | null> {
    return (profile) => this.commands.modelTools(profile, context);
  }

  // --- BotHost ---------------------------------------------------------------------------------

  get store(): DeviceStore {
    return this.clients.requireKey().store;
  }

  client(integration: IntegrationRow): ChatsvcClient {
    return this.clients.client(integration);
  }

  botToken(integration: IntegrationRow): string {
    return this.clients.botToken(integration);
  }

  lock(integrationId: string): Promise<boolean> {
    return this.supervisor.lock(integrationId);
  }

  unlock(integrationId: string): Promise<void> {
    return this.supervisor.unlock(integrationId);
  }

  revoked(integration: IntegrationRow, discoveredBy: 'socket' | 'reply'): Promise<void> {
    return this.commands.markRevoked(integration, discoveredBy);
  }

  identityChanged(
    integration: IntegrationRow,
    peerUserId: string,
    oldFingerprint: string,
    newFingerprint: string,
  ): Promise<void> {
    return this.commands.identityChanged(integration, peerUserId, oldFingerprint, newFingerprint);
  }

  modelTools(profile: ProfileRow, context: CommandContext): Promise<TurnTools | null> {
    return this.commands.modelTools(profile, context);
  }
}
