// Messages' use cases: post, edit, delete, pin, unpin, and moving a read cursor. The slice's
// application layer and the only caller of the command runner for it: each function gathers the
// read-model facts its decision needs (once, in the order the refusals are answered), runs the
// command, and returns what the route answers. Resource authorisation (membership, the
// moderator's rank) is here; the sender rules are the message decider's.

import { randomUUID } from 'node:crypto';
import { channelDecider } from '../../../domain/chat/channels/decider.ts';
import { channelStream, messageStream, readCursorStream } from '../../../domain/chat/streams.ts';
import { MANAGER } from '../../../domain/chat/channels/roles.ts';
import { messageDecider } from '../../../domain/chat/messages/decider.ts';
import type { ReadCursorEvent } from '../../../domain/chat/messages/events.ts';
import { checkPost } from '../../../domain/chat/messages/policy.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { channelMemberIds } from '../../../projections/chat/channels.ts';
import { attachableFiles } from '../../../projections/chat/files.ts';
import { lastPostedAt, messageIn, postedRow, type MessageRow } from '../../../projections/chat/messages.ts';
import { ApiError, rateLimited } from '../../shared/http-errors.ts';
import { channelFor, memberChannel, notFound, type ChannelAccess } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

/** A live message of a channel (404 `message_not_found` otherwise); reads use it too. */
export async function channelMessage(db: Pool, channelId: string, messageId: string): Promise<MessageRow> {
  const row = isUuid(messageId) ? await messageIn(db, channelId, messageId) : null;
  if (!row) throw notFound('message');
  return row;
}

export interface PostMessage {
  channel_id: string;
  user_id: string;
  ciphertext: string;
  thread_root_id?: string | null;
  mentions?: string[];
  file_ids?: string[];
}

/** Posts a message: the channel's posting policy, the thread root, the mentioned members and the attachable files, then Post. */
export async function postMessage(deps: Deps, input: PostMessage, context: CommandContext): Promise<MessageRow> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  const now = deps.clock.now();
  try {
    checkPost(
      {
        member: access.member,
        rank: access.rank,
        archived: access.channel.archived,
        read_only: access.channel.read_only,
        slow_mode_secs: access.channel.slow_mode_secs,
        timed_out_until: access.timed_out_until,
        last_posted_at:
          access.channel.slow_mode_secs > 0 && access.member
            ? await lastPostedAt(deps.db, access.channel.id, input.user_id)
            : null,
      },
      now,
    );
  } catch (error) {
    if (error instanceof DomainError && error.code === 'slow_mode')
      throw rateLimited(Number(error.details.retry_after_ms) / 1000, error.message);
    throw error;
  }
  let root: string | null = null;
  if (input.thread_root_id) {
    const parent = await channelMessage(deps.db, access.channel.id, input.thread_root_id);
    root = parent.thread_root_id ?? parent.id;
  }
  const mentions = input.mentions?.length
    ? await channelMemberIds(deps.db, access.channel.id, [...new Set(input.mentions)])
    : [];
  const ordered = [...new Set(input.mentions ?? [])].filter((id) => mentions.includes(id));
  const fileIds = [...new Set(input.file_ids ?? [])];
  if (
    fileIds.length &&
    (await attachableFiles(deps.db, fileIds, input.user_id, access.channel.id)).length !== fileIds.length
  ) {
    throw new ApiError(
      400,
      'invalid_file_ids',
      "file_ids: every file must be live, not quarantined, and uploaded to this channel (or the poster's own, without a channel)",
      { code: 'invalid_file_ids' },
    );
  }
  // The message's stream is new (the id is the server's), so the runner need not read it; and
  // the response is the row the MessagePosted writes, which the read-your-writes wait has made
  // visible to the poster's next read: no read-back.
  const id = randomUUID();
  const { events } = await deps.commands.run(
    messageStream(id),
    messageDecider,
    {
      type: 'Post',
      message_id: id,
      channel_id: access.channel.id,
      sender_id: input.user_id,
      ciphertext: input.ciphertext,
      kind: 'text',
      thread_root_id: root,
      mentions: ordered,
      via_webhook: false,
      has_file: fileIds.length > 0,
      file_ids: fileIds,
      at: now.toISOString(),
    },
    context,
    { known: { state: messageDecider.initialState(), revision: 'no_stream' } },
  );
  const posted = events.find((e) => e.type === 'MessagePosted');
  if (!posted) throw new Error(`message ${id}: Post appended no MessagePosted`);
  return postedRow(posted.data);
}

export interface MessageRef {
  channel_id: string;
  message_id: string;
  user_id: string;
}

/** Edits a message (the decider keeps it to its sender). */
export async function editMessage(
  deps: Deps,
  input: MessageRef & { ciphertext: string },
  context: CommandContext,
): Promise<MessageRow> {
  const access = await memberChannel(deps.db, input.channel_id, input.user_id);
  await channelMessage(deps.db, access.channel.id, input.message_id);
  await deps.commands.run(
    messageStream(input.message_id),
    messageDecider,
    { type: 'Edit', actor_id: input.user_id, ciphertext: input.ciphertext, at: deps.clock.now().toISOString() },
    context,
  );
  return channelMessage(deps.db, access.channel.id, input.message_id);
}

/** Deletes a message: its sender, or a channel moderator and above (who need not be a member). */
export async function deleteMessage(deps: Deps, input: MessageRef, context: CommandContext): Promise<void> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  if (!access.member && access.rank < MANAGER)
    throw new ApiError(403, 'not_a_member', 'you are not a member of this channel');
  await channelMessage(deps.db, access.channel.id, input.message_id);
  await deps.commands.run(
    messageStream(input.message_id),
    messageDecider,
    { type: 'Delete', actor_id: input.user_id, moderator: access.rank >= MANAGER, at: deps.clock.now().toISOString() },
    context,
  );
}

const pinCommand = (
  deps: Deps,
  access: ChannelAccess,
  type: 'Pin' | 'Unpin',
  input: MessageRef,
  context: CommandContext,
) =>
  deps.commands.run(
    channelStream(access.channel.id),
    channelDecider,
    {
      type,
      message_id: input.message_id,
      actor_id: input.user_id,
      community_role: access.community_role,
      at: deps.clock.now().toISOString(),
    },
    context,
  );

/** Pins a live message of the channel (the channel decider keeps it to moderators, at most 50). */
export async function pinMessage(deps: Deps, input: MessageRef, context: CommandContext): Promise<void> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  await channelMessage(deps.db, access.channel.id, input.message_id);
  await pinCommand(deps, access, 'Pin', input, context);
}

/** Unpins a message; the message need not be live any more (a deleted message's pin can go). */
export async function unpinMessage(deps: Deps, input: MessageRef, context: CommandContext): Promise<void> {
  const access = await channelFor(deps.db, input.channel_id, input.user_id);
  if (!isUuid(input.message_id)) throw notFound('message');
  await pinCommand(deps, access, 'Unpin', input, context);
}

/** Records that a member has read the channel up to a live message of it. */
export async function moveReadCursor(deps: Deps, input: MessageRef, context: CommandContext): Promise<void> {
  const access = await memberChannel(deps.db, input.channel_id, input.user_id);
  await channelMessage(deps.db, access.channel.id, input.message_id);
  const event: ReadCursorEvent = {
    type: 'ReadCursorMoved',
    data: {
      channel_id: access.channel.id,
      user_id: input.user_id,
      message_id: input.message_id,
      at: deps.clock.now().toISOString(),
    },
  };
  await deps.commands.record(readCursorStream(access.channel.id, input.user_id), event, context);
}
