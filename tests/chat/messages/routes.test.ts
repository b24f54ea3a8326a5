// Channels, DMs and messages through real HTTP: standalone channels, channel roles, kick/ban,
// slow mode, read-only, archived, posting, paging, edits and history, deletes, threads,
// mentions (members only, at most 50), pins (at most 50), search, read cursors and unread.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, registerChat, uniqueName, type ChatAccount } from '../../support/chat.ts';
import { startChannelWorld, stopChannelWorld, type World } from '../../support/channel-world.ts';

// Out outside the community; each test makes its own channels in the group Ann and Bob joined.
type Ctx = World<'outsider', false>;
const test = suite<Ctx>('chat channels and messages');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_messages', { out: 'outsider', channel: false }));
  await ctx.sp.ok(ctx.ann, 'POST', `/api/groups/${ctx.gid}/join`);
  await ctx.sp.ok(ctx.bob, 'POST', `/api/groups/${ctx.gid}/join`);
});
test.after((ctx) => stopChannelWorld(ctx));

test('standalone channels: members named at creation; roles; kick, ban, unban; leave; transfer', async ({
  sp,
  owner,
  ann,
  bob,
  out,
}) => {
  expectError(
    await sp.call(ann, 'POST', '/api/channels', { name: 'x', member_ids: ['00000000-0000-4000-8000-000000000000'] }),
    404,
  );
  const ch = await sp.ok(ann, 'POST', '/api/channels', { name: 'side', member_ids: [bob.id, out.id] }, 201);
  assert.equal([ch.scope, ch.owner_id, ch.member_count, ch.my_role], ['standalone', ann.id, 3, 'owner']);
  assert.ok((await sp.ok(bob, 'GET', '/api/channels')).channels.some((c: { id: string }) => c.id === ch.id));
  expectError(await sp.call(owner, 'GET', `/api/channels/${ch.id}`), 403);
  expectError(await sp.call(owner, 'POST', `/api/channels/${ch.id}/join`), 403);
  expectError(await sp.call(owner, 'GET', `/api/channels/${ch.id}/members`), 403);
  const role = (by: ChatAccount, who: ChatAccount, r: string) =>
    sp.call(by, 'PATCH', `/api/channels/${ch.id}/members/${who.id}/role`, { role: r });
  expectError(await role(bob, out, 'moderator'), 403);
  assert.is((await role(ann, bob, 'moderator')).body.role, 'moderator');
  expectError(await role(ann, bob, 'owner'), 400);
  expectError(await role(bob, out, 'moderator'), 403);
  expectError(await sp.call(out, 'POST', `/api/channels/${ch.id}/members/${bob.id}/kick`), 403);
  expectError(await sp.call(bob, 'POST', `/api/channels/${ch.id}/members/${ann.id}/kick`), 403);
  assert.is((await sp.call(bob, 'POST', `/api/channels/${ch.id}/members/${out.id}/ban`)).status, 204);
  expectError(await sp.call(out, 'POST', `/api/channels/${ch.id}/messages`, { ciphertext: 'x' }), 403);
  expectError(await sp.call(out, 'POST', `/api/channels/${ch.id}/join`), 403);
  assert.is((await sp.call(bob, 'POST', `/api/channels/${ch.id}/members/${out.id}/unban`)).status, 204);
  expectError(await sp.call(bob, 'POST', `/api/channels/${ch.id}/members/${bob.id}/ban`), 400);
  expectError(await sp.call(ann, 'POST', `/api/channels/${ch.id}/leave`), 409);
  assert.is(
    (await sp.ok(ann, 'POST', `/api/channels/${ch.id}/transfer-ownership`, { user_id: bob.id })).owner_id,
    bob.id,
  );
  expectError(await sp.call(ann, 'POST', `/api/channels/${ch.id}/transfer-ownership`, { user_id: ann.id }), 403);
  assert.is((await sp.call(ann, 'POST', `/api/channels/${ch.id}/leave`)).status, 204);
  expectError(await sp.call(ann, 'POST', `/api/channels/${ch.id}/leave`), 403);
  assert.equal(
    (await sp.ok(bob, 'GET', `/api/channels/${ch.id}/members`)).members.map((m: { user_id: string }) => m.user_id),
    [bob.id],
  );
  expectError(await sp.call(bob, 'GET', '/api/channels/00000000-0000-4000-8000-000000000000'), 404);
});

