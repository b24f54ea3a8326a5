// Who may post in a channel right now, from what the read models say about the channel and the
// poster. Pure, so the rule is one function the post route, webhooks and scheduled messages can
// share, and it is tested without a database.

import { DomainError } from '../../shared/decider.ts';
import { MANAGER } from '../channels/roles.ts';

export interface PostingView {
  archived: boolean;
  read_only: boolean;
  slow_mode_secs: number;
  member: boolean;
  /** The poster's effective channel rank (a community moderator outranks a member without a channel role). */
  rank: number;
  /** End of the poster's timeout in this channel, if any. */
  timed_out_until: Date | null;
  /** The poster's last post in this channel. */
  last_posted_at: Date | null;
}

/**
 * Throws the refusal, if any: not a member (403), archived (403: nobody posts), read-only (403
 * unless a channel manager), timed out (403 until it ends), slow mode (429 with the seconds to
 * wait; managers are exempt).
 */
export function checkPost(view: PostingView, now: Date): void {
  if (!view.member) throw new DomainError('forbidden', 'not_a_member', 'you are not a member of this channel');
  if (view.archived) throw new DomainError('forbidden', 'archived', 'this channel is archived');
  if (view.read_only && view.rank < MANAGER)
    throw new DomainError('forbidden', 'read_only', 'this channel is read-only');
  if (view.timed_out_until && view.timed_out_until.getTime() > now.getTime()) {
    throw new DomainError('forbidden', 'timed_out', 'you are timed out in this channel', {
      until: view.timed_out_until.toISOString(),
    });
  }
  if (view.slow_mode_secs > 0 && view.rank < MANAGER && view.last_posted_at) {
    const wait = view.last_posted_at.getTime() + view.slow_mode_secs * 1000 - now.getTime();
    if (wait > 0)
      throw new DomainError('rate_limited', 'slow_mode', 'slow mode: wait before posting again', {
        retry_after_ms: wait,
      });
  }
}
