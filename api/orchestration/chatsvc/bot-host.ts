// What a bot socket needs from outside itself, declared beside it so that the bot depends on
// this interface and never on the connector that implements it (./connector.ts). The bot's parts
// (./bot.ts the lifecycle, ./bot-inbox.ts, ./bot-keys.ts, ./bot-reply.ts) each take the host.

import type { ChatsvcClient } from '../../../infra/chatsvc/client.ts';
import type { DeviceStore } from '../../../infra/chatsvc/device-store.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import type { PipelineDeps, TurnTools } from '../agent-chat/commands.ts';
import type { OrchDeps } from '../deps.ts';

/** The chat pipeline's dependencies (an answer is a chat turn), plus the config and metrics. */
export type BotDeps = PipelineDeps & Pick<OrchDeps, 'config' | 'metrics'>;

export interface BotHost {
  readonly deps: BotDeps;
  /** The integration's device: keys, sessions, sender keys, cursors, held messages. */
  readonly store: DeviceStore;
  /** The integration's REST client (its TLS setting, its bot token). */
  client(integration: IntegrationRow): ChatsvcClient;
  botToken(integration: IntegrationRow): string;
  /** One socket per integration across instances: false when another instance holds it. */
  lock(integrationId: string): Promise<boolean>;
  unlock(integrationId: string): Promise<void>;
  /** The chat service answered 401 to the bot token. */
  revoked(integration: IntegrationRow, discoveredBy: 'socket' | 'reply'): Promise<void>;
  /** A peer's identity key changed since its last session (audited). */
  identityChanged(
    integration: IntegrationRow,
    peerUserId: string,
    oldFingerprint: string,
    newFingerprint: string,
  ): Promise<void>;
  /** The chatsvc tools the profile's model may call in a turn, or null. */
  modelTools(profile: ProfileRow, context: CommandContext): Promise<TurnTools | null>;
}

/** The integration's REST client, waiting out the chat's per-token limit (429) a few times. */
export const restOf = (host: BotHost, integration: IntegrationRow): ChatsvcClient =>
  host.client(integration).patient(3);
