// Bookmarks through real HTTP: readable messages only (404 otherwise), 201 then 200, DELETE 204,
// listing newest first with the message, paged, unreadable ones left out and counted.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError } from '../../support/chat.ts';
import { startChannelWorld, stopChannelWorld, type World } from '../../support/channel-world.ts';

// Three accounts, no channel: the test makes its own in the group.
type Ctx = World<'absent', false>;
const test = suite<Ctx>('chat bookmarks');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_bookmarks', { out: 'absent', channel: false }));
});
test.after((ctx) => stopChannelWorld(ctx));

test('bookmarks: add (201, again 200), readable only, list newest first with paging, unreadable counted, delete 204', async ({
  sp,
  owner,
  ann,
  bob,
  gid,
}) => {
  const open = await sp.channel(owner, gid, [ann, bob], 'open');
  const side = await sp.channel(owner, gid, [ann], 'side');
  const m1 = await sp.post(ann, open, 'one');
  const m2 = await sp.post(bob, open, 'two');
  const m3 = await sp.post(ann, side, 'three');
  const m4 = await sp.post(ann, open, 'four');
  expectError(await sp.call(null, 'POST', `/api/bookmarks/${m1.id}`), 401);
  expectError(await sp.call(bob, 'POST', `/api/bookmarks/${m3.id}`), 404);
  expectError(await sp.call(bob, 'POST', '/api/bookmarks/00000000-0000-4000-8000-000000000000'), 404);
  expectError(await sp.call(bob, 'POST', '/api/bookmarks/nope'), 404);
  for (const m of [m1, m2, m3, m4]) assert.is((await sp.call(ann, 'POST', `/api/bookmarks/${m.id}`)).status, 201);
  const again = await sp.call(ann, 'POST', `/api/bookmarks/${m1.id}`);
  assert.equal([again.status, again.body], [200, { message_id: m1.id, channel_id: open }]);
  let page = await sp.ok(ann, 'GET', '/api/bookmarks');
  assert.equal(
    page.bookmarks.map((b: any) => b.message_id),
    [m4.id, m3.id, m2.id, m1.id],
  );
  assert.equal([page.total, page.limit, page.offset, page.unavailable], [4, 50, 0, 0]);
  assert.is(page.bookmarks[0].message.ciphertext, 'four');
  page = await sp.ok(ann, 'GET', '/api/bookmarks?limit=2&offset=1');
  assert.equal(
    page.bookmarks.map((b: any) => b.message_id),
    [m3.id, m2.id],
  );
  // Unreadable: a deleted message, a channel left.
  await sp.ok(bob, 'DELETE', `/api/channels/${open}/messages/${m2.id}`, undefined, 204);
  await sp.ok(ann, 'POST', `/api/channels/${side}/leave`, undefined, 204);
  page = await sp.ok(ann, 'GET', '/api/bookmarks');
  assert.equal(
    page.bookmarks.map((b: any) => b.message_id),
    [m4.id, m1.id],
  );
  assert.equal([page.total, page.unavailable], [2, 2]);
  assert.is((await sp.call(ann, 'DELETE', `/api/bookmarks/${m4.id}`)).status, 204);
  assert.is((await sp.call(ann, 'DELETE', `/api/bookmarks/${m4.id}`)).status, 204);
  assert.is((await sp.call(ann, 'DELETE', `/api/bookmarks/${m3.id}`)).status, 204, 'an unreadable one can be removed');
  expectError(await sp.call(ann, 'DELETE', '/api/bookmarks/nope'), 404);
  page = await sp.ok(ann, 'GET', '/api/bookmarks');
  assert.equal([page.bookmarks.map((b: any) => b.message_id), page.total, page.unavailable], [[m1.id], 1, 1]);
  assert.equal((await sp.ok(bob, 'GET', '/api/bookmarks')).bookmarks, []);
});

test.run();
