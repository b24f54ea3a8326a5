// The bookmark decider (`chat.bookmark-<user>_<message>`), given/when/then: add and remove are
// idempotent (a second add or a remove of nothing appends nothing).

import { suite } from 'uvu';
import { bookmarkDecider } from '../../../domain/chat/bookmarks/decider.ts';
import type { BookmarkEvent } from '../../../domain/chat/bookmarks/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const added: BookmarkEvent = { type: 'BookmarkAdded', data: { user_id: 'u1', message_id: 'm1', channel_id: 'c1', at } };
const removed: BookmarkEvent = { type: 'BookmarkRemoved', data: { user_id: 'u1', message_id: 'm1', at } };
const add = { type: 'Add' as const, user_id: 'u1', message_id: 'm1', channel_id: 'c1', at };
const remove = { type: 'Remove' as const, user_id: 'u1', message_id: 'm1', at };
const bookmark = spec(bookmarkDecider);
const test = suite('domain: chat bookmarks');

test('Add: bookmarks once; again appends nothing; after a remove it bookmarks again', () => {
  bookmark([]).when(add).then([added]);
  bookmark([added]).when(add).then([]);
  bookmark([added, removed]).when(add).then([added]);
});

test('Remove: removes a bookmark; nothing to remove appends nothing', () => {
  bookmark([added]).when(remove).then([removed]);
  bookmark([]).when(remove).then([]);
  bookmark([added, removed]).when(remove).then([]);
});

test.run();
