// The admin surface's use cases (instance admins and the owner; the routes check who calls):
// suspend and unsuspend an account, delete it, grant or revoke admin, reset its password; purge
// a message, a user's messages or a channel; quarantine and release a message; review a report;
// publish an announcement, and a user's dismissal of one. The slice's application layer and the
// only caller of the command runner for these routes: each function finds what its decision
// needs (the live account, the message, the channel, the report), then runs the command or
// records the event.

import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../../crypto/password.ts';
import { accountDecider, type AccountCommand } from '../../../domain/chat/accounts/decider.ts';
import {
  chatUserStream,
  announcementStream,
  purgeStream,
  keysStream,
  messageStream,
  reportStream,
} from '../../../domain/chat/streams.ts';
import type {
  AnnouncementEvent,
  PurgeEvent,
  PurgeTarget,
  ReportReviewEvent,
} from '../../../domain/chat/admin/events.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { messageDecider } from '../../../domain/chat/messages/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { chatUserById, type ChatUserRow } from '../../../projections/chat/accounts.ts';
import {
  announcementExists,
  announcements,
  anyMessage,
  channelExists,
  messageCount,
  reportById,
  type AnnouncementRow,
  type ReportRow,
} from '../../../projections/chat/admin.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { isUuid } from '../../shared/params.ts';
import { notFound } from '../access.ts';
import type { ChatDeps } from '../deps.ts';
import { revokeSessionsOf } from '../sessions/sessions.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'jwtSecret'>;

const iso = (deps: Deps) => deps.clock.now().toISOString();

/** A live (not deleted) account, or 404 `user_not_found`. Reads use it too. */
export async function liveUser(deps: Pick<ChatDeps, 'db'>, id: string): Promise<ChatUserRow> {
  const row = await chatUserById(deps.db, id);
  if (!row || row.deleted_at) throw notFound('user');
  return row;
}

/** The admin acting (`by`) on the account `user_id`. */
export interface OnUser {
  user_id: string;
  by: string;
}

/** Runs an account command on a live account. */
async function onAccount(
  deps: Deps,
  userId: string,
  command: AccountCommand,
  context: CommandContext,
): Promise<ChatUserRow> {
  const user = await liveUser(deps, userId);
  await deps.commands.run(chatUserStream(user.id), accountDecider, command, context);
  return user;
}

/** Suspend an account (the decider refuses the owner and the caller themself); its id. */
export async function suspendUser(
  deps: Deps,
  input: OnUser & { reason: string },
  context: CommandContext,
): Promise<string> {
  return (
    await onAccount(
      deps,
      input.user_id,
      { type: 'Suspend', reason: input.reason, by: input.by, at: iso(deps) },
      context,
    )
  ).id;
}

/** Lift a suspension; the account's id. */
export async function unsuspendUser(deps: Deps, input: OnUser, context: CommandContext): Promise<string> {
  return (await onAccount(deps, input.user_id, { type: 'Unsuspend', by: input.by, at: iso(deps) }, context)).id;
}

/** Delete an account (not the owner, not the caller): its keys and sessions go. */
export async function deleteUser(deps: Deps, input: OnUser, context: CommandContext): Promise<void> {
  const user = await liveUser(deps, input.user_id);
  if (user.is_owner) throw new ApiError(403, 'owner_protected', 'the instance owner cannot be deleted');
  if (user.id === input.by)
    throw new ApiError(400, 'cannot_delete_self', 'delete your own account with /api/account/delete');
  await deps.commands.run(chatUserStream(user.id), accountDecider, { type: 'Delete', at: iso(deps) }, context);
  await deps.commands.run(keysStream(user.id), keysDecider, { type: 'RemoveKeys', at: iso(deps) }, context);
  await revokeSessionsOf(deps, user.id, 'account_deleted', context);
}

/** Grant or revoke instance admin; the account's id. */
export async function setAdmin(
  deps: Deps,
  input: OnUser & { is_admin: boolean },
  context: CommandContext,
): Promise<string> {
  return (
    await onAccount(
      deps,
      input.user_id,
      { type: 'SetAdmin', is_admin: input.is_admin, by: input.by, at: iso(deps) },
      context,
    )
  ).id;
}

/** Reset an account's password; its sessions end. */
export async function resetPassword(
  deps: Deps,
  input: OnUser & { new_password: string },
  context: CommandContext,
): Promise<void> {
  const user = await liveUser(deps, input.user_id);
  const hash = await hashPassword(input.new_password);
  await deps.commands.run(
    chatUserStream(user.id),
    accountDecider,
    { type: 'ResetPassword', password_hash: hash, by: input.by, at: iso(deps) },
    context,
  );
  await revokeSessionsOf(deps, user.id, 'password_changed', context);
}

