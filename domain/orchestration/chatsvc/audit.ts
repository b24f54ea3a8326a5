// The connector's audit facts (spec 1, "Events"): each on its own `audit-<uuid>` stream, shown by
// the audit route. No token, no message text: a tool call names its tool, target and status;
// a tool loop its counts.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type ToolSource = 'api' | 'model';

export type ChatsvcAuditEvent =
  | DomainEvent<'ChatsvcToolCalled', {
    profile_id: string; profile_slug: string; integration_id: string; tool: string; source: ToolSource;
    target_id: string | null; ok: boolean; status: number; error_msg: string | null; at: string;
  }>
  | DomainEvent<'ToolLoopCompleted', {
    profile_id: string; profile_slug: string; surface: string; tool_calls: number; model_calls: number;
    cost_cents: number; hit_cap: boolean; hit_max_iterations: boolean; at: string;
  }>
  | DomainEvent<'ChatsvcIdentityKeyChanged', {
    profile_id: string; profile_slug: string; integration_id: string; peer_user_id: string;
    old_fingerprint: string; new_fingerprint: string; at: string;
  }>;

export const CHATSVC_AUDIT_EVENT_TYPES = eventTypes<ChatsvcAuditEvent>()(['ChatsvcToolCalled', 'ToolLoopCompleted', 'ChatsvcIdentityKeyChanged']);
