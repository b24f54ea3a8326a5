// Bookmarks' use cases: add and remove. The slice's application layer and the only caller of
// the command runner for it: adding finds the message and checks the caller can read it (404
// otherwise, so a bookmark never reveals a message), then runs the bookmark decider.

import { bookmarkDecider } from '../../../domain/chat/bookmarks/decider.ts';
import { bookmarkStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { channelFor, notFound } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

/** A live message the user may read (a member of its live channel), else 404. */
async function readableMessage(
  db: Pool,
  messageId: string,
  userId: string,
): Promise<{ id: string; channel_id: string }> {
  if (!isUuid(messageId)) throw notFound('message');
  const { rows } = await db.query<{ id: string; channel_id: string }>(
    'SELECT id, channel_id FROM chat_messages WHERE id = $1 AND deleted_at IS NULL',
    [messageId],
  );
  const message = rows[0];
  if (!message) throw notFound('message');
  const access = await channelFor(db, message.channel_id, userId).catch(() => null);
  if (!access?.member) throw notFound('message');
  return message;
}

/** Bookmarks a message the caller can read; `created` is false when it was bookmarked already. */
export async function addBookmark(deps: Deps, input: { user_id: string; message_id: string }, context: CommandContext) {
  const message = await readableMessage(deps.db, input.message_id, input.user_id);
  const result = await deps.commands.run(
    bookmarkStream(input.user_id, message.id),
    bookmarkDecider,
    {
      type: 'Add',
      user_id: input.user_id,
      message_id: message.id,
      channel_id: message.channel_id,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return { message, created: result.events.length > 0 };
}

/** Removes a bookmark, whether or not there was one. */
export async function removeBookmark(
  deps: Deps,
  input: { user_id: string; message_id: string },
  context: CommandContext,
): Promise<void> {
  if (!isUuid(input.message_id)) throw notFound('message');
  await deps.commands.run(
    bookmarkStream(input.user_id, input.message_id),
    bookmarkDecider,
    { type: 'Remove', user_id: input.user_id, message_id: input.message_id, at: deps.clock.now().toISOString() },
    context,
  );
}
