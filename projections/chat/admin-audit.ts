// The chat admin audit log (`chat_admin_audit`, GET /api/admin/audit-log): every admin and
// moderation action, one row per event, in log order, with the actor from the event's metadata,
// the action, its target and time, and the event's data without hashes or sealed values.
//
// Instance administration (suspensions, admin grants, purges, quarantines, files, blocked hashes,
// bots and tokens, invites, reports, announcements, feedback triage, updates) and community and
// channel moderation (kicks, bans and unbans, timeouts, warnings, role and ownership changes,
// nicknames set for others, channel settings such as archive, read-only and slow mode, pins,
// deletions of other people's messages, closing another member's poll, deleting a channel, group
// or community) are audited. What a member does to their own things (leaving, deleting their own
// message, closing their own poll, renaming themselves) is not: the event says which it was, so
// the decision is made from the event alone and a rebuild equals the live table.

import type { AccountEvent } from '../../domain/chat/accounts/events.ts';
import type {
  AnnouncementEvent,
  FeedbackEvent,
  PurgeEvent,
  ReportReviewEvent,
} from '../../domain/chat/admin/events.ts';
import type { BotTokenEvent } from '../../domain/chat/bots/events.ts';
import type { ChannelEvent } from '../../domain/chat/channels/events.ts';
import type { CommunityEvent } from '../../domain/chat/communities/events.ts';
import type { BlockedHashEvent, FileEvent } from '../../domain/chat/files/events.ts';
import type { GroupEvent } from '../../domain/chat/groups/events.ts';
import type { InviteEvent } from '../../domain/chat/invites/events.ts';
import type { MessageEvent } from '../../domain/chat/messages/events.ts';
import type { PollEvent } from '../../domain/chat/polls/events.ts';
import type { WebhookEvent } from '../../domain/chat/webhooks/events.ts';
import type { UpdateEvent } from '../../domain/updates/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

type Audited =
  | Extract<
      AccountEvent,
      {
        type:
          | 'UserSuspended'
          | 'UserUnsuspended'
          | 'AdminRoleChanged'
          | 'PasswordReplaced'
          | 'AccountDeleted'
          | 'BotRegistered';
      }
    >
  | BotTokenEvent
  | WebhookEvent
  | PurgeEvent
  | ReportReviewEvent
  | Extract<AnnouncementEvent, { type: 'AnnouncementPublished' }>
  | Extract<FeedbackEvent, { type: 'FeedbackStatusChanged' }>
  | Extract<InviteEvent, { type: 'RegistrationInviteCreated' | 'RegistrationInviteRevoked' }>
  | Extract<MessageEvent, { type: 'MessageQuarantined' | 'MessageUnquarantined' | 'MessageDeleted' }>
  | Extract<
      CommunityEvent,
      {
        type:
          | 'CommunityMemberBanned'
          | 'CommunityMemberUnbanned'
          | 'CommunityTimeoutImposed'
          | 'CommunityTimeoutLifted'
          | 'CommunityMemberWarned'
          | 'CommunityMemberDeparted'
          | 'CommunityMemberJoined'
          | 'CommunityMemberRoleChanged'
          | 'CommunityMemberNicknameChanged'
          | 'CommunityOwnershipTransferred'
          | 'CommunityDeleted';
      }
    >
  | Extract<
      ChannelEvent,
      {
        type:
          | 'ChannelUpdated'
          | 'ChannelDeleted'
          | 'ChannelMemberDeparted'
          | 'ChannelMemberRoleChanged'
          | 'ChannelOwnershipTransferred'
          | 'ChannelMemberBanned'
          | 'ChannelMemberUnbanned'
          | 'MessagePinned'
          | 'MessageUnpinned';
      }
    >
  | Extract<GroupEvent, { type: 'GroupDeleted' | 'GroupOwnershipTransferred' }>
  | Extract<PollEvent, { type: 'PollClosed' }>
  | Extract<FileEvent, { type: 'FileDeleted' | 'FileQuarantined' | 'FileUnquarantined' }>
  | BlockedHashEvent
  | Extract<UpdateEvent, { type: 'UpdateApplyRequested' }>;

const AUDITED: Audited['type'][] = [
  'UserSuspended',
  'UserUnsuspended',
  'AdminRoleChanged',
  'PasswordReplaced',
  'AccountDeleted',
  'BotRegistered',
  'BotTokenMinted',
  'BotTokenRevoked',
  'WebhookCreated',
  'WebhookUpdated',
  'WebhookDeleted',
  'Purged',
  'ReportReviewed',
  'AnnouncementPublished',
  'FeedbackStatusChanged',
  'RegistrationInviteCreated',
  'RegistrationInviteRevoked',
  'MessageQuarantined',
  'MessageUnquarantined',
  'MessageDeleted',
  'CommunityMemberBanned',
  'CommunityMemberUnbanned',
  'CommunityTimeoutImposed',
  'CommunityTimeoutLifted',
  'CommunityMemberWarned',
  'CommunityMemberDeparted',
  'CommunityMemberJoined',
  'CommunityMemberRoleChanged',
  'CommunityMemberNicknameChanged',
  'CommunityOwnershipTransferred',
  'CommunityDeleted',
  'ChannelUpdated',
  'ChannelDeleted',
  'ChannelMemberDeparted',
  'ChannelMemberRoleChanged',
  'ChannelOwnershipTransferred',
  'ChannelMemberBanned',
  'ChannelMemberUnbanned',
  'MessagePinned',
  'MessageUnpinned',
  'GroupDeleted',
  'GroupOwnershipTransferred',
  'PollClosed',
  'FileDeleted',
  'FileQuarantined',
  'FileUnquarantined',
  'HashBlocked',
  'HashUnblocked',
  'UpdateApplyRequested',
];

