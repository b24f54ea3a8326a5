// A member's bookmark of a message (`chat.bookmark-<user>_<message>`): added once (again:
// nothing new), removed. Whether the message is readable is decided by the route from the read
// models; a bookmark of a message the member can no longer read stays, and is left out of
// listings (counted).

import type { Decider } from '../../shared/decider.ts';
import type { BookmarkEvent } from './events.ts';

export type BookmarkCommand =
  | { type: 'Add'; user_id: string; message_id: string; channel_id: string; at: string }
  | { type: 'Remove'; user_id: string; message_id: string; at: string };

export interface BookmarkState {
  bookmarked: boolean;
}

export const bookmarkDecider: Decider<BookmarkState, BookmarkCommand, BookmarkEvent> = {
  initialState: () => ({ bookmarked: false }),
  evolve: (_state, event) => ({ bookmarked: event.type === 'BookmarkAdded' }),
  decide(command, state) {
    const { type, ...data } = command;
    if (type === 'Add')
      return state.bookmarked
        ? []
        : [{ type: 'BookmarkAdded', data: data as BookmarkEvent['data'] & { channel_id: string } }];
    return state.bookmarked
      ? [{ type: 'BookmarkRemoved', data: { user_id: data.user_id, message_id: data.message_id, at: data.at } }]
      : [];
  },
};
