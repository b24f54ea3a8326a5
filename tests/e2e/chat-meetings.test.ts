// Meeting reminders end to end, two real server processes on one database: 100 meetings with two
// reminders each, all due at once, fire exactly 200 times (one `MeetingReminderFired` per
// reminder stream), and a member's socket on either instance hears `MeetingReminder` for each.
// The meetings are appended through the decider with a creation time 20 minutes back, so their
// reminders are due now while the meetings still lie ahead.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Temporal } from 'temporal-polyfill';
import { bearer, registerChat, uniqueName, type ChatAccount } from '../support/chat.ts';
import { startChatProcess, type ChatProcess } from '../support/chat-process.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { http } from '../support/services.ts';
import { seedingPlatform } from '../support/schedule.ts';
import { connectWs } from '../support/ws.ts';
import { mapLimit } from '../../infra/scheduler/scheduler.ts';
import { meetingDecider, meetingStream } from '../../domain/chat/meetings/decider.ts';
import type { Platform } from '../../main/platform.ts';

interface Ctx { db: TestDatabase; a: ChatProcess; b: ChatProcess; seed: Platform; owner: ChatAccount; ann: ChatAccount; chid: string }
const test = suite<Ctx>('e2e: meeting reminders on two instances');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(base: string, who: ChatAccount, method: string, path: string, json?: unknown, status = 200) {
  const r = await http(`${base}${path}`, { method, headers: bearer(who), ...(json !== undefined ? { json } : {}) });
  assert.is(r.status, status, `${method} ${path}: ${r.text}`);
  return r.body;
}

async function until<T>(what: string, check: () => Promise<T | false>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

test.before(async (ctx) => {
  ctx.db = await freshDatabase('chat_meetings_e2e');
  const env = { CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_API_RATE_PER_SEC: '100000' };
  [ctx.a, ctx.b] = await Promise.all([startChatProcess(ctx.db.url, env), startChatProcess(ctx.db.url, env)]);
  ctx.seed = await seedingPlatform(ctx.db.url);
  ctx.owner = await registerChat(ctx.a.url, uniqueName('own'));
  ctx.ann = await registerChat(ctx.b.url, uniqueName('ann'));
  const cid = (await call(ctx.a.url, ctx.owner, 'POST', '/api/communities', { name: 'Meet' }, 201)).id;
  const invite = await call(ctx.a.url, ctx.owner, 'POST', `/api/communities/${cid}/invites`, {}, 201);
  await call(ctx.b.url, ctx.ann, 'POST', `/api/community-invites/${invite.code}/accept`);
  const gid = (await call(ctx.a.url, ctx.owner, 'POST', '/api/groups', { community_id: cid, name: 'G', visibility: 'public' }, 201)).id;
  await call(ctx.b.url, ctx.ann, 'POST', `/api/groups/${gid}/join`);
  ctx.chid = (await call(ctx.a.url, ctx.owner, 'POST', `/api/groups/${gid}/channels`, { name: 'c' }, 201)).id;
  await call(ctx.b.url, ctx.ann, 'POST', `/api/channels/${ctx.chid}/join`);
});
test.after(async (ctx) => {
  await ctx.a?.kill();
  await ctx.b?.kill();
  await ctx.seed?.close();
  await ctx.db?.drop();
});

test('100 meetings x 2 reminders due at once, two instances: exactly 200 fired, each heard on /api/ws', async ({ a, b, seed, owner, ann, chid }) => {
  // Sockets on both instances, one per member.
  const wsAnn = await connectWs(b.url);
  wsAnn.send({ type: 'Authenticate', token: ann.access });
  await wsAnn.next((f) => f.type === 'Authenticated');
  const wsOwner = await connectWs(a.url);
  wsOwner.send({ type: 'Authenticate', token: owner.access });
  await wsOwner.next((f) => f.type === 'Authenticated');

  const now = Date.now();
  const start = Temporal.Instant.fromEpochMilliseconds(now + 30 * 60_000).toZonedDateTimeISO('UTC').toPlainDateTime().toString({ smallestUnit: 'minute' });
  const at = new Date(now - 40 * 60_000).toISOString();
  const ids = Array.from({ length: 100 }, () => randomUUID());
  await mapLimit(ids, 16, async (id) => {
    await seed.commands.run(meetingStream(id), meetingDecider, {
      type: 'Schedule', id, channel_id: chid, creator_id: ann.id, title: `M ${id.slice(0, 4)}`, description: '', start, time_zone: 'UTC', duration_minutes: 30, rrule: null, reminders: [35, 32], location: null, at,
    }, { actor: { kind: 'user', id: ann.id }, correlationId: null }, { awaitProjections: false });
  });
  const count = async () => (await seed.pool.query<{ events: number; streams: number }>(
    `SELECT count(*)::int AS events, count(DISTINCT stream_id)::int AS streams FROM events WHERE type = 'MeetingReminderFired' AND data->>'meeting_id' = ANY($1::text[])`, [ids])).rows[0]!;
  await until('200 reminders fired', async () => ((await count()).events >= 200 ? true : false));
  await sleep(3000);
  assert.equal(await count(), { events: 200, streams: 200 });
  const { rows } = await seed.pool.query(`SELECT data FROM events WHERE type = 'MeetingReminderFired' AND data->>'meeting_id' = ANY($1::text[])`, [ids]);
  assert.ok(rows.every((r) => [...r.data.recipient_ids].sort().join() === [owner.id, ann.id].sort().join()), 'both members');

  // Each socket hears each reminder once.
  for (const ws of [wsAnn, wsOwner]) {
    const heard = new Set<string>();
    while (heard.size < 200) {
      const f = await ws.next((x) => x.type === 'MeetingReminder', 60_000);
      assert.ok(!heard.has(f.reminder_id), `once: ${f.reminder_id}`);
      assert.ok(ids.includes(f.meeting_id));
      assert.equal([f.channel_id, typeof f.title, f.start.startsWith(start.slice(0, 10))], [chid, 'string', true]);
      heard.add(f.reminder_id);
    }
  }
  wsAnn.close();
  wsOwner.close();
});

test.run();
