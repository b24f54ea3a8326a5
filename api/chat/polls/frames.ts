// The /api/ws frames of poll events, sent to the channel's subscribers by the hub
// (api/chat/ws/hub.ts): `PollCreated {channel_id, poll}`, `PollUpdated {channel_id, poll_id,
// results, voters}` (plus `user_id` and `option_ids` of the vote unless the poll is anonymous),
// `PollClosed {channel_id, poll_id, reason, results, voters}`.

import type { PollEvent } from '../../../domain/chat/polls/events.ts';

type Data<T extends PollEvent['type']> = Extract<PollEvent, { type: T }>['data'];

export function pollFrame(type: string, data: Record<string, any>): Record<string, unknown> | null {
  switch (type) {
    case 'PollCreated': {
      const d = data as Data<'PollCreated'>;
      return {
        type: 'PollCreated',
        channel_id: d.channel_id,
        poll: {
          id: d.poll_id,
          channel_id: d.channel_id,
          creator_id: d.creator_id,
          question: d.question,
          options: d.options,
          multiple_choice: d.multiple_choice,
          anonymous: d.anonymous,
          encrypted: false,
          closes_at: d.closes_at,
          created_at: d.at,
        },
      };
    }
    case 'PollVoted': {
      const d = data as Data<'PollVoted'>;
      return {
        type: 'PollUpdated',
        channel_id: d.channel_id,
        poll_id: d.poll_id,
        results: d.results,
        voters: d.voters,
        ...(d.anonymous ? {} : { user_id: d.user_id, option_ids: d.option_ids }),
      };
    }
    case 'PollClosed': {
      const d = data as Data<'PollClosed'>;
      return {
        type: 'PollClosed',
        channel_id: d.channel_id,
        poll_id: d.poll_id,
        reason: d.reason,
        closed_by: d.closed_by,
        results: d.results,
        voters: d.voters,
        closed_at: d.at,
      };
    }
  }
  return null;
}
