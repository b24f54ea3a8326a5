// Scheduled messages through real HTTP and the scheduler: schedule, list, edit, cancel; limits
// and codes; delivery once (message takes the scheduled id, `scheduled_for`), late delivery;
// failed when the sender can no longer post; held after a sender-key rotation until re-encrypted.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError } from '../../support/chat.ts';
import { startChannelWorld, stopChannelWorld, type World } from '../../support/channel-world.ts';
import { settle } from '../../support/schedule.ts';
import type { TestServices } from '../../support/services.ts';
import { messageStream, scheduledStream } from '../../../domain/chat/streams.ts';

// Out outside the community; each test makes its own channel in the group Ann and Bob joined.
type Ctx = World<'outsider', false>;
const test = suite<Ctx>('chat scheduled messages');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_scheduled', { out: 'outsider', channel: false }));
  await ctx.sp.ok(ctx.ann, 'POST', `/api/groups/${ctx.gid}/join`);
  await ctx.sp.ok(ctx.bob, 'POST', `/api/groups/${ctx.gid}/join`);
});
test.after((ctx) => stopChannelWorld(ctx));

const inSecs = (s: TestServices, secs: number) => new Date(s.clock.now().getTime() + secs * 1000).toISOString();

test('schedule: validation, authorisation, listing, edit and cancel with their codes', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  out,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const root = await sp.post(bob, chid, 'root');
  const body = { channel_id: chid, ciphertext: 'later', send_at: inSecs(s, 3600) };
  expectError(await sp.call(null, 'POST', '/api/messages/schedule', body), 401);
  expectError(await sp.call(ann, 'POST', '/api/messages/schedule', { ...body, send_at: inSecs(s, -1) }), 400);
  expectError(await sp.call(ann, 'POST', '/api/messages/schedule', { ...body, send_at: inSecs(s, 366 * 86400) }), 400);
  expectError(await sp.call(ann, 'POST', '/api/messages/schedule', { ...body, extra: 1 }), 400);
  expectError(await sp.call(ann, 'POST', '/api/messages/schedule', { ...body, ciphertext: '' }), 400);
  expectError(
    await sp.call(ann, 'POST', '/api/messages/schedule', {
      ...body,
      channel_id: '00000000-0000-4000-8000-000000000000',
    }),
    404,
  );
  expectError(await sp.call(out, 'POST', '/api/messages/schedule', body), 403);
  expectError(
    await sp.call(ann, 'POST', '/api/messages/schedule', {
      ...body,
      thread_root_id: '00000000-0000-4000-8000-000000000000',
    }),
    404,
  );
  const far = await sp.call(ann, 'POST', '/api/messages/schedule', { ...body, send_at: inSecs(s, 364 * 86400) });
  assert.is(far.status, 201, far.text);
  const m = await sp.ok(
    ann,
    'POST',
    '/api/messages/schedule',
    { ...body, thread_root_id: root.id, mentions: [bob.id, out.id], file_ids: ['f1'] },
    201,
  );
  assert.equal(
    [m.status, m.reason, m.thread_root_id, m.mentions, m.file_ids, m.channel_id],
    ['pending', null, root.id, [bob.id, out.id], ['f1'], chid],
  );
  const listed = await sp.ok(ann, 'GET', '/api/messages/scheduled');
  assert.equal(
    listed.scheduled_messages.map((x: { id: string }) => x.id),
    [m.id, far.body.id],
  );
  assert.equal((await sp.ok(bob, 'GET', '/api/messages/scheduled')).scheduled_messages, []);
  // Edit: own only (another's 404), validation, at least a change.
  expectError(await sp.call(bob, 'PATCH', `/api/messages/scheduled/${m.id}`, { ciphertext: 'x' }), 404);
  expectError(await sp.call(ann, 'PATCH', `/api/messages/scheduled/${m.id}`, { send_at: inSecs(s, -5) }), 400);
  expectError(await sp.call(ann, 'PATCH', `/api/messages/scheduled/nope`, { ciphertext: 'x' }), 404);
  const edited = await sp.ok(ann, 'PATCH', `/api/messages/scheduled/${m.id}`, {
    ciphertext: 'later, edited',
    send_at: inSecs(s, 7200),
    mentions: [],
  });
  assert.equal([edited.ciphertext, edited.mentions, edited.thread_root_id], ['later, edited', [], root.id]);
  // Cancel: another's 404; own 204, then gone (404).
  expectError(await sp.call(bob, 'DELETE', `/api/messages/scheduled/${far.body.id}`), 404);
  assert.is((await sp.call(ann, 'DELETE', `/api/messages/scheduled/${far.body.id}`)).status, 204);
  expectError(await sp.call(ann, 'DELETE', `/api/messages/scheduled/${far.body.id}`), 404);
  expectError(await sp.call(ann, 'PATCH', `/api/messages/scheduled/${far.body.id}`, { ciphertext: 'x' }), 404);
  assert.equal(
    (await sp.ok(ann, 'GET', '/api/messages/scheduled')).scheduled_messages.map((x: { id: string }) => x.id),
    [m.id],
  );
  assert.is((await sp.call(ann, 'DELETE', `/api/messages/scheduled/${m.id}`)).status, 204);
});

