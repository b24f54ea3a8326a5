// Rebuild equals live for the polls, scheduled messages, scheduler jobs and bookmarks read
// models, after every command of theirs (and the scheduler's firings) has run.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { POLL_EVENT_TYPES } from '../../../domain/chat/polls/events.ts';
import { SCHEDULED_EVENT_TYPES } from '../../../domain/chat/scheduled/events.ts';
import { BOOKMARK_EVENT_TYPES } from '../../../domain/chat/bookmarks/events.ts';
import { loggedEvents, startTestApps } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';
import { backgroundOf, settle } from '../../support/schedule.ts';

const test = suite('chat polls, scheduled messages, jobs, bookmarks: rebuild equals live');

const PROJECTIONS = ['chat_polls', 'chat_scheduled_messages', 'scheduled_jobs', 'chat_bookmarks'];
const TABLES: Record<string, string> = {
  chat_polls: 'SELECT * FROM chat_polls ORDER BY id',
  chat_poll_votes: 'SELECT * FROM chat_poll_votes ORDER BY poll_id, user_id, option_id',
  chat_scheduled_messages: 'SELECT * FROM chat_scheduled_messages ORDER BY id',
  scheduled_jobs: 'SELECT id, kind, subject_id, due_at, data FROM scheduled_jobs ORDER BY id',
  chat_bookmarks: 'SELECT * FROM chat_bookmarks ORDER BY user_id, message_id',
};

test('every command, fired jobs included; the rebuilt tables equal the live ones', async () => {
  const s = await startTestApps('chat_sched_projection', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  const bg = backgroundOf(s.platform);
  try {
    const sp = new Spaces(s);
    const owner = await sp.register('own');
    const ann = await sp.register('ann');
    const cid = await sp.community(owner);
    await sp.join(cid, owner, [ann]);
    const gid = await sp.group(owner, cid);
    const chid = await sp.channel(owner, gid, [ann]);
    const later = (secs: number) => new Date(s.clock.now().getTime() + secs * 1000).toISOString();
    const p1 = await sp.ok(
      ann,
      'POST',
      `/api/channels/${chid}/polls`,
      { question: 'a?', options: ['x', 'y'], multiple_choice: true },
      201,
    );
    const p2 = await sp.ok(
      ann,
      'POST',
      `/api/channels/${chid}/polls`,
      { question: 'b?', options: ['x', 'y'], closes_at: later(120) },
      201,
    );
    await sp.ok(
      ann,
      'POST',
      `/api/channels/${chid}/polls`,
      { question: 'c?', options: ['x', 'y'], closes_at: later(3600) },
      201,
    );
    await sp.ok(ann, 'POST', `/api/polls/${p1.id}/vote`, { option_ids: p1.options.map((o: any) => o.option_id) });
    await sp.ok(owner, 'POST', `/api/polls/${p1.id}/vote`, { option_ids: [p1.options[0].option_id] });
    await sp.ok(owner, 'POST', `/api/polls/${p1.id}/vote`, { option_ids: [] });
    await sp.ok(owner, 'POST', `/api/polls/${p2.id}/vote`, { option_ids: [p2.options[1].option_id] });
    await sp.ok(ann, 'POST', `/api/polls/${p1.id}/close`);
    const due = await sp.ok(
      ann,
      'POST',
      '/api/messages/schedule',
      { channel_id: chid, ciphertext: 'soon', send_at: later(90) },
      201,
    );
    const kept = await sp.ok(
      ann,
      'POST',
      '/api/messages/schedule',
      { channel_id: chid, ciphertext: 'kept', send_at: later(3600) },
      201,
    );
    await sp.ok(ann, 'PATCH', `/api/messages/scheduled/${kept.id}`, { send_at: later(7200), mentions: [owner.id] });
    const gone = await sp.ok(
      ann,
      'POST',
      '/api/messages/schedule',
      { channel_id: chid, ciphertext: 'gone', send_at: later(60) },
      201,
    );
    await sp.ok(ann, 'DELETE', `/api/messages/scheduled/${gone.id}`, undefined, 204);
    s.clock.advance(121_000);
    await settle(s.platform, bg);
    const m = await sp.post(owner, chid, 'mark me');
    await sp.ok(ann, 'POST', `/api/bookmarks/${m.id}`, undefined, 201);
    await sp.ok(ann, 'POST', `/api/bookmarks/${due.id}`, undefined, 201);
    await sp.ok(owner, 'POST', `/api/bookmarks/${m.id}`, undefined, 201);
    await sp.ok(owner, 'DELETE', `/api/bookmarks/${m.id}`, undefined, 204);

    const seen = new Set((await loggedEvents(s)).map((e) => e.type));
    const expected = [...POLL_EVENT_TYPES, ...SCHEDULED_EVENT_TYPES, ...BOOKMARK_EVENT_TYPES].filter(
      (t) => t !== 'ScheduledMessageHoldPlaced' && t !== 'ScheduledMessageFailed',
    );
    assert.equal(
      expected.filter((t) => !seen.has(t)),
      [],
    );

    const snapshot = async () =>
      Object.fromEntries(
        await Promise.all(Object.entries(TABLES).map(async ([t, q]) => [t, (await s.platform.pool.query(q)).rows])),
      );
    const live = await snapshot();
    assert.is(live.scheduled_jobs.length, 2, 'the kept message and the open poll');
    await s.platform.engine.stop();
    for (const name of PROJECTIONS) assert.ok((await s.platform.engine.rebuild(name)) > 0, name);
    assert.equal(await snapshot(), live);
  } finally {
    await bg.stop();
    await s.close();
  }
});

test.run();
