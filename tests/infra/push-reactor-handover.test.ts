// The web-push sender across two processes: both run it on the processor engine; one holds its
// lock and pushes. kill -9 of that one hands the sender to the other, which resumes from the
// checkpoint: every reminder is pushed to each subscribed browser exactly once (effects counted
// per event id, by the Topic the sender derives from the reminder), none skipped; the only
// events handed over twice are those of the batch the killed process had not yet checkpointed,
// and that batch was killed before it pushed (the process pauses between a batch's start and its
// effects). The push service is the suites' recording double (tests/support/push.ts).

import { randomBytes, randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sealSecret } from '../../crypto/seal.ts';
import type { ReminderEvent } from '../../domain/chat/meetings/events.ts';
import { endpointSealContext, keysSealContext } from '../../domain/chat/push/decider.ts';
import type { EventToAppend } from '../../infra/eventstore/port.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { generateVapidKeys, pushTopic } from '../../infra/push/web-push.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { browser, decrypt, PushService, type Browser } from '../support/push.ts';
import {
  assertResumedFromCheckpoint,
  createAttemptsTable,
  holdsReactor,
  kill9,
  killMidBatch,
  startReactorChild,
  type ReactorChild,
} from '../support/reactor-children.ts';
import { until } from '../support/until.ts';

/** A batch pauses this long before it pushes: long enough for the kill to land first. */
const PAUSE_MS = 500;

interface Subscriber {
  user_id: string;
  path: string;
  browser: Browser;
}
interface Ctx {
  db: TestDatabase;
  store: PostgresEventStore;
  push: PushService;
  children: ReactorChild[];
  sealKey: Buffer;
  subscribers: Subscriber[];
}
const test = suite<Ctx>('web-push sender hand-over across processes');

/** A user and their browser's subscription, written to the read models the sender reads. */
async function subscriber(ctx: Ctx, name: string): Promise<Subscriber> {
  const s = { user_id: randomUUID(), path: `/${name}`, browser: browser() };
  const id = randomUUID();
  const now = new Date();
  await ctx.db.pool.query(
    'INSERT INTO chat_users (id, username, display_name, created_at, updated_at) VALUES ($1, $2, $2, $3, $3)',
    [s.user_id, name, now],
  );
  await ctx.db.pool.query(
    'INSERT INTO chat_push_subscriptions (id, user_id, endpoint_sealed, keys_sealed, origin, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [
      id,
      s.user_id,
      sealSecret(ctx.sealKey, ctx.push.url(s.path), endpointSealContext(id)),
      sealSecret(ctx.sealKey, JSON.stringify(s.browser.keys), keysSealContext(id)),
      ctx.push.origin,
      now,
    ],
  );
  return s;
}

/** A meeting reminder for every subscriber, as the meetings scheduler appends it; the meeting starts in an hour. */
function reminder(recipients: string[]): { event: EventToAppend; data: ReminderEvent['data'] } {
  const meeting = randomUUID();
  const start = new Date(Date.now() + 3_600_000).toISOString();
  const occurrence = start.slice(0, 16);
  const data: ReminderEvent['data'] = {
    meeting_id: meeting,
    occurrence_id: occurrence,
    channel_id: randomUUID(),
    title: 'Stand-up',
    start,
    offset_minutes: 10,
    reminder_id: `${meeting}-${occurrence}-10`,
    recipient_ids: recipients,
    at: new Date().toISOString(),
  };
  const event: EventToAppend = {
    id: randomUUID(),
    type: 'MeetingReminderFired',
    data,
    metadata: { actor: { kind: 'system', id: 'scheduler' }, correlation_id: null, causation_id: null, schema: 1 },
  };
  return { event, data };
}