test('DMs: shared community needed; blocked users cannot initiate; the same pair gets the same channel', async ({
  sp,
  ann,
  bob,
  out,
}) => {
  expectError(await sp.call(ann, 'POST', '/api/dms', { user_id: out.id }), 403);
  expectError(await sp.call(ann, 'POST', '/api/dms', { user_id: ann.id }), 400);
  expectError(await sp.call(ann, 'POST', '/api/dms', { user_id: '00000000-0000-4000-8000-000000000000' }), 404);
  const first = await sp.call(ann, 'POST', '/api/dms', { user_id: bob.id });
  assert.is(first.status, 201, first.text);
  const again = await sp.call(bob, 'POST', '/api/dms', { user_id: ann.id });
  assert.is(again.status, 200);
  assert.is(again.body.id, first.body.id);
  assert.is(again.body.other_user_id, ann.id);
  assert.equal(
    (await sp.ok(ann, 'GET', '/api/dms')).dms.map((d: { id: string; other_user_id: string }) => [
      d.id,
      d.other_user_id,
    ]),
    [[first.body.id, bob.id]],
  );
  await sp.post(bob, first.body.id, 'hello');
  expectError(await sp.call(ann, 'POST', `/api/channels/${first.body.id}/leave`), 400);
  // Blocked.
  assert.is((await sp.call(bob, 'POST', '/api/users/block', { user_id: ann.id })).status, 204);
  expectError(await sp.call(ann, 'POST', '/api/dms', { user_id: bob.id }), 403);
  assert.is((await sp.call(bob, 'POST', `/api/users/unblock/${ann.id}`)).status, 204);
});

test('posting: members only; ciphertext limit; slow mode 429 with Retry-After; read-only; archived', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  out,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const m = await sp.post(ann, chid, 'opaque-1');
  assert.equal(Object.keys(m).sort(), [
    'channel_id',
    'ciphertext',
    'created_at',
    'edited_at',
    'file_ids',
    'id',
    'scheduled_for',
    'sender_id',
    'thread_root_id',
    'via_webhook',
    'webhook',
  ]);
  assert.equal(
    [m.ciphertext, m.sender_id, m.via_webhook, m.edited_at, m.thread_root_id],
    ['opaque-1', ann.id, false, null, null],
  );
  // The response is the message as every read gives it, readable by the poster at once (read-your-writes).
  const listed = (await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`)).messages;
  assert.equal(listed[0], m);
  const reply = await sp.post(owner, chid, 'in a thread', { thread_root_id: m.id });
  assert.equal((await sp.ok(owner, 'GET', `/api/channels/${chid}/threads/${m.id}`)).replies, [reply]);
  expectError(await sp.call(out, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'x' }), 403);
  expectError(await sp.call(ann, 'POST', `/api/channels/${chid}/messages`, { ciphertext: '' }), 400);
  expectError(await sp.call(ann, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'x'.repeat(65_537) }), 400);
  await sp.post(ann, chid, 'x'.repeat(65_536));
  // Slow mode: members wait; a manager does not.
  expectError(await sp.call(ann, 'PATCH', `/api/channels/${chid}`, { slow_mode_secs: 30 }), 403);
  assert.is((await sp.ok(owner, 'PATCH', `/api/channels/${chid}`, { slow_mode_secs: 30 })).slow_mode_secs, 30);
  await sp.post(bob, chid, 'first');
  const slow = await sp.call(bob, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'second' });
  expectError(slow, 429);
  assert.ok(
    Number(slow.headers.get('retry-after')) >= 29 && Number(slow.headers.get('retry-after')) <= 30,
    slow.headers.get('retry-after') ?? '',
  );
  await sp.post(owner, chid, 'manager');
  await sp.post(owner, chid, 'manager again');
  s.clock.advance(30_000);
  await sp.post(bob, chid, 'second');
  await sp.ok(owner, 'PATCH', `/api/channels/${chid}`, { slow_mode_secs: 0, read_only: true });
  expectError(await sp.call(bob, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'ro' }), 403);
  await sp.post(owner, chid, 'announcement');
  await sp.ok(owner, 'PATCH', `/api/channels/${chid}`, { read_only: false, archived: true });
  expectError(await sp.call(bob, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'late' }), 403);
  expectError(await sp.call(owner, 'POST', `/api/channels/${chid}/messages`, { ciphertext: 'late' }), 403);
  await sp.ok(owner, 'PATCH', `/api/channels/${chid}`, { archived: false, topic: 'back' });
  await sp.post(bob, chid, 'again');
});

test('paging: newest first, default 50, clamped 1-100, before pages back without gaps or repeats', async ({
  sp,
  owner,
  ann,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann]);
  const posted: string[] = [];
  for (let i = 0; i < 130; i++) posted.push((await sp.post(ann, chid, `m${i}`)).id);
  const first = await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`);
  assert.is(first.messages.length, 50);
  assert.is(first.messages[0].id, posted[129]);
  assert.is((await sp.ok(ann, 'GET', `/api/channels/${chid}/messages?limit=500`)).messages.length, 100);
  assert.is((await sp.ok(ann, 'GET', `/api/channels/${chid}/messages?limit=0`)).messages.length, 1);
  assert.is((await sp.ok(ann, 'GET', `/api/channels/${chid}/messages?limit=abc`)).messages.length, 50);
  const seen: string[] = [];
  let before: string | null = null;
  for (;;) {
    const page: { messages: { id: string }[] } = await sp.ok(
      ann,
      'GET',
      `/api/channels/${chid}/messages?limit=17${before ? `&before=${before}` : ''}`,
    );
    if (!page.messages.length) break;
    seen.push(...page.messages.map((m) => m.id));
    before = page.messages.at(-1)!.id;
  }
  assert.equal(seen, [...posted].reverse());
  expectError(
    await sp.call(ann, 'GET', `/api/channels/${chid}/messages?before=00000000-0000-4000-8000-000000000000`),
    404,
  );
  expectError(await sp.call(ann, 'GET', `/api/channels/${chid}/messages?before=nope`), 400);
});

