// Polls' use cases: create, vote, close. The slice's application layer and the only caller of
// the command runner for it (the scheduler's expiry is the scheduled slice's reactor): each
// function checks the caller's place in the poll's channel, runs the poll decider, and reads the
// poll and its votes back for the route's answer.

import { randomUUID } from 'node:crypto';
import { MANAGER } from '../../../domain/chat/channels/roles.ts';
import { pollDecider } from '../../../domain/chat/polls/decider.ts';
import { pollStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { pollById, pollVotes, type PollRow, type PollVoteRow } from '../../../projections/chat/polls.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { channelFor, postableChannel, memberChannel } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

export interface PollWithVotes {
  poll: PollRow;
  votes: PollVoteRow[];
}

/** A poll by id (404 `poll_not_found` otherwise); the reads use it too. */
export async function pollOf(db: Pool, id: string): Promise<PollRow> {
  const row = isUuid(id) ? await pollById(db, id) : null;
  if (!row) throw new ApiError(404, 'poll_not_found', 'no such poll', { code: 'poll_not_found' });
  return row;
}

/** The poll and its votes as the read model has them now. */
export async function pollWithVotes(db: Pool, id: string): Promise<PollWithVotes> {
  const poll = await pollOf(db, id);
  return { poll, votes: await pollVotes(db, [poll.id]) };
}

export interface CreatePoll {
  channel_id: string;
  user_id: string;
  question: string;
  options: string[];
  multiple_choice: boolean;
  anonymous: boolean;
  closes_at?: string | null;
}

/** Creates a poll: the caller must be able to post in the channel (without slow mode). */
export async function createPoll(deps: Deps, input: CreatePoll, context: CommandContext): Promise<PollWithVotes> {
  const now = deps.clock.now();
  const access = await postableChannel(deps.db, input.channel_id, input.user_id, now);
  const id = randomUUID();
  await deps.commands.run(
    pollStream(id),
    pollDecider,
    {
      type: 'Create',
      id,
      channel_id: access.channel.id,
      creator_id: input.user_id,
      question: input.question,
      options: input.options.map((text) => ({ option_id: randomUUID(), text })),
      multiple_choice: input.multiple_choice,
      anonymous: input.anonymous,
      closes_at: input.closes_at ? new Date(input.closes_at).toISOString() : null,
      at: now.toISOString(),
    },
    context,
  );
  return pollWithVotes(deps.db, id);
}

/** Votes (members of the poll's channel): the whole choice, replacing the last. */
export async function votePoll(
  deps: Deps,
  input: { poll_id: string; user_id: string; option_ids: string[] },
  context: CommandContext,
): Promise<PollWithVotes> {
  const row = await pollOf(deps.db, input.poll_id);
  await memberChannel(deps.db, row.channel_id, input.user_id);
  await deps.commands.run(
    pollStream(row.id),
    pollDecider,
    { type: 'Vote', user_id: input.user_id, option_ids: input.option_ids, at: deps.clock.now().toISOString() },
    context,
  );
  return pollWithVotes(deps.db, row.id);
}

/** Closes a poll: its creator, a channel moderator and above, or an instance admin (`instance_admin`). */
export async function closePoll(
  deps: Deps,
  input: { poll_id: string; user_id: string; instance_admin: boolean },
  context: CommandContext,
): Promise<PollWithVotes> {
  const row = await pollOf(deps.db, input.poll_id);
  const access = await channelFor(deps.db, row.channel_id, input.user_id);
  const allowed = input.instance_admin || row.creator_id === input.user_id || access.rank >= MANAGER;
  await deps.commands.run(
    pollStream(row.id),
    pollDecider,
    { type: 'Close', actor_id: input.user_id, allowed, at: deps.clock.now().toISOString() },
    context,
  );
  return pollWithVotes(deps.db, row.id);
}