test.before(async (ctx) => {
  ctx.db = await freshDatabase('push_reactor_handover');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
  ctx.push = await new PushService().start();
  ctx.sealKey = randomBytes(32);
  ctx.children = [];
  await createAttemptsTable(ctx.db.pool);
  ctx.subscribers = [await subscriber(ctx, 'ada'), await subscriber(ctx, 'bob')];
});
test.after(async ({ db, store, push, children }) => {
  await Promise.all((children ?? []).map(kill9));
  await push?.close();
  await store?.close();
  await db?.drop();
});

test('kill -9 of the process holding the push sender: the other takes over and pushes every reminder once to each browser', async (ctx) => {
  const { db, store, push, subscribers } = ctx;
  const env = {
    REACTOR: 'push-sender',
    PAUSE_MS: String(PAUSE_MS),
    SEAL_KEY: ctx.sealKey.toString('hex'),
    VAPID_KEYS: JSON.stringify(generateVapidKeys()),
  };
  ctx.children = [startReactorChild(db.url, env), startReactorChild(db.url, env)];
  const holder = await until(
    'one process holding the sender',
    async () => ctx.children.find(holdsReactor),
    120_000,
    50,
  );
  const survivor = ctx.children.find((c) => c !== holder)!;
  assert.not.ok(holdsReactor(survivor), 'one active instance');

  /** Each reminder's event id by the Topic its pushes carry. */
  const eventOfTopic = new Map<string, string>();
  const appendWave = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const { event, data } = reminder(subscribers.map((s) => s.user_id));
      eventOfTopic.set(pushTopic(`reminder:${data.reminder_id}`), event.id);
      await store.append(`chat.meeting_reminder-${data.meeting_id}-${data.occurrence_id}-10`, [event], {
        expected: 'no_stream',
      });
    }
  };
  for (let wave = 0; wave < 3; wave++) await appendWave(10);
  await killMidBatch(db.pool, holder, () => appendWave(10));
  const pushedByTheKilled = push.received.length;
  for (let wave = 0; wave < 3; wave++) await appendWave(10);

  await until('the survivor holding the sender', async () => holdsReactor(survivor), 60_000, 50);
  const expected = eventOfTopic.size * subscribers.length;
  await until(
    () => `every reminder pushed (${push.received.length} of ${expected})`,
    async () => push.received.length >= expected,
    120_000,
    100,
  );
  // Whatever the survivor was still to hand over would show now: let it reach the last event.
  await until(
    'the survivor at the last event',
    async () => {
      const last = (await db.pool.query(`SELECT max(position)::text AS p FROM events`)).rows[0].p;
      const at = (
        await db.pool.query(
          `SELECT prepare_pos::text AS p FROM chat_reactor_checkpoints WHERE name = 'web_push_sender'`,
        )
      ).rows[0]?.p;
      return at !== undefined && BigInt(at) >= BigInt(last);
    },
    60_000,
    100,
  );

  // Effects per event id: one push per reminder to each browser, none missing, none twice.
  for (const s of subscribers) {
    const perEvent = new Map<string, number>();
    for (const pushed of push.to(s.path)) {
      const eventId = eventOfTopic.get(String(pushed.headers.topic));
      assert.ok(eventId, `a push with a known Topic to ${s.path}`);
      perEvent.set(eventId!, (perEvent.get(eventId!) ?? 0) + 1);
    }
    assert.equal([...perEvent.keys()].sort(), [...eventOfTopic.values()].sort(), `every reminder pushed to ${s.path}`);
    assert.ok(
      [...perEvent.values()].every((n) => n === 1),
      `each reminder pushed once to ${s.path}: ${JSON.stringify([...perEvent.values()].filter((n) => n !== 1))}`,
    );
    // The browser opens what it was sent.
    assert.is(JSON.parse(decrypt(push.to(s.path)[0]!, s.browser)).type, 'meeting_reminder');
  }
  assert.ok(pushedByTheKilled > 0 && pushedByTheKilled < expected, 'both processes pushed');

  // Hand-over: the survivor resumed from the checkpoint.
  await assertResumedFromCheckpoint(db.pool, holder, survivor, eventOfTopic.size);
});

test.run();