/** `UserSuspended` → `user_suspended`. */
export const actionOf = (type: string) => type.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();

type Target = [type: string | null, id: string | null];

/** The target named by the event's data: the most specific id it carries. */
function targetOf(data: Record<string, unknown>): Target {
  for (const [key, type] of [
    ['target_id', null],
    ['user_id', 'user'],
    ['token_id', 'bot_token'],
    ['webhook_id', 'webhook'],
    ['report_id', 'report'],
    ['message_id', 'message'],
    ['announcement_id', 'announcement'],
    ['feedback_id', 'feedback'],
    ['invite_id', 'invite'],
    ['poll_id', 'poll'],
    ['file_id', 'file'],
    ['channel_id', 'channel'],
    ['group_id', 'group'],
    ['community_id', 'community'],
  ] as const) {
    if (typeof data[key] === 'string') return [type ?? (data.target_type as string), data[key] as string];
  }
  return [null, null];
}

interface Entry {
  action: string;
  target: Target;
}

/**
 * The audit entry an event makes, or null when it is not an admin or moderation action: a
 * member leaving (or removed because they left the community), deleting their own message,
 * closing their own poll, renaming themselves, joining by invite, or a file deleted by its owner.
 * A ban's departure is recorded once, as the ban.
 */
export function auditEntryOf(event: Recorded<Audited>): Entry | null {
  const plain = (): Entry => ({
    action: actionOf(event.type),
    target: targetOf(event.data as Record<string, unknown>),
  });
  switch (event.type) {
    case 'MessageDeleted': {
      const d = event.data;
      // sender_id is null on a version 1 event (messageDeletedFromV1): whose message it was is unknown, so it is left out.
      return d.sender_id !== null && d.sender_id !== d.by ? plain() : null;
    }
    case 'ChannelMemberDeparted':
      return event.data.reason === 'kicked'
        ? { action: 'channel_member_kicked', target: ['user', event.data.user_id] }
        : null;
    case 'CommunityMemberDeparted':
      return event.data.reason === 'kicked'
        ? { action: 'community_member_kicked', target: ['user', event.data.user_id] }
        : null;
    case 'CommunityMemberJoined':
      return event.data.added_by ? { action: 'community_member_added', target: ['user', event.data.user_id] } : null;
    case 'CommunityMemberNicknameChanged':
      return event.data.by !== event.data.user_id ? plain() : null;
    case 'ChannelOwnershipTransferred':
    case 'CommunityOwnershipTransferred':
    case 'GroupOwnershipTransferred':
      return { action: actionOf(event.type), target: ['user', event.data.to] };
    case 'PollClosed': {
      const d = event.data;
      // creator_id is null on a version 1 event (pollClosedFromV1): whose poll it was is unknown, so it is left out.
      return d.reason === 'closed' && d.creator_id !== null && d.closed_by !== d.creator_id ? plain() : null;
    }
    case 'FileDeleted':
      return event.data.by_admin ? plain() : null;
    case 'HashBlocked':
    case 'HashUnblocked':
      return { action: actionOf(event.type), target: ['blocked_hash', event.data.id] };
    case 'UpdateApplyRequested':
      // Both services write it; this log is the chat service's.
      return event.data.service === 'chat'
        ? { action: event.data.action, target: ['update', event.data.apply_id] }
        : null;
    default:
      return plain();
  }
}

/** Data keys never copied into `details`: secrets' hashes and sealed values, the time (a column), and poll tallies (not an action's facts). */
const HIDDEN = /_hash$|_sealed$|^at$|^results$|^voters$|^envelope$/;

export const chatAdminAuditProjection = defineProjection<Audited>({
  name: 'chat_admin_audit',
  handles: AUDITED,
  tables: ['chat_admin_audit'],
  async apply(event, tx) {
    const entry = auditEntryOf(event);
    if (!entry) return;
    const data = event.data as Record<string, unknown>;
    const details = Object.fromEntries(Object.entries(data).filter(([k]) => !HIDDEN.test(k)));
    const actor = (event.metadata as { actor?: { id?: string } }).actor?.id ?? null;
    await tx.query(
      `INSERT INTO chat_admin_audit (log_commit, log_prepare, action, actor_id, target_type, target_id, details, created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
      [
        event.position.commit.toString(),
        event.position.prepare.toString(),
        entry.action,
        actor,
        entry.target[0],
        entry.target[1],
        JSON.stringify(details),
        data.at,
      ],
    );
  },
});

export interface AuditRow {
  action: string;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

export async function auditLog(
  db: Pool,
  f: { action: string | null; user_id: string | null; limit: number; offset: number },
): Promise<{ rows: AuditRow[]; total: number }> {
  const where = `($1::text IS NULL OR action = $1) AND ($2::text IS NULL OR actor_id = $2 OR target_id = $2)`;
  const [{ rows }, count] = await Promise.all([
    db.query<AuditRow>(
      `SELECT action, actor_id, target_type, target_id, details, created_at FROM chat_admin_audit WHERE ${where}
      ORDER BY log_commit DESC, log_prepare DESC LIMIT $3 OFFSET $4`,
      [f.action, f.user_id, f.limit, f.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM chat_admin_audit WHERE ${where}`, [f.action, f.user_id]),
  ]);
  return { rows, total: count.rows[0]!.n };
}
