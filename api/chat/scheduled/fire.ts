// What the scheduler does with a due scheduled message (the poster that turns a delivery into
// the message itself is ./reactor.ts).
//
// Firing (any instance, a claimed batch at once: the streams read in one query, the decisions
// appended in one transaction, each stream under its own expectation): read the scheduled
// message's stream; if it is pending and due, decide:
//  - the sender can no longer post there (not a member, archived, read-only, timed out, the
//    channel gone): `ScheduledMessageFailed` with that reason;
//  - a sender-key rotation happened in the channel since the ciphertext was written (a member
//    departed, which requires one, or the sender distributed a new chain): `ScheduledMessageHoldPlaced`
//    (`held_key_rotated`), so a removed member's key never covers a later message; the client
//    re-encrypts by PATCH;
//  - else `ScheduledMessageDelivered`, appended with the revision read.

import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { asDomainEvent, type CommandContext, type CommandRunner, type RunManyItem } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { Logger } from '../../../infra/logging.ts';
import { comparePositions, type Position } from '../../../infra/eventstore/position.ts';
import { mapLimit, type BatchJobHandler, type FireContext, type Job } from '../../../infra/scheduler/scheduler.ts';
import { scheduledDecider, type ScheduledState } from '../../../domain/chat/scheduled/decider.ts';
import type { ScheduledEvent } from '../../../domain/chat/scheduled/events.ts';
import {
  scheduledStream,
  messageStream,
  pollStream,
  channelStream,
  senderKeyStream,
} from '../../../domain/chat/streams.ts';
import { messageDecider } from '../../../domain/chat/messages/decider.ts';
import { pollDecider } from '../../../domain/chat/polls/decider.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { channelMemberIds } from '../../../projections/chat/channels.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { postableChannel } from '../access.ts';

export interface FireDeps {
  db: Pool;
  commands: CommandRunner;
  log: Logger;
}

export const SCHEDULER_ACTOR: CommandContext = { actor: { kind: 'system', id: 'scheduler' }, correlationId: null };

/** Why the sender cannot post in the channel now, or null. Slow mode does not apply to a scheduled message. */
export async function postRefusal(db: Pool, channelId: string, senderId: string, now: Date): Promise<string | null> {
  try {
    await postableChannel(db, channelId, senderId, now);
    return null;
  } catch (error) {
    if (error instanceof ApiError || error instanceof DomainError) return error.code;
    throw error;
  }
}

/** Where the ciphertext was last written: the Created event, or the last edit that changed it. */
function contentPosition(history: RecordedEvent[]): Position {
  let at = history[0]!.position;
  for (const e of history) {
    if (
      e.type === 'ScheduledMessageCreated' ||
      (e.type === 'ScheduledMessageEdited' && (e.data.changed as string[]).includes('ciphertext'))
    )
      at = e.position;
  }
  return at;
}

/** Whether the channel's sender keys turned over after `since`: a member departed, or the sender distributed a new chain. */
async function rotatedSince(
  deps: FireDeps,
  context: FireContext,
  channelId: string,
  senderId: string,
  since: Position,
): Promise<boolean> {
  const channel = await context.memo(`stream:${channelStream(channelId)}`, () =>
    deps.commands.store.readStream(channelStream(channelId)),
  );
  if (channel.some((e) => e.type === 'ChannelMemberDeparted' && comparePositions(e.position, since) > 0)) return true;
  const keys = await context.memo(`stream:${senderKeyStream(channelId, senderId)}`, () =>
    deps.commands.store.readStream(senderKeyStream(channelId, senderId)),
  );
  const known = new Set(keys.filter((e) => comparePositions(e.position, since) <= 0).map((e) => e.data.chain_id));
  return keys.some((e) => comparePositions(e.position, since) > 0 && !known.has(e.data.chain_id));
}

type ScheduledCommand = Parameters<typeof scheduledDecider.decide>[0];

/** What firing this job decides (Fail, Hold or Deliver on the scheduled message's stream, with the revision read), or null when there is nothing to do. */
async function firingOf(
  deps: FireDeps,
  stream: string,
  history: RecordedEvent[],
  context: FireContext,
): Promise<RunManyItem<ScheduledState, ScheduledCommand> | null> {
  if (!history.length) return null;
  const state = history
    .map((e) => asDomainEvent<ScheduledEvent>(e))
    .reduce(scheduledDecider.evolve, scheduledDecider.initialState());
  if (state.status !== 'pending' || Date.parse(state.send_at) > context.now.getTime()) return null;
  const known = { state, revision: history.at(-1)!.revision };
  const at = context.now.toISOString();
  const item = (command: ScheduledCommand) => ({ stream, command, context: SCHEDULER_ACTOR, known });

  const refusal = await context.memo(`post:${state.channel_id}:${state.sender_id}`, () =>
    postRefusal(deps.db, state.channel_id, state.sender_id, context.now),
  );
  if (refusal) return item({ type: 'Fail', reason: refusal, at });
  if (await rotatedSince(deps, context, state.channel_id, state.sender_id, contentPosition(history)))
    return item({ type: 'Hold', at });
  return item({ type: 'Deliver', mentions: await deliveredMentions(deps, state), at });
}

/**
 * The claimed scheduled messages, fired together: their streams read in one go, each decided on
 * its own stream, then every decision appended by one `runMany` (one log transaction for the
 * batch), each with the revision read, so a concurrent edit, cancel or second instance conflicts
 * on that stream alone and is decided again there. (One read and one append per job made the
 * firing rate that of the round trips: about 300 jobs/s.)
 */
export function scheduledMessageHandler(deps: FireDeps): BatchJobHandler {
  return {
    async batch(jobs, context) {
      const failures = new Map<string, Error>();
      const firings: { job: Job; item: RunManyItem<ScheduledState, ScheduledCommand> }[] = [];
      const histories = await deps.commands.store.readStreams(jobs.map((job) => scheduledStream(job.subject_id)));
      await mapLimit(jobs, 16, async (job) => {
        try {
          const stream = scheduledStream(job.subject_id);
          const item = await firingOf(deps, stream, histories.get(stream) ?? [], context);
          if (item) firings.push({ job, item });
        } catch (error) {
          failures.set(job.id, error as Error);
        }
      });
      const outcomes = await deps.commands.runMany(
        scheduledDecider,
        firings.map((f) => f.item),
        { awaitProjections: false },
      );
      outcomes.forEach((o, i) => {
        if (!o.ok) failures.set(firings[i]!.job.id, o.error as Error);
      });
      return failures;
    },
  };
}

/** The listed mentions who are members of the channel at delivery, in order, at most 50 (the post route's rule). */
async function deliveredMentions(deps: FireDeps, state: ScheduledState): Promise<string[]> {
  if (!state.mentions.length) return [];
  const members = new Set(await channelMemberIds(deps.db, state.channel_id, state.mentions));
  return state.mentions.filter((id) => members.has(id));
}

/** A poll reaching its `closes_at`. */
export function pollCloseHandler(deps: FireDeps) {
  return async (job: Job, context: FireContext): Promise<void> => {
    try {
      await deps.commands.run(
        pollStream(job.subject_id),
        pollDecider,
        { type: 'Expire', at: context.now.toISOString() },
        SCHEDULER_ACTOR,
        { awaitProjections: false },
      );
    } catch (error) {
      if (error instanceof DomainError && error.code === 'poll_not_found') return;
      throw error;
    }
  };
}
