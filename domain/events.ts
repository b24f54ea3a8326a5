// The event catalog: every event type the platform writes, by the union it belongs to, with its
// version and upcasters (the log's contract, EVENT_CONTRACT). Each list is checked complete
// against its union at compile time (`eventTypes`). A test checks that every type here has a
// projection consuming it or is listed in AUDIT_ONLY with the reason.

import { ACCOUNT_EVENT_TYPES } from './chat/accounts/events.ts';
import { INVITE_EVENT_TYPES } from './chat/invites/events.ts';
import { BOT_TOKEN_EVENT_TYPES, BOT_TOKEN_USE_EVENT_TYPES } from './chat/bots/events.ts';
import { WEBHOOK_EVENT_TYPES } from './chat/webhooks/events.ts';
import {
  ANNOUNCEMENT_EVENT_TYPES,
  FEEDBACK_EVENT_TYPES,
  PURGE_EVENT_TYPES,
  REPORT_REVIEW_EVENT_TYPES,
} from './chat/admin/events.ts';
import { CHANNEL_EVENT_TYPES } from './chat/channels/events.ts';
import { COMMUNITY_EVENT_TYPES } from './chat/communities/events.ts';
import { GROUP_EVENT_TYPES } from './chat/groups/events.ts';
import { MESSAGE_EVENT_TYPES, MESSAGE_UPCASTERS, READ_CURSOR_EVENT_TYPES } from './chat/messages/events.ts';
import { SENDER_KEY_EVENT_TYPES } from './chat/sender-keys/events.ts';
import { POLL_EVENT_TYPES, POLL_UPCASTERS } from './chat/polls/events.ts';
import { SCHEDULED_EVENT_TYPES } from './chat/scheduled/events.ts';
import { MEETING_EVENT_TYPES, REMINDER_EVENT_TYPES } from './chat/meetings/events.ts';
import { CALENDAR_FEED_EVENT_TYPES } from './chat/calendar-feeds/events.ts';
import { BOOKMARK_EVENT_TYPES } from './chat/bookmarks/events.ts';
import { PUSH_SUBSCRIPTION_EVENT_TYPES } from './chat/push/events.ts';
import { BLOCKED_HASH_EVENT_TYPES, FILE_EVENT_TYPES, UPLOAD_REFUSED_EVENT_TYPES } from './chat/files/events.ts';
import { ASSET_EVENT_TYPES } from './chat/assets/events.ts';
import { PREKEY_CLAIM_EVENT_TYPES, KEYS_EVENT_TYPES } from './chat/keys/events.ts';
import { CHAT_SESSION_EVENT_TYPES } from './chat/sessions/events.ts';
import { TOTP_EVENT_TYPES } from './chat/totp/events.ts';
import { BLOCK_EVENT_TYPES, REPORT_EVENT_TYPES } from './chat/users/events.ts';
import { CHATSVC_AUDIT_EVENT_TYPES, INTEGRATION_EVENT_TYPES } from './orchestration/chatsvc/events.ts';
import { CONVERSATION_EVENT_TYPES, CHAT_SECURITY_EVENT_TYPES } from './orchestration/agent-chat/events.ts';
import { ESTATE_EVENT_TYPES } from './orchestration/estate/events.ts';
import { UPDATE_EVENT_TYPES } from './updates/events.ts';
import {
  REGISTRATION_EVENT_TYPES,
  SECURITY_EVENT_TYPES,
  SESSION_EVENT_TYPES,
  USER_EVENT_TYPES,
} from './orchestration/users/events.ts';
import { RESERVATION_EVENT_TYPES } from './shared/reservation.ts';
import { PROJECT_EVENT_TYPES } from './orchestration/projects/events.ts';
import { TASK_EVENT_TYPES } from './orchestration/tasks/events.ts';
import { AGENT_EVENT_TYPES } from './orchestration/agents/events.ts';
import { MCP_SERVERS_EVENT_TYPES } from './orchestration/mcp-servers/events.ts';
import { PROFILE_EVENT_TYPES } from './orchestration/profiles/events.ts';
import { KNOWLEDGE_EVENT_TYPES } from './orchestration/knowledge/events.ts';
import { CUSTOMER_EVENT_TYPES } from './registry/customers/events.ts';
import { DEPLOYMENT_EVENT_TYPES } from './registry/deployments/events.ts';
import { REGISTRY_SESSION_EVENT_TYPES } from './registry/sessions/events.ts';
import { SUBSCRIPTION_EVENT_TYPES } from './registry/subscriptions/events.ts';
import { TOKEN_EVENT_TYPES } from './registry/tokens/events.ts';
import { eventContract } from './shared/event-contract.ts';

