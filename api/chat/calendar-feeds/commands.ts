// Calendar feed tokens' use cases: mint and revoke. The slice's application layer and the only
// caller of the command runner for it (fetching a feed only reads): each function checks what
// its decision needs (membership of the feed's channel, the caller's live tokens), runs the
// calendar feed decider, and reads the token back for the route's answer.

import { randomUUID } from 'node:crypto';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import { calendarFeedDecider } from '../../../domain/chat/calendar-feeds/decider.ts';
import { calendarFeedStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { liveFeedTokensOf, type FeedTokenRow } from '../../../projections/chat/calendar-feeds.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { memberChannel } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

export const FEED_TOKEN_PREFIX = 'calf_';

/** Mints a feed token (a member of `channel_id` when given); the token is returned only here. */
export async function createFeedToken(
  deps: Deps,
  input: { user_id: string; channel_id?: string | null; label?: string | null },
  context: CommandContext,
): Promise<{ row: FeedTokenRow; token: string }> {
  if (input.channel_id) await memberChannel(deps.db, input.channel_id, input.user_id);
  const id = randomUUID();
  const token = generateToken(FEED_TOKEN_PREFIX);
  const live = (await liveFeedTokensOf(deps.db, input.user_id)).length;
  await deps.commands.run(
    calendarFeedStream(id),
    calendarFeedDecider,
    {
      type: 'Create',
      token_id: id,
      user_id: input.user_id,
      token_hash: hashToken(token),
      channel_id: input.channel_id ?? null,
      label: input.label ?? null,
      live_tokens: live,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  const row = (await liveFeedTokensOf(deps.db, input.user_id)).find((t) => t.id === id)!;
  return { row, token };
}

/** Revokes one of the caller's feed tokens (404 `feed_token_not_found` otherwise). */
export async function revokeFeedToken(
  deps: Deps,
  input: { token_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  if (!isUuid(input.token_id))
    throw new ApiError(404, 'feed_token_not_found', 'no such feed token', { code: 'feed_token_not_found' });
  await deps.commands.run(
    calendarFeedStream(input.token_id),
    calendarFeedDecider,
    { type: 'Revoke', user_id: input.user_id, at: deps.clock.now().toISOString() },
    context,
  );
}
