// Scheduled messages' use cases: schedule, edit, cancel. The slice's application layer and the
// only caller of the command runner for the routes (delivery is the reactor's, ./reactor.ts and
// ./fire.ts): each function checks send_at, the caller's place in the channel or ownership of
// the scheduled message, and the thread root, runs the scheduled decider, and reads the row back.

import { randomUUID } from 'node:crypto';
import { SCHEDULE_MAX_AHEAD_MS, scheduledDecider } from '../../../domain/chat/scheduled/decider.ts';
import type { ScheduledContent } from '../../../domain/chat/scheduled/events.ts';
import { scheduledStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { messageIn } from '../../../projections/chat/messages.ts';
import { scheduledById, type ScheduledRow } from '../../../projections/chat/scheduled.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { notFound, postableChannel } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

const coded = (status: 400 | 404 | 409, code: string, message: string) => new ApiError(status, code, message, { code });

function checkSendAt(deps: Deps, sendAt: string): string {
  const at = Date.parse(sendAt);
  const now = deps.clock.now().getTime();
  if (at <= now) throw coded(400, 'send_at_in_past', 'send_at must be in the future');
  if (at > now + SCHEDULE_MAX_AHEAD_MS) throw coded(400, 'send_at_too_far', 'send_at is at most one year ahead');
  return new Date(at).toISOString();
}

/** A thread root of the channel; a reply names its root (threads are one level). */
async function threadRoot(db: Pool, channelId: string, id: string | null | undefined): Promise<string | null> {
  if (!id) return null;
  const parent = await messageIn(db, channelId, id);
  if (!parent) throw notFound('message');
  return parent.thread_root_id ?? parent.id;
}

/** One of the user's scheduled messages, not cancelled (404 otherwise). */
async function own(db: Pool, id: string, userId: string): Promise<ScheduledRow> {
  const row = isUuid(id) ? await scheduledById(db, id) : null;
  if (!row || row.sender_id !== userId || row.status === 'cancelled')
    throw coded(404, 'scheduled_message_not_found', 'no such scheduled message');
  return row;
}

export interface Content {
  ciphertext: string;
  send_at: string;
  thread_root_id?: string | null;
  mentions?: string[];
  file_ids?: string[];
}

/** Schedules a message: the caller must be able to post in the channel now (without slow mode). */
export async function scheduleMessage(
  deps: Deps,
  input: Content & { channel_id: string; user_id: string },
  context: CommandContext,
): Promise<ScheduledRow> {
  const send_at = checkSendAt(deps, input.send_at);
  const now = deps.clock.now();
  const access = await postableChannel(deps.db, input.channel_id, input.user_id, now);
  const id = randomUUID();
  await deps.commands.run(
    scheduledStream(id),
    scheduledDecider,
    {
      type: 'Schedule',
      id,
      channel_id: access.channel.id,
      sender_id: input.user_id,
      ciphertext: input.ciphertext,
      send_at,
      thread_root_id: await threadRoot(deps.db, access.channel.id, input.thread_root_id),
      mentions: [...new Set(input.mentions ?? [])],
      file_ids: [...new Set(input.file_ids ?? [])],
      at: now.toISOString(),
    },
    context,
  );
  return (await scheduledById(deps.db, id))!;
}

/** Changes one of the caller's pending (or held) scheduled messages. */
export async function editScheduled(
  deps: Deps,
  input: Partial<Content> & { id: string; user_id: string },
  context: CommandContext,
): Promise<ScheduledRow> {
  const row = await own(deps.db, input.id, input.user_id);
  const changes: Partial<ScheduledContent> = {};
  if (input.ciphertext !== undefined) changes.ciphertext = input.ciphertext;
  if (input.send_at !== undefined) changes.send_at = checkSendAt(deps, input.send_at);
  if (input.thread_root_id !== undefined)
    changes.thread_root_id = await threadRoot(deps.db, row.channel_id, input.thread_root_id);
  if (input.mentions !== undefined) changes.mentions = [...new Set(input.mentions)];
  if (input.file_ids !== undefined) changes.file_ids = [...new Set(input.file_ids)];
  await deps.commands.run(
    scheduledStream(row.id),
    scheduledDecider,
    { type: 'Edit', actor_id: input.user_id, changes, at: deps.clock.now().toISOString() },
    context,
  );
  return (await scheduledById(deps.db, row.id))!;
}

export async function cancelScheduled(
  deps: Deps,
  input: { id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  const row = await own(deps.db, input.id, input.user_id);
  await deps.commands.run(
    scheduledStream(row.id),
    scheduledDecider,
    { type: 'Cancel', actor_id: input.user_id, at: deps.clock.now().toISOString() },
    context,
  );
}
