// The audit log (spec: "Audit entry"): one row per security event, newest first by the log
// position of the event it came from, which each row keeps (`commit_pos`, `prepare_pos`) so an
// entry can be checked against the log (and a hash chain over it). It shows the chat pipeline's
// events (prompt injections, rate-limit hits, leaks, cost-cap blocks), the identity slice's
// (failed logins, key rotations and refused rotation attempts), and the releases an admin started
// on this service (`update_applied`; the chat service's own go to its admin audit).
//
// `detail` is built here, field by field, for each type: a new field of an event reaches the
// audit API only when this file names it (a sealed key, a hash or a message never leaks in by
// accident).

import { CHAT_SECURITY_EVENT_TYPES, type ChatSecurityEvent } from '../../domain/orchestration/agent-chat/events.ts';
import { CHATSVC_AUDIT_EVENT_TYPES, type ChatsvcAuditEvent } from '../../domain/orchestration/chatsvc/events.ts';
import type { SecurityEvent, UserEvent } from '../../domain/orchestration/users/events.ts';
import type { UpdateEvent } from '../../domain/updates/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { Position } from '../../infra/eventstore/position.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

type AuditedEvent =
  | ChatSecurityEvent
  | ChatsvcAuditEvent
  | SecurityEvent
  | Extract<UserEvent, { type: 'UserApiKeyRotated' }>
  | Extract<UpdateEvent, { type: 'UpdateApplyRequested' }>;

interface Entry {
  event_type: string;
  severity: Severity;
  profile_slug: string | null;
  detail: Record<string, unknown>;
  at: string;
}

/** The entry an event makes, or null when it is not this service's (another service's update). */
function entryOf(event: Recorded<AuditedEvent>): Entry | null {
  switch (event.type) {
    case 'PromptInjectionDetected': {
      const d = event.data;
      return {
        event_type: 'prompt_injection_detected',
        severity: 'warning',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: { surface: d.surface, client: d.client, patterns: d.patterns, excerpt: d.excerpt },
      };
    }
    case 'ChatRateLimitExceeded': {
      const d = event.data;
      return {
        event_type: 'rate_limit_hit',
        severity: 'info',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: { surface: d.surface, client: d.client, limit: d.limit, retry_after: d.retry_after },
      };
    }
    case 'PromptLeakDetected': {
      const d = event.data;
      return {
        event_type: 'leak_detected',
        severity: 'critical',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: {
          surface: d.surface,
          client: d.client,
          conversation_id: d.conversation_id,
          detector: d.detector,
          excerpt: d.excerpt,
        },
      };
    }
    case 'CostCapBlocked': {
      const d = event.data;
      return {
        event_type: 'cost_cap_blocked',
        severity: 'warning',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: { surface: d.surface, client: d.client, cost_today_cents: d.cost_today_cents, cap_cents: d.cap_cents },
      };
    }
    case 'ChatsvcToolCalled': {
      const d = event.data;
      return {
        event_type: 'chatsvc_tool_call',
        severity: d.ok ? 'info' : 'warning',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: {
          tool: d.tool,
          source: d.source,
          integration_id: d.integration_id,
          target_id: d.target_id,
          ok: d.ok,
          status: d.status,
          error_msg: d.error_msg,
        },
      };
    }
    case 'ToolLoopCompleted': {
      const d = event.data;
      return {
        event_type: 'tool_loop_completed',
        severity: 'info',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: {
          surface: d.surface,
          tool_calls: d.tool_calls,
          model_calls: d.model_calls,
          cost_cents: d.cost_cents,
          hit_cap: d.hit_cap,
          hit_max_iterations: d.hit_max_iterations,
        },
      };
    }
    case 'ChatsvcIdentityKeyChanged': {
      const d = event.data;
      return {
        event_type: 'chatsvc_identity_key_changed',
        severity: 'warning',
        profile_slug: d.profile_slug,
        at: d.at,
        detail: {
          integration_id: d.integration_id,
          peer_user_id: d.peer_user_id,
          old_fingerprint: d.old_fingerprint,
          new_fingerprint: d.new_fingerprint,
        },
      };
    }
    case 'LoginFailed': {
      const d = event.data;
      return {
        event_type: 'login_failed',
        severity: 'warning',
        profile_slug: null,
        at: d.at,
        detail: { user_id: d.user_id, reason: d.reason, peer: d.peer },
      };
    }
    case 'ApiKeyRotationRefused': {
      const d = event.data;
      return {
        event_type: 'api_key_rotation_refused',
        severity: 'warning',
        profile_slug: null,
        at: d.at,
        detail: {
          actor_id: d.actor_id,
          actor_kind: d.actor_kind,
          target_user_id: d.target_user_id,
          route: d.route,
          reason: d.reason,
        },
      };
    }
    case 'UserApiKeyRotated': {
      const d = event.data;
      return {
        event_type: 'api_key_rotated',
        severity: 'info',
        profile_slug: null,
        at: d.at,
        detail: { user_id: d.user_id, rotated_by: d.rotated_by, reason: d.reason },
      };
    }
    case 'UpdateApplyRequested': {
      // Both services write it (one log); a chat-started release is in the chat's admin audit.
      const d = event.data;
      if (d.service !== 'orch') return null;
      return {
        event_type: d.action,
        severity: 'info',
        profile_slug: null,
        at: d.at,
        detail: {
          apply_id: d.apply_id,
          target_version: d.target_version,
          from_version: d.from_version,
          requested_by: d.requested_by,
        },
      };
    }
  }
}

