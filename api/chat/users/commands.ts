// Other users' use cases: block, unblock, report. The slice's application layer and the only
// caller of the command runner for it (search and profiles only read): each function checks the
// named user exists, then runs the block decider or records the report.

import { randomUUID } from 'node:crypto';
import { blockDecider } from '../../../domain/chat/users/decider.ts';
import type { ReportEvent } from '../../../domain/chat/users/events.ts';
import { blocksStream, reportStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { chatUserById, type ChatUserRow } from '../../../projections/chat/accounts.ts';
import { notFound } from '../access.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

/** 404 `user_not_found`; the profile read uses it too. */
export const userNotFound = () => notFound('user');

/** A live account anyone may name (blocking and reporting need no visibility: one must be able to block a stranger who writes). */
async function liveUser(db: Pool, id: string): Promise<ChatUserRow> {
  const user = await chatUserById(db, id);
  if (!user || user.deleted_at) throw userNotFound();
  return user;
}

/** Blocks a live user (repeating is harmless). */
export async function blockUser(
  deps: Deps,
  input: { user_id: string; blocked_user_id: string },
  context: CommandContext,
): Promise<void> {
  const target = await liveUser(deps.db, input.blocked_user_id);
  await deps.commands.run(
    blocksStream(input.user_id),
    blockDecider,
    { type: 'Block', user_id: input.user_id, blocked_user_id: target.id, at: deps.clock.now().toISOString() },
    context,
  );
}

/** Unblocks a user, deleted or not (repeating is harmless). */
export async function unblockUser(
  deps: Deps,
  input: { user_id: string; blocked_user_id: string },
  context: CommandContext,
): Promise<void> {
  const target = await chatUserById(deps.db, input.blocked_user_id);
  if (!target) throw userNotFound();
  await deps.commands.run(
    blocksStream(input.user_id),
    blockDecider,
    { type: 'Unblock', user_id: input.user_id, blocked_user_id: target.id, at: deps.clock.now().toISOString() },
    context,
  );
}

/** Files a report of a user (who must exist) or a message; returns its id. */
export async function fileReport(
  deps: Deps,
  input: { user_id: string; target_type: 'user' | 'message'; target_id: string; reason: string },
  context: CommandContext,
): Promise<string> {
  const { user_id, ...body } = input;
  // A message report is kept as filed: the reporter may no longer see the message (deleted, or a channel left).
  if (body.target_type === 'user') await liveUser(deps.db, body.target_id);
  const id = randomUUID();
  const event: ReportEvent = {
    type: 'ReportFiled',
    data: { report_id: id, reporter_id: user_id, ...body, at: deps.clock.now().toISOString() },
  };
  await deps.commands.record(reportStream(id), event, context, { expected: 'no_stream' });
  return id;
}
