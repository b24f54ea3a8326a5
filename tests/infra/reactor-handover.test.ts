// A reactor across two processes: both run the scheduled-message poster on the processor engine;
// one holds its lock and posts. kill -9 of that one hands the reactor to the other, which resumes
// from the checkpoint: every delivery is posted exactly once (effects counted per event id), and
// the only events handed over twice are those of the batch the killed process had not yet
// checkpointed.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventToAppend } from '../../infra/eventstore/port.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
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
import { messageStream, scheduledStream } from '../../domain/chat/streams.ts';

function delivery(id: string): EventToAppend {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    type: 'ScheduledMessageDelivered',
    data: {
      scheduled_message_id: id,
      channel_id: randomUUID(),
      sender_id: randomUUID(),
      at,
      ciphertext: `c-${id}`,
      send_at: at,
      thread_root_id: null,
      mentions: [],
      file_ids: [],
      scheduled_for: at,
      late: false,
    },
    metadata: { actor: { kind: 'system', id: 'scheduler' }, correlation_id: null, causation_id: null, schema: 1 },
  };
}

interface Ctx {
  db: TestDatabase;
  store: PostgresEventStore;
  children: ReactorChild[];
}
const test = suite<Ctx>('reactor hand-over across processes');
test.before(async (ctx) => {
  ctx.db = await freshDatabase('reactor_handover');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
  await createAttemptsTable(ctx.db.pool);
  ctx.children = [];
});
test.after(async ({ db, store, children }) => {
  await Promise.all(children.map(kill9));
  await store?.close();
  await db?.drop();
});

test('kill -9 of the process holding the poster: the other takes over and posts every delivery once', async (ctx) => {
  const { db, store } = ctx;
  ctx.children = [startReactorChild(db.url), startReactorChild(db.url)];
  const holder = await until(
    'one process holding the reactor',
    async () => ctx.children.find(holdsReactor),
    120_000,
    50,
  );
  const survivor = ctx.children.find((c) => c !== holder)!;
  assert.not.ok(holdsReactor(survivor), 'one active instance');

  const ids: string[] = [];
  const appendWave = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      ids.push(id);
      await store.append(scheduledStream(id), [delivery(id)], { expected: 'any' });
    }
  };
  for (let wave = 0; wave < 3; wave++) await appendWave(10);
  await killMidBatch(db.pool, holder, () => appendWave(10));
  for (let wave = 0; wave < 3; wave++) await appendWave(10);

  await until('the survivor holding the reactor', async () => holdsReactor(survivor), 60_000, 50);
  const posted = async () =>
    (
      await db.pool.query<{ stream_id: string; n: string }>(
        `SELECT stream_id, count(*) AS n FROM events WHERE type = 'MessagePosted' GROUP BY stream_id`,
      )
    ).rows;
  await until('every delivery posted', async () => (await posted()).length === ids.length, 120_000, 100);

  // Effects per event id: one message per delivery, none missing.
  const effects = await posted();
  assert.equal(effects.map((r) => r.stream_id).sort(), ids.map((id) => messageStream(id)).sort());
  assert.ok(
    effects.every((r) => Number(r.n) === 1),
    'each delivery posted once',
  );

  // Hand-over: the survivor resumed from the checkpoint.
  await assertResumedFromCheckpoint(db.pool, holder, survivor, ids.length);
});

test.run();