/** Every union's type list, each carrying the versions its slice declares. */
const EVENT_LISTS: readonly (readonly string[] & { readonly versions: Readonly<Record<string, number>> })[] = [
  USER_EVENT_TYPES,
  SESSION_EVENT_TYPES,
  SECURITY_EVENT_TYPES,
  REGISTRATION_EVENT_TYPES,
  RESERVATION_EVENT_TYPES,
  PROFILE_EVENT_TYPES,
  INTEGRATION_EVENT_TYPES,
  CHATSVC_AUDIT_EVENT_TYPES,
  KNOWLEDGE_EVENT_TYPES,
  CUSTOMER_EVENT_TYPES,
  DEPLOYMENT_EVENT_TYPES,
  SUBSCRIPTION_EVENT_TYPES,
  TOKEN_EVENT_TYPES,
  REGISTRY_SESSION_EVENT_TYPES,
  ACCOUNT_EVENT_TYPES,
  CHAT_SESSION_EVENT_TYPES,
  TOTP_EVENT_TYPES,
  KEYS_EVENT_TYPES,
  PREKEY_CLAIM_EVENT_TYPES,
  BLOCK_EVENT_TYPES,
  REPORT_EVENT_TYPES,
  INVITE_EVENT_TYPES,
  COMMUNITY_EVENT_TYPES,
  GROUP_EVENT_TYPES,
  CHANNEL_EVENT_TYPES,
  MESSAGE_EVENT_TYPES,
  READ_CURSOR_EVENT_TYPES,
  SENDER_KEY_EVENT_TYPES,
  POLL_EVENT_TYPES,
  SCHEDULED_EVENT_TYPES,
  MEETING_EVENT_TYPES,
  REMINDER_EVENT_TYPES,
  CALENDAR_FEED_EVENT_TYPES,
  BOOKMARK_EVENT_TYPES,
  PUSH_SUBSCRIPTION_EVENT_TYPES,
  FILE_EVENT_TYPES,
  BLOCKED_HASH_EVENT_TYPES,
  UPLOAD_REFUSED_EVENT_TYPES,
  ASSET_EVENT_TYPES,
  ESTATE_EVENT_TYPES,
  CONVERSATION_EVENT_TYPES,
  CHAT_SECURITY_EVENT_TYPES,
  PROJECT_EVENT_TYPES,
  TASK_EVENT_TYPES,
  AGENT_EVENT_TYPES,
  MCP_SERVERS_EVENT_TYPES,
  UPDATE_EVENT_TYPES,
  BOT_TOKEN_EVENT_TYPES,
  BOT_TOKEN_USE_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  PURGE_EVENT_TYPES,
  REPORT_REVIEW_EVENT_TYPES,
  ANNOUNCEMENT_EVENT_TYPES,
  FEEDBACK_EVENT_TYPES,
];

export const EVENT_TYPES: readonly string[] = EVENT_LISTS.flat();

/** The current version of each event type past version 1. */
export const EVENT_VERSIONS: Readonly<Record<string, number>> = Object.assign(
  {},
  ...EVENT_LISTS.map((list) => list.versions),
);

/**
 * The log's contract: each type's current version and the upcasters from its older ones. The
 * slices declare both beside their unions; this is the one place they are put together.
 */
export const EVENT_CONTRACT = eventContract({
  types: EVENT_TYPES,
  versions: EVENT_VERSIONS,
  upcasters: [MESSAGE_UPCASTERS, POLL_UPCASTERS],
});

/** Event types no read model consumes, and why: they are read back only from their own stream or by auditors. */
export const AUDIT_ONLY: Readonly<Record<string, string>> = {
  UniqueValueReserved: 'the reservation stream itself is the state; the command that reserves reads it back',
  LocalRegistrationClaimed: 'the claim stream itself is the state; kept for auditors',
  FileUploadRefused: 'an upload refused for blocked content: nothing was stored; kept for the admin audit log',
};