test('edit (sender only, versions kept), delete (sender or moderator), threads', async ({
  sp,
  owner,
  ann,
  bob,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const m = await sp.post(ann, chid, 'v1');
  expectError(await sp.call(bob, 'PATCH', `/api/channels/${chid}/messages/${m.id}`, { ciphertext: 'hack' }), 403);
  const edited = await sp.ok(ann, 'PATCH', `/api/channels/${chid}/messages/${m.id}`, { ciphertext: 'v2' });
  assert.is(edited.ciphertext, 'v2');
  assert.ok(edited.edited_at);
  await sp.ok(ann, 'PATCH', `/api/channels/${chid}/messages/${m.id}`, { ciphertext: 'v3' });
  const history = await sp.ok(bob, 'GET', `/api/channels/${chid}/messages/${m.id}/history`);
  assert.equal(
    history.versions.map((v: { version: number; ciphertext: string }) => [v.version, v.ciphertext]),
    [
      [1, 'v1'],
      [2, 'v2'],
      [3, 'v3'],
    ],
  );
  // Threads: a reply to a reply joins the root's thread.
  const r1 = await sp.post(bob, chid, 'reply 1', { thread_root_id: m.id });
  const r2 = await sp.post(ann, chid, 'reply 2', { thread_root_id: r1.id });
  assert.is(r2.thread_root_id, m.id);
  const thread = await sp.ok(bob, 'GET', `/api/channels/${chid}/threads/${m.id}`);
  assert.is(thread.root.id, m.id);
  assert.equal(
    thread.replies.map((r: { id: string }) => r.id),
    [r1.id, r2.id],
  );
  assert.is((await sp.ok(bob, 'GET', `/api/channels/${chid}/threads/${r2.id}`)).root.id, m.id);
  expectError(
    await sp.call(bob, 'POST', `/api/channels/${chid}/messages`, {
      ciphertext: 'x',
      thread_root_id: '00000000-0000-4000-8000-000000000000',
    }),
    404,
  );
  // Delete.
  expectError(await sp.call(bob, 'DELETE', `/api/channels/${chid}/messages/${m.id}`), 403);
  assert.is((await sp.call(bob, 'DELETE', `/api/channels/${chid}/messages/${r1.id}`)).status, 204);
  assert.is(
    (await sp.call(owner, 'DELETE', `/api/channels/${chid}/messages/${r2.id}`)).status,
    204,
    "a moderator deletes others' messages",
  );
  expectError(await sp.call(ann, 'GET', `/api/channels/${chid}/messages/${r1.id}/history`), 404);
  expectError(await sp.call(ann, 'PATCH', `/api/channels/${chid}/messages/${r1.id}`, { ciphertext: 'x' }), 404);
  assert.equal((await sp.ok(ann, 'GET', `/api/channels/${chid}/threads/${m.id}`)).replies, []);
  assert.not.ok(
    (await sp.ok(ann, 'GET', `/api/channels/${chid}/messages`)).messages.some((x: { id: string }) => x.id === r1.id),
  );
});

test('pins: moderators and above, at most 50 per channel', async ({ sp, owner, ann, gid }) => {
  const chid = await sp.channel(owner, gid, [ann]);
  const ids: string[] = [];
  for (let i = 0; i < 51; i++) ids.push((await sp.post(owner, chid, `p${i}`)).id);
  expectError(await sp.call(ann, 'POST', `/api/channels/${chid}/pins/${ids[0]}`), 403);
  for (const id of ids.slice(0, 50))
    assert.is((await sp.call(owner, 'POST', `/api/channels/${chid}/pins/${id}`)).status, 204);
  assert.is(
    (await sp.call(owner, 'POST', `/api/channels/${chid}/pins/${ids[0]}`)).status,
    204,
    'pinning again is harmless',
  );
  expectError(await sp.call(owner, 'POST', `/api/channels/${chid}/pins/${ids[50]}`), 409);
  expectError(await sp.call(owner, 'POST', `/api/channels/${chid}/pins/00000000-0000-4000-8000-000000000000`), 404);
  const pins = await sp.ok(ann, 'GET', `/api/channels/${chid}/pins`);
  assert.is(pins.pins.length, 50);
  assert.is(pins.pins[0].pinned_by, owner.id);
  expectError(await sp.call(ann, 'DELETE', `/api/channels/${chid}/pins/${ids[0]}`), 403);
  assert.is((await sp.call(owner, 'DELETE', `/api/channels/${chid}/pins/${ids[0]}`)).status, 204);
  assert.is((await sp.call(owner, 'POST', `/api/channels/${chid}/pins/${ids[50]}`)).status, 204);
});

test('mentions: members only, at most 50 notified; read cursors and unread counts', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  out,
  cid,
  gid,
}) => {
  // 51 more members.
  const many: ChatAccount[] = [];
  for (let i = 0; i < 51; i++) many.push(await registerChat(s.chat, uniqueName('m')));
  await sp.join(cid, owner, many);
  const chid = await sp.channel(owner, gid, [ann, bob]);
  for (const m of many) {
    await sp.ok(m, 'POST', `/api/groups/${gid}/join`);
    await sp.ok(m, 'POST', `/api/channels/${chid}/join`);
  }
  const mentioned = [out.id, ...many.map((m) => m.id)];
  const post = await sp.post(ann, chid, 'hi all', { mentions: mentioned });
  const { rows } = await s.db.pool.query('SELECT mentions FROM chat_messages WHERE id = $1', [post.id]);
  assert.is(rows[0].mentions.length, 50, 'members among them, at most 50');
  assert.not.ok(rows[0].mentions.includes(out.id));
  assert.equal(
    rows[0].mentions,
    many.slice(0, 50).map((m) => m.id),
  );
  expectError(
    await sp.call(ann, 'POST', `/api/channels/${chid}/messages`, {
      ciphertext: 'x',
      mentions: Array(201).fill(bob.id),
    }),
    400,
  );
  // Unread.
  await sp.post(ann, chid, 'two', { mentions: [bob.id] });
  const three = await sp.post(ann, chid, 'three');
  const unread = async (who: ChatAccount) =>
    (await sp.ok(who, 'GET', '/api/channels/unread')).channels.find(
      (c: { channel_id: string }) => c.channel_id === chid,
    );
  assert.equal(await unread(bob), { channel_id: chid, unread_count: 3, mention_count: 1, last_read_message_id: null });
  assert.equal(await unread(many[0]!), {
    channel_id: chid,
    unread_count: 3,
    mention_count: 1,
    last_read_message_id: null,
  });
  assert.is((await unread(ann)).unread_count, 0, "one's own messages are read");
  assert.is((await sp.call(bob, 'POST', `/api/channels/${chid}/read-cursor`, { message_id: post.id })).status, 204);
  assert.equal(await unread(bob), {
    channel_id: chid,
    unread_count: 2,
    mention_count: 1,
    last_read_message_id: post.id,
  });
  await sp.ok(bob, 'POST', `/api/channels/${chid}/read-cursor`, { message_id: three.id }, 204);
  assert.equal(await unread(bob), {
    channel_id: chid,
    unread_count: 0,
    mention_count: 0,
    last_read_message_id: three.id,
  });
  const cursors = await sp.ok(ann, 'GET', `/api/channels/${chid}/read-cursors`);
  assert.equal(
    cursors.cursors.map((c: { user_id: string; message_id: string }) => [c.user_id, c.message_id]),
    [[bob.id, three.id]],
  );
  expectError(
    await sp.call(bob, 'POST', `/api/channels/${chid}/read-cursor`, {
      message_id: '00000000-0000-4000-8000-000000000000',
    }),
    404,
  );
  expectError(await sp.call(out, 'POST', `/api/channels/${chid}/read-cursor`, { message_id: three.id }), 403);
  expectError(await sp.call(out, 'GET', `/api/channels/${chid}/read-cursors`), 403);
});

