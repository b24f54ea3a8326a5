// The chatsvc slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export interface ConnectedData {
  profile_id: string;
  /** New at every connect of a new bot identity, kept by a reconnect of the same bot: device state, conversations and cursors hang off it. */
  integration_id: string;
  instance_url: string;
  bot_user_id: string;
  bot_username: string;
  /** The first 11 characters of the bot token (`cb_` + 8 hex), as the chat service shows it. */
  token_prefix: string;
  /** The bot token sealed under the integration key (context `chatsvc_bot_token:<profile>:<integration>`). */
  token_sealed: string;
  token_expires_at: string | null;
  verify_tls: boolean;
  /** Hex SHA-256 of the bot's Ed25519 identity key (the spec's fingerprint), for people to verify the bot. */
  identity_fingerprint: string;
  default_community_id: string | null;
  at: string;
}

export type IntegrationEvent =
  | DomainEvent<'ChatIntegrationConnected', ConnectedData & Record<string, unknown>>
  | DomainEvent<
      'IntegrationRevokedExternally',
      {
        profile_id: string;
        integration_id: string;
        /** What met the chat service's 401: `test`, `tool`, `socket`, `reply`. */
        discovered_by: string;
        chatsvc_status: number;
        at: string;
      }
    >
  | DomainEvent<'ChatIntegrationDeleted', { profile_id: string; integration_id: string; at: string }>;

export const INTEGRATION_EVENT_TYPES = eventTypes<IntegrationEvent>()([
  'ChatIntegrationConnected',
  'IntegrationRevokedExternally',
  'ChatIntegrationDeleted',
]);

// The connector's audit facts (spec 1, "Events"): each on its own `orch.audit-<uuid>` stream, shown by
// the audit route. No token, no message text: a tool call names its tool, target and status;
// a tool loop its counts.

export type ToolSource = 'api' | 'model';

export type ChatsvcAuditEvent =
  | DomainEvent<
      'ChatsvcToolCalled',
      {
        profile_id: string;
        profile_slug: string;
        integration_id: string;
        tool: string;
        source: ToolSource;
        target_id: string | null;
        ok: boolean;
        status: number;
        error_msg: string | null;
        at: string;
      }
    >
  | DomainEvent<
      'ToolLoopCompleted',
      {
        profile_id: string;
        profile_slug: string;
        surface: string;
        tool_calls: number;
        model_calls: number;
        cost_cents: number;
        hit_cap: boolean;
        hit_max_iterations: boolean;
        at: string;
      }
    >
  | DomainEvent<
      'ChatsvcIdentityKeyChanged',
      {
        profile_id: string;
        profile_slug: string;
        integration_id: string;
        peer_user_id: string;
        old_fingerprint: string;
        new_fingerprint: string;
        at: string;
      }
    >;

export const CHATSVC_AUDIT_EVENT_TYPES = eventTypes<ChatsvcAuditEvent>()([
  'ChatsvcToolCalled',
  'ToolLoopCompleted',
  'ChatsvcIdentityKeyChanged',
]);
