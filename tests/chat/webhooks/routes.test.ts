// Webhooks through real HTTP: management rights, the token shown once and stored hashed,
// execution (plaintext, username and avatar, 422 payloads, no files, 404 tokens), the
// one-a-second limit with Retry-After, mentions, history, and no token in the log or log lines.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mentionedUsernames } from '../../../domain/chat/webhooks/decider.ts';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { startSpaces } from '../../support/channel-world.ts';
import { http, logText, type TestServices } from '../../support/services.ts';
import { expectStatus, type Spaces } from '../../support/spaces.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  inst: ChatAccount;
  owner: ChatAccount;
  mod: ChatAccount;
  ann: ChatAccount;
  outsider: ChatAccount;
  cid: string;
  ch: string;
}
const test = suite<Ctx>('chat webhooks');
test.before(async (ctx) => {
  Object.assign(ctx, await startSpaces('chat_webhooks'));
  ctx.inst = await ctx.sp.register('inst');
  ctx.owner = await ctx.sp.register('owner');
  ctx.mod = await ctx.sp.register('mod');
  ctx.ann = await ctx.sp.register('Ann_W');
  ctx.outsider = await ctx.sp.register('out');
  ctx.cid = await ctx.sp.community(ctx.inst);
  await ctx.sp.join(ctx.cid, ctx.inst, [ctx.owner]);
  await ctx.sp.ok(ctx.inst, 'POST', `/api/communities/${ctx.cid}/transfer-ownership`, { user_id: ctx.owner.id });
  await ctx.sp.ok(ctx.inst, 'POST', `/api/communities/${ctx.cid}/leave`, undefined, 204);
  await ctx.sp.join(ctx.cid, ctx.owner, [ctx.mod], 'moderator');
  await ctx.sp.join(ctx.cid, ctx.owner, [ctx.ann, ctx.outsider]);
  const g = await ctx.sp.group(ctx.owner, ctx.cid);
  ctx.ch = await ctx.sp.channel(ctx.owner, g, [ctx.mod, ctx.ann]);
});
test.after(async ({ s }) => s?.close());

const execute = (sp: Spaces, token: string, json: unknown, headers: Record<string, string> = {}) =>
  http(`${sp.base}/api/webhooks/execute/${token}`, { method: 'POST', json, headers });

test('mentions: exact usernames, no @everyone/@here/@channel, no addresses, de-duplicated', () => {
  assert.equal(
    mentionedUsernames('hi @Ann_W and @bob, @Ann_W again; mail ann@example.com @everyone @here @channel (@zed)'),
    ['Ann_W', 'bob', 'zed'],
  );
});

test('management: community owners and admins and instance admins; moderators, members and outsiders 403', async ({
  sp,
  inst,
  owner,
  mod,
  ann,
  ch,
}) => {
  expectError(await sp.call(mod, 'POST', `/api/channels/${ch}/webhooks`, { name: 'CI' }), 403);
  expectError(await sp.call(ann, 'POST', `/api/channels/${ch}/webhooks`, { name: 'CI' }), 403);
  expectError(await sp.call(null, 'POST', `/api/channels/${ch}/webhooks`, { name: 'CI' }), 401);
  expectError(await sp.call(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: '' }), 400);
  expectError(await sp.call(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'x'.repeat(65) }), 400);
  expectError(
    await sp.call(owner, 'POST', '/api/channels/00000000-0000-4000-8000-000000000000/webhooks', { name: 'CI' }),
    404,
  );
  const created = await sp.ok(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'CI' }, 201);
  assert.is(created.token.length, 64);
  assert.is(created.active, true);
  const byInstance = await sp.ok(inst, 'POST', `/api/channels/${ch}/webhooks`, { name: 'Ops' }, 201);
  const list = await sp.ok(owner, 'GET', `/api/channels/${ch}/webhooks`);
  assert.equal(
    list.webhooks.map((w: { name: string }) => w.name),
    ['CI', 'Ops'],
  );
  assert.not.ok(JSON.stringify(list).includes(created.token));
  expectError(await sp.call(ann, 'GET', `/api/channels/${ch}/webhooks`), 403);
  expectError(await sp.call(ann, 'PATCH', `/api/webhooks/${created.id}`, { name: 'x' }), 403);
  expectError(await sp.call(ann, 'DELETE', `/api/webhooks/${byInstance.id}`), 403);
  expectError(await sp.call(owner, 'PATCH', '/api/webhooks/00000000-0000-4000-8000-000000000000', { name: 'x' }), 404);
  assert.is(
    (
      await sp.ok(owner, 'PATCH', `/api/webhooks/${created.id}`, {
        name: 'Builds',
        avatar_url: 'https://example.com/a.png',
      })
    ).name,
    'Builds',
  );
});