test('search: filters over ciphertext; q only over plaintext (webhook) messages; only channels the caller reads', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  out,
  gid,
}) => {
  const chid = await sp.channel(owner, gid, [ann, bob]);
  const a = await sp.post(ann, chid, 'cipher-a');
  const b = await sp.post(bob, chid, 'cipher-b');
  // A plaintext (webhook) message, as the webhooks issue will append it.
  const { messageDecider } = await import('../../../domain/chat/messages/decider.ts');
  const { messageStream } = await import('../../../domain/chat/streams.ts');
  const plainId = crypto.randomUUID();
  await s.platform.commands.run(
    messageStream(plainId),
    messageDecider,
    {
      type: 'Post',
      message_id: plainId,
      channel_id: chid,
      sender_id: owner.id,
      ciphertext: 'Deployment finished for the gardens',
      kind: 'text',
      thread_root_id: null,
      mentions: [],
      via_webhook: true,
      has_file: false,
      at: s.clock.now().toISOString(),
    },
    { actor: { kind: 'system', id: 'test' }, correlationId: null },
  );
  const ids = (r: { messages: { id: string }[] }) => r.messages.map((m) => m.id);
  assert.equal(ids(await sp.ok(ann, 'GET', `/api/channels/${chid}/messages/search?sender=${bob.id}`)), [b.id]);
  assert.equal(ids(await sp.ok(ann, 'GET', `/api/channels/${chid}/messages/search?q=deployments`)), [plainId]);
  assert.equal(
    ids(await sp.ok(ann, 'GET', `/api/channels/${chid}/messages/search?q=cipher`)),
    [],
    'ciphertext never matches q',
  );
  assert.equal(ids(await sp.ok(ann, 'GET', `/api/channels/${chid}/messages/search?has_file=true`)), []);
  assert.equal(
    ids(
      await sp.ok(
        ann,
        'GET',
        `/api/channels/${chid}/messages/search?after=${a.created_at}&before=${new Date(Date.parse(b.created_at) + 1).toISOString()}`,
      ),
    ),
    [b.id],
  );
  assert.ok(ids(await sp.ok(ann, 'GET', '/api/messages/search?q=gardens')).includes(plainId));
  assert.equal(ids(await sp.ok(out, 'GET', '/api/messages/search?q=gardens')), [], 'only channels the caller reads');
  expectError(await sp.call(out, 'GET', `/api/channels/${chid}/messages/search?q=x`), 403);
  expectError(await sp.call(ann, 'GET', '/api/messages/search?sender=nope'), 400);
  // Webhook plaintext is returned in the ciphertext field.
  const page = await sp.ok(ann, 'GET', `/api/channels/${chid}/messages?limit=1`);
  assert.equal(
    [page.messages[0].ciphertext, page.messages[0].via_webhook],
    ['Deployment finished for the gardens', true],
  );
});

test.run();
