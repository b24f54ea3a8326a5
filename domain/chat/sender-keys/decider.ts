// Sender-key distributions (`chat.sender_keys-<channel>_<user>`): a member's current chain for
// a channel, handed to the server for the other members (the spec's default with
// `sender_key_v2_enabled` off). The distribution holds the chain key, so it reaches the log only
// sealed with the server key. A member who leaves, is kicked or banned loses their distributions
// (the read model drops them on ChannelMemberDeparted) and the rest are told to rotate.

import type { Decider } from '../../shared/decider.ts';
import type { SenderKeyEvent } from './events.ts';

export type SenderKeyCommand = {
  type: 'Distribute';
  channel_id: string;
  user_id: string;
  chain_id: number;
  distribution_sealed: string;
  at: string;
};

/** Membership is checked before the command (read model); an upload always records. */
export const senderKeyDecider: Decider<null, SenderKeyCommand, SenderKeyEvent> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => [
    {
      type: 'SenderKeyDistributed',
      data: {
        channel_id: command.channel_id,
        user_id: command.user_id,
        chain_id: command.chain_id,
        distribution_sealed: command.distribution_sealed,
        at: command.at,
      },
    },
  ],
};

/** What the seal of a distribution is bound to. */
export const senderKeySealContext = (channelId: string, userId: string) => `sender_key:${channelId}:${userId}`;