test('execute: plaintext as the webhook, 422 payloads, no files, 1/s with Retry-After, deactivate and delete: 404', async ({
  s,
  sp,
  owner,
  ann,
  ch,
}) => {
  const hook = await sp.ok(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'Deploys' }, 201);
  const text = `deployed **v1** for @${ann.username} and @${ann.username}, not @out or @everyone or ${ann.username.toLowerCase()}@host`;
  const posted = expectStatus(
    await execute(sp, hook.token, { content: `${text} @${ann.username.toLowerCase()}` }),
    201,
  ).body;
  assert.is(posted.status, 'ok');
  assert.is(posted.channel_id, ch);
  // Two at once through another webhook: one passes, one is limited (no timing: both hit the limiter together).
  const burstHook = await sp.ok(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'Burst' }, 201);
  const burst = await Promise.all([
    execute(sp, burstHook.token, { content: 'burst' }),
    execute(sp, burstHook.token, { content: 'burst' }),
  ]);
  assert.equal(burst.map((r) => r.status).sort(), [201, 429]);
  const limited = burst.find((r) => r.status === 429)!;
  expectError(limited, 429);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  s.clock.advance(1001);
  for (const bad of [
    {},
    { content: '' },
    { content: 'x'.repeat(4001) },
    { content: 'x', username: 'u'.repeat(65) },
    { content: 'x', file: 'abc' },
    { content: 'x', avatar_url: 'not a url' },
  ]) {
    expectError(await execute(sp, hook.token, bad), 422);
  }
  expectError(
    await http(`${sp.base}/api/webhooks/execute/${hook.token}`, {
      method: 'POST',
      body: 'not json',
      headers: { 'content-type': 'application/json' },
    }),
    422,
  );
  expectError(
    await http(`${sp.base}/api/webhooks/execute/${hook.token}`, {
      method: 'POST',
      body: '--x\r\n',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
    }),
    422,
  );
  expectError(await execute(sp, 'z'.repeat(64), { content: 'x' }), 404);
  expectStatus(
    await execute(sp, hook.token, {
      content: 'as someone',
      username: 'Release Bot',
      avatar_url: 'https://example.com/r.png',
    }),
    201,
  );
  // History shows the plaintext in the ciphertext field, with the webhook's display.
  const history = (await sp.ok(ann, 'GET', `/api/channels/${ch}/messages`)).messages.filter(
    (m: { sender_id: string }) => m.sender_id === hook.id,
  );
  const [second, first] = history;
  assert.is(first.ciphertext, `${text} @${ann.username.toLowerCase()}`);
  assert.is(first.via_webhook, true);
  assert.is(first.sender_id, hook.id);
  assert.equal(first.webhook, { username: 'Deploys', avatar_url: null });
  assert.equal(second.webhook, { username: 'Release Bot', avatar_url: 'https://example.com/r.png' });
  // Mentions: ann (a member) once; out is no member of the channel.
  const mention = await s.db.pool.query('SELECT user_id FROM chat_mentions WHERE message_id = $1', [posted.message_id]);
  assert.equal(
    mention.rows.map((r: { user_id: string }) => r.user_id),
    [ann.id],
  );
  const unread = (await sp.ok(ann, 'GET', '/api/channels/unread')).channels.find(
    (x: { channel_id: string }) => x.channel_id === ch,
  );
  assert.is(unread.mention_count, 1);
  // Plaintext search finds webhook messages.
  assert.is((await sp.ok(ann, 'GET', `/api/channels/${ch}/messages/search?q=deployed`)).messages.length, 1);
  assert.is((await sp.ok(ann, 'GET', `/api/channels/${ch}/messages/search?q=burst`)).messages.length, 1);
  // Inactive: 404; active again: works; deleted: 404 at once.
  await sp.ok(owner, 'PATCH', `/api/webhooks/${hook.id}`, { active: false });
  s.clock.advance(1001);
  expectError(await execute(sp, hook.token, { content: 'x' }), 404);
  await sp.ok(owner, 'PATCH', `/api/webhooks/${hook.id}`, { active: true });
  expectStatus(await execute(sp, hook.token, { content: 'back' }), 201);
  await sp.ok(owner, 'DELETE', `/api/webhooks/${hook.id}`, undefined, 204);
  s.clock.advance(1001);
  expectError(await execute(sp, hook.token, { content: 'x' }), 404);
  // The token appears in neither the log nor the log lines.
  assert.not.ok((await logText(s)).includes(hook.token));
  assert.not.ok(s.logLines.join('\n').includes(hook.token));
  assert.ok(s.logLines.some((l) => l.includes('/api/webhooks/execute/[redacted]')));
});