export const AUDITED_EVENT_TYPES = [
  ...CHAT_SECURITY_EVENT_TYPES,
  ...CHATSVC_AUDIT_EVENT_TYPES,
  'LoginFailed',
  'ApiKeyRotationRefused',
  'UserApiKeyRotated',
  'UpdateApplyRequested',
] as const satisfies readonly AuditedEvent['type'][];

export const auditLogProjection = defineProjection<AuditedEvent>({
  name: 'audit_log',
  handles: AUDITED_EVENT_TYPES,
  tables: ['audit_log'],
  async apply(event, tx) {
    const e = entryOf(event);
    if (!e) return;
    await tx.query(
      `INSERT INTO audit_log (event_id, commit_pos, prepare_pos, stream_id, event_type, severity, profile_slug, actor, detail, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        event.id,
        event.position.commit.toString(),
        event.position.prepare.toString(),
        event.stream,
        e.event_type,
        e.severity,
        e.profile_slug,
        JSON.stringify({ kind: event.metadata.actor.kind, id: event.metadata.actor.id }),
        JSON.stringify(e.detail),
        e.at,
      ],
    );
  },
});

// --- queries ---------------------------------------------------------------------------------

export interface AuditRow {
  id: string;
  event_type: string;
  severity: Severity;
  profile_slug: string | null;
  actor: { kind: string; id: string | null };
  detail: Record<string, unknown>;
  created_at: Date;
  /** `<commit>/<prepare>`: the global log position of the event the entry came from. */
  position: string;
  stream_id: string;
}

/**
 * The newest `limit` entries, newest first (by log position): of one severity when given, and
 * strictly older than the position `before` when given (the previous page's last `position`).
 */
export async function recentAudit(
  pool: Pool,
  limit: number,
  filter: { severity?: Severity; before?: Position } = {},
): Promise<AuditRow[]> {
  const { rows } = await pool.query<AuditRow>(
    `SELECT event_id AS id, event_type, severity, profile_slug, actor, detail, created_at, commit_pos::text || '/' || prepare_pos::text AS position, stream_id
     FROM audit_log
     WHERE ($2::text IS NULL OR severity = $2) AND ($3::bigint IS NULL OR (commit_pos, prepare_pos) < ($3::bigint, $4::bigint))
     ORDER BY commit_pos DESC, prepare_pos DESC LIMIT $1`,
    [
      limit,
      filter.severity ?? null,
      filter.before?.commit.toString() ?? null,
      filter.before?.prepare.toString() ?? null,
    ],
  );
  return rows;
}