test('delivery: once, as the scheduled id, with scheduled_for; then 409 already_delivered', async ({
  s,
  sp,
  bg,
  owner,
  ann,
  bob,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const m = await sp.ok(
    ann,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'hello later', send_at: inSecs(s, 30), mentions: [bob.id] },
    201,
  );
  await settle(s.platform, bg);
  assert.equal((await sp.ok(bob, 'GET', `/api/channels/${chid}/messages`)).messages, [], 'not yet due');
  s.clock.advance(31_000);
  await settle(s.platform, bg);
  await settle(s.platform, bg);
  const msgs = (await sp.ok(bob, 'GET', `/api/channels/${chid}/messages`)).messages;
  assert.equal(
    msgs.map((x: { id: string; ciphertext: string; sender_id: string }) => [x.id, x.ciphertext, x.sender_id]),
    [[m.id, 'hello later', ann.id]],
  );
  const posted = await s.platform.store.readStream(messageStream(m.id));
  assert.equal(
    posted.map((e) => e.type),
    ['MessagePosted'],
  );
  assert.is(posted[0]!.data.scheduled_for, m.send_at);
  assert.equal(posted[0]!.data.mentions, [bob.id]);
  const unread = (await sp.ok(bob, 'GET', '/api/channels/unread')).channels.find(
    (c: { channel_id: string }) => c.channel_id === chid,
  );
  assert.is(unread.mention_count, 1);
  assert.equal((await sp.ok(ann, 'GET', '/api/messages/scheduled')).scheduled_messages, []);
  const again = await sp.call(ann, 'PATCH', `/api/messages/scheduled/${m.id}`, { ciphertext: 'x' });
  expectError(again, 409);
  assert.is(again.body.code, 'already_delivered');
  expectError(await sp.call(ann, 'DELETE', `/api/messages/scheduled/${m.id}`), 409);
  // Firing the same job again (a lapsed lease, a second instance) appends nothing.
  await s.platform.pool.query(
    `INSERT INTO scheduled_jobs (id, kind, subject_id, due_at) VALUES ($1, 'message', $2, now() - interval '1 hour')`,
    [`message:${m.id}`, m.id],
  );
  await settle(s.platform, bg);
  assert.is(
    (await s.platform.store.readStream(scheduledStream(m.id))).filter((e) => e.type === 'ScheduledMessageDelivered')
      .length,
    1,
  );
  assert.is((await s.platform.store.readStream(messageStream(m.id))).length, 1);
  await s.platform.pool.query('DELETE FROM scheduled_jobs WHERE id = $1', [`message:${m.id}`]);
});

test('late: past send_at while stopped, delivered once with late: true', async ({ s, sp, bg, owner, ann, gid }) => {
  const chid = await sp.channel(owner, gid, [ann]);
  const m = await sp.ok(
    ann,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'was down', send_at: inSecs(s, 10) },
    201,
  );
  s.clock.advance(120_000);
  await settle(s.platform, bg);
  const delivered = (await s.platform.store.readStream(scheduledStream(m.id))).find(
    (e) => e.type === 'ScheduledMessageDelivered',
  )!;
  assert.is(delivered.data.late, true);
  assert.is(delivered.data.scheduled_for, m.send_at);
  assert.is((await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`)).messages[0].id, m.id);
});

test('REST shows scheduled_for: a late scheduled message in history, thread, search, edit and bookmarks; null for ordinary messages', async ({
  s,
  sp,
  bg,
  owner,
  ann,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann]);
  const ordinary = await sp.ok(ann, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'now' }, 201);
  assert.is(ordinary.scheduled_for, null, 'the post response');
  const m = await sp.ok(
    ann,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'was down too', send_at: inSecs(s, 10), thread_root_id: ordinary.id },
    201,
  );
  s.clock.advance(120_000);
  await settle(s.platform, bg);
  const history = (await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`)).messages;
  assert.equal(
    history.map((x: { id: string; scheduled_for: string | null }) => [x.id, x.scheduled_for]),
    [
      [m.id, m.send_at],
      [ordinary.id, null],
    ],
  );
  const late = history[0];
  assert.ok(
    Date.parse(late.created_at) - Date.parse(late.scheduled_for) >= 100_000,
    `delivered late: created_at ${late.created_at}, scheduled_for ${late.scheduled_for}`,
  );
  const thread = await sp.ok(ann, 'GET', `/api/channels/${chid}/threads/${ordinary.id}`);
  assert.equal(
    [thread.root.scheduled_for, thread.replies.map((x: { scheduled_for: string | null }) => x.scheduled_for)],
    [null, [m.send_at]],
  );
  const found = (await sp.ok(ann, 'GET', `/api/channels/${chid}/messages/search?sender=${ann.id}`)).messages;
  assert.equal(
    found.map((x: { scheduled_for: string | null }) => x.scheduled_for),
    [m.send_at, null],
  );
  assert.is(
    (await sp.ok(ann, 'PATCH', `/api/channels/${chid}/messages/${m.id}`, { ciphertext: 'was down, edited' }))
      .scheduled_for,
    m.send_at,
    'the single message',
  );
  await sp.ok(ann, 'POST', `/api/bookmarks/${m.id}`, undefined, 201);
  const bookmarks = (await sp.ok(ann, 'GET', '/api/bookmarks')).bookmarks;
  assert.is(bookmarks.find((b: { message_id: string }) => b.message_id === m.id).message.scheduled_for, m.send_at);
});

