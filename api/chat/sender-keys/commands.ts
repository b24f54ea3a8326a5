// Sender keys' use case: a member uploads the distribution of their current chain. The slice's
// application layer and the only caller of the command runner for it: membership of the
// channel, the distribution's consistency with the caller, then the distribution sealed with
// the server key before it reaches the log (and opened again for members: openDistribution).

import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { senderKeyDecider, senderKeySealContext } from '../../../domain/chat/sender-keys/decider.ts';
import { senderKeyStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { memberChannel } from '../access.ts';
import type { ChatDeps } from '../deps.ts';
import type { DistributionWire } from './routes.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'sealKey'>;

/** Opens a stored distribution (for members, and the live hub: api/chat/ws/). */
export const openDistribution = (
  sealKey: Uint8Array,
  channelId: string,
  userId: string,
  sealed: string,
): DistributionWire => JSON.parse(openSecret(sealKey, sealed, senderKeySealContext(channelId, userId)));

export interface Distribute {
  channel_id: string;
  user_id: string;
  chain_id: number;
  distribution: DistributionWire;
}

/** Stores the caller's distribution for the channel; answers the live channel's id. */
export async function distributeSenderKey(
  deps: Deps,
  input: Distribute,
  context: CommandContext,
): Promise<{ channel_id: string }> {
  const access = await memberChannel(deps.db, input.channel_id, input.user_id);
  if (input.distribution.chain_id !== input.chain_id)
    throw new ApiError(400, 'validation_failed', 'distribution.chain_id must equal chain_id');
  if (input.distribution.sender_id !== input.user_id)
    throw new ApiError(400, 'validation_failed', "distribution.sender_id must be the caller's user id");
  const channelId = access.channel.id;
  const sealed = sealSecret(
    deps.sealKey,
    JSON.stringify(input.distribution),
    senderKeySealContext(channelId, input.user_id),
  );
  await deps.commands.run(
    senderKeyStream(channelId, input.user_id),
    senderKeyDecider,
    {
      type: 'Distribute',
      channel_id: channelId,
      user_id: input.user_id,
      chain_id: input.chain_id,
      distribution_sealed: sealed,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return { channel_id: channelId };
}