test("the channel's posting rules: archived and read-only 403 with nothing written, slow mode 429, refusals spend no rate, a deleted channel 404", async ({
  s,
  sp,
  owner,
  mod,
  ann,
  cid,
}) => {
  const g = await sp.group(owner, cid, 'public', 'Rules');
  const ch = await sp.channel(owner, g, [mod, ann], 'rules');
  const hook = await sp.ok(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'Rules' }, 201);
  const written = async () =>
    (
      await s.db.pool.query(
        `SELECT count(*)::int AS n FROM events WHERE type = 'MessagePosted' AND data->>'sender_id' = $1`,
        [hook.id],
      )
    ).rows[0].n as number;
  // The same bodies a member's post gets (the spec's body is `error`; 429 adds `code`).
  const refused = async (status: number, error: string) => {
    const r = await execute(sp, hook.token, { content: 'refused' });
    expectError(r, status);
    assert.match(r.body.error, error);
    return r;
  };
  await sp.ok(owner, 'PATCH', `/api/channels/${ch}`, { archived: true });
  await refused(403, 'this channel is archived');
  // Read-only: a webhook is no moderator (the channel's moderators still post).
  await sp.ok(owner, 'PATCH', `/api/channels/${ch}`, { archived: false, read_only: true });
  await refused(403, 'this channel is read-only');
  await sp.post(owner, ch, 'moderators still post');
  assert.is(await written(), 0);
  assert.equal(
    (await sp.ok(ann, 'GET', `/api/channels/${ch}/messages`)).messages.filter(
      (m: { via_webhook: boolean }) => m.via_webhook,
    ),
    [],
  );
  // The refusals did not spend the webhook's one-a-second budget.
  await sp.ok(owner, 'PATCH', `/api/channels/${ch}`, { read_only: false });
  expectStatus(await execute(sp, hook.token, { content: 'open again' }), 201);
  // Slow mode holds a webhook as it holds a member, with Retry-After.
  await sp.ok(owner, 'PATCH', `/api/channels/${ch}`, { slow_mode_secs: 30 });
  s.clock.advance(1001);
  const slow = await refused(429, 'slow mode');
  assert.is(slow.body.code, 'rate_limited');
  assert.ok(
    Number(slow.headers.get('retry-after')) >= 28 && Number(slow.headers.get('retry-after')) <= 30,
    slow.headers.get('retry-after') ?? '',
  );
  s.clock.advance(30_000);
  expectStatus(await execute(sp, hook.token, { content: 'after the wait' }), 201);
  assert.is(await written(), 2);
  // The channel deleted: 404, as for an invalid token.
  await sp.ok(owner, 'DELETE', `/api/groups/${g}/channels/${ch}`, undefined, 204);
  s.clock.advance(31_000);
  expectError(await execute(sp, hook.token, { content: 'gone' }), 404);
  assert.is(await written(), 2);
});

test('at most 50 distinct members are notified per post', async ({ s, sp, owner, ch }) => {
  const members: ChatAccount[] = [];
  for (let i = 0; i < 52; i++) members.push(await sp.register(`m${i}`));
  await sp.join((await sp.ok(owner, 'GET', `/api/channels/${ch}`)).community_id, owner, members);
  for (const m of members) await sp.ok(m, 'POST', `/api/channels/${ch}/join`);
  const hook = await sp.ok(owner, 'POST', `/api/channels/${ch}/webhooks`, { name: 'Many' }, 201);
  const posted = expectStatus(
    await execute(sp, hook.token, { content: members.map((m) => `@${m.username}`).join(' ') }),
    201,
  ).body;
  const n = await s.db.pool.query('SELECT count(*)::int AS n FROM chat_mentions WHERE message_id = $1', [
    posted.message_id,
  ]);
  assert.is(n.rows[0].n, 50);
});

test.run();