test('failed: a sender who can no longer post there; reason listed; DELETE clears it', async ({
  s,
  sp,
  bg,
  owner,
  ann,
  bob,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const m = await sp.ok(
    bob,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'bye', send_at: inSecs(s, 10) },
    201,
  );
  const ro = await sp.ok(
    bob,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'ro', send_at: inSecs(s, 10) },
    201,
  );
  await sp.ok(bob, 'POST', `/api/channels/${chid}/leave`, undefined, 204);
  await sp.ok(
    ann,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'archived', send_at: inSecs(s, 10) },
    201,
  );
  await sp.ok(owner, 'PATCH', `/api/channels/${chid}`, { archived: true });
  s.clock.advance(11_000);
  await settle(s.platform, bg);
  const list = (await sp.ok(bob, 'GET', '/api/messages/scheduled')).scheduled_messages;
  assert.equal(
    list.map((x: { id: string; status: string; reason: string }) => [x.id, x.status, x.reason]).sort(),
    [
      [m.id, 'failed', 'not_a_member'],
      [ro.id, 'failed', 'not_a_member'],
    ].sort(),
  );
  assert.equal(
    (await sp.ok(ann, 'GET', '/api/messages/scheduled')).scheduled_messages.map(
      (x: { status: string; reason: string }) => [x.status, x.reason],
    ),
    [['failed', 'archived']],
  );
  const patch = await sp.call(bob, 'PATCH', `/api/messages/scheduled/${m.id}`, { ciphertext: 'x' });
  expectError(patch, 409);
  assert.is(patch.body.code, 'not_pending');
  assert.is((await sp.call(bob, 'DELETE', `/api/messages/scheduled/${m.id}`)).status, 204);
  assert.equal(
    (await sp.ok(bob, 'GET', '/api/messages/scheduled')).scheduled_messages.map((x: { id: string }) => x.id),
    [ro.id],
  );
});

test("held_key_rotated: a departure (or the sender's new chain) after scheduling holds it until re-encrypted by PATCH", async ({
  s,
  sp,
  bg,
  owner,
  ann,
  bob,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const m = await sp.ok(
    ann,
    'POST',
    '/api/messages/schedule',
    { channel_id: chid, ciphertext: 'old key', send_at: inSecs(s, 10) },
    201,
  );
  await sp.ok(owner, 'POST', `/api/channels/${chid}/members/${bob.id}/kick`, undefined, 204);
  s.clock.advance(11_000);
  await settle(s.platform, bg);
  let row = (await sp.ok(ann, 'GET', '/api/messages/scheduled')).scheduled_messages.find(
    (x: { id: string }) => x.id === m.id,
  );
  assert.equal([row.status, row.reason], ['held', 'held_key_rotated']);
  assert.equal((await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`)).messages, []);
  const noKey = await sp.call(ann, 'PATCH', `/api/messages/scheduled/${m.id}`, { send_at: inSecs(s, 20) });
  expectError(noKey, 409);
  assert.is(noKey.body.code, 'held_key_rotated');
  row = await sp.ok(ann, 'PATCH', `/api/messages/scheduled/${m.id}`, { ciphertext: 'new key', send_at: inSecs(s, 5) });
  assert.equal([row.status, row.reason], ['pending', null]);
  s.clock.advance(6_000);
  await settle(s.platform, bg);
  assert.equal(
    (await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`)).messages.map(
      (x: { id: string; ciphertext: string }) => [x.id, x.ciphertext],
    ),
    [[m.id, 'new key']],
  );
});

test.run();