export interface Purged {
  purge_id: string;
  target_type: PurgeTarget;
  target_id: string;
  messages_purged: number;
}

async function purge(
  deps: Deps,
  target_type: PurgeTarget,
  target_id: string,
  count: number,
  by: string,
  context: CommandContext,
): Promise<Purged> {
  const purge_id = randomUUID();
  const event: PurgeEvent = { type: 'Purged', data: { purge_id, target_type, target_id, by, at: iso(deps) } };
  await deps.commands.record(purgeStream(purge_id), event, context);
  return { purge_id, target_type, target_id, messages_purged: count };
}

/** Hard-delete a message from the read models (404 `message_not_found`). */
export async function purgeMessage(
  deps: Deps,
  input: { message_id: string; by: string },
  context: CommandContext,
): Promise<Purged> {
  const message = await anyMessage(deps.db, input.message_id);
  if (!message) throw notFound('message');
  return purge(deps, 'message', message.id, 1, input.by, context);
}

/** Hard-delete every message a user (deleted or not) posted so far (404 `user_not_found`). */
export async function purgeUserMessages(
  deps: Deps,
  input: { user_id: string; by: string },
  context: CommandContext,
): Promise<Purged> {
  const user = await chatUserById(deps.db, input.user_id);
  if (!user) throw notFound('user');
  return purge(deps, 'user_messages', user.id, await messageCount(deps.db, 'sender', user.id), input.by, context);
}

/** Hard-delete a channel with everything in it (404 `channel_not_found`). */
export async function purgeChannel(
  deps: Deps,
  input: { channel_id: string; by: string },
  context: CommandContext,
): Promise<Purged> {
  const id = input.channel_id;
  if (!(await channelExists(deps.db, id))) throw notFound('channel');
  return purge(deps, 'channel', id, await messageCount(deps.db, 'channel', id), input.by, context);
}

/** Quarantine (`quarantine`, with an optional reason) or release a message; the message's state. */
export async function quarantineMessage(
  deps: Deps,
  input: { message_id: string; quarantine: boolean; reason: string | null; by: string },
  context: CommandContext,
): Promise<{ message_id: string; channel_id: string; quarantined: boolean }> {
  const message = await anyMessage(deps.db, input.message_id);
  if (!message) throw notFound('message');
  await deps.commands.run(
    messageStream(message.id),
    messageDecider,
    input.quarantine
      ? { type: 'Quarantine', by: input.by, reason: input.reason, at: iso(deps) }
      : { type: 'Unquarantine', by: input.by, at: iso(deps) },
    context,
  );
  return { message_id: message.id, channel_id: message.channel_id, quarantined: input.quarantine };
}

/** Resolve or dismiss a report (404 `report_not_found`); the report as reviewed. */
export async function reviewReport(
  deps: Deps,
  input: { report_id: string; status: 'resolved' | 'dismissed'; note?: string | undefined; by: string },
  context: CommandContext,
): Promise<ReportRow> {
  const report = await reportById(deps.db, input.report_id);
  if (!report) throw new ApiError(404, 'report_not_found', 'no such report');
  const event: ReportReviewEvent = {
    type: 'ReportReviewed',
    data: { report_id: report.id, status: input.status, note: input.note || null, by: input.by, at: iso(deps) },
  };
  await deps.commands.record(reportStream(report.id), event, context);
  return (await reportById(deps.db, report.id))!;
}

/** Publish an announcement to every user (an expiry, if any, in the future); the announcement. */
export async function publishAnnouncement(
  deps: Deps,
  input: { title: string; body: string; expires_at?: string | undefined; by: string },
  context: CommandContext,
): Promise<AnnouncementRow> {
  if (input.expires_at && Date.parse(input.expires_at) <= deps.clock.now().getTime())
    throw new ApiError(400, 'validation_failed', 'expires_at must be in the future');
  const id = randomUUID();
  const event: AnnouncementEvent = {
    type: 'AnnouncementPublished',
    data: {
      announcement_id: id,
      title: input.title,
      body: input.body,
      expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
      by: input.by,
      at: iso(deps),
    },
  };
  await deps.commands.record(announcementStream(id), event, context);
  return (await announcements(deps.db)).find((a) => a.id === id)!;
}

/** A user dismisses an announcement (404 `announcement_not_found`; repeating is harmless). */
export async function dismissAnnouncement(
  deps: Deps,
  input: { announcement_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  const id = input.announcement_id;
  if (!isUuid(id) || !(await announcementExists(deps.db, id)))
    throw new ApiError(404, 'announcement_not_found', 'no such announcement');
  const event: AnnouncementEvent = {
    type: 'AnnouncementDismissed',
    data: { announcement_id: id, user_id: input.user_id, at: iso(deps) },
  };
  await deps.commands.record(announcementStream(id), event, context);
}
