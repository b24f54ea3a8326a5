// A calendar feed token (`chat.calendar_feed_token-<uuid>`): calendar apps send no JWT, so a member
// mints a secret URL (`/api/calendar/feeds/<token>.ics`) shown once. The log keeps only the
// token's SHA-256; revoking it ends the URL. The feed re-checks the owner's memberships on every
// fetch, so a token outlives nothing the owner has lost.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { CalendarFeedEvent } from './events.ts';

export const LABEL_MAX = 100;
/** Live tokens one user may hold. */
export const FEED_TOKENS_MAX = 20;

export type CalendarFeedCommand =
  | {
      type: 'Create';
      token_id: string;
      user_id: string;
      token_hash: string;
      channel_id: string | null;
      label: string | null;
      live_tokens: number;
      at: string;
    }
  | { type: 'Revoke'; user_id: string; at: string };

export interface CalendarFeedState {
  id: string | null;
  user_id: string;
  revoked: boolean;
}

const notFound = () =>
  new DomainError('not_found', 'feed_token_not_found', 'no such feed token', { code: 'feed_token_not_found' });

export const calendarFeedDecider: Decider<CalendarFeedState, CalendarFeedCommand, CalendarFeedEvent> = {
  initialState: () => ({ id: null, user_id: '', revoked: false }),
  evolve(state, event) {
    switch (event.type) {
      case 'CalendarFeedTokenCreated':
        return { id: event.data.token_id, user_id: event.data.user_id, revoked: false };
      case 'CalendarFeedTokenRevoked':
        return { ...state, revoked: true };
    }
  },
  decide(command, state) {
    if (command.type === 'Create') {
      if (state.id)
        throw new DomainError('conflict', 'feed_token_exists', 'feed token exists', { code: 'feed_token_exists' });
      if (command.live_tokens >= FEED_TOKENS_MAX)
        throw new DomainError('conflict', 'feed_token_limit_reached', `at most ${FEED_TOKENS_MAX} feed tokens`, {
          code: 'feed_token_limit_reached',
        });
      if (command.label !== null && command.label.length > LABEL_MAX)
        throw new DomainError('invalid', 'validation_failed', `label is at most ${LABEL_MAX} characters`, {
          code: 'validation_failed',
        });
      const { type: _t, live_tokens: _n, ...data } = command;
      return [{ type: 'CalendarFeedTokenCreated', data }];
    }
    // Another's token is as unknown as a missing one.
    if (!state.id || state.user_id !== command.user_id || state.revoked) throw notFound();
    return [{ type: 'CalendarFeedTokenRevoked', data: { token_id: state.id, user_id: state.user_id, at: command.at } }];
  },
};
