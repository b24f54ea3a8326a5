// A reactor across two processes: both run the scheduled-message poster on the processor engine;
// one holds its lock and posts. kill -9 of that one hands the reactor to the other, which resumes
// from the checkpoint: every delivery is posted exactly once (effects counted per event id), and
// the only events handed over twice are those of the batch the killed process had not yet
// checkpointed.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventToAppend } from '../../infra/eventstore/port.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/until.ts';

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../support/reactor-process.ts');

interface Child { process: ChildProcess; output: string[]; exited: Promise<void> }

function startChild(databaseUrl: string): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout!.on('data', (c) => output.push(String(c)));
  child.stderr!.on('data', (c) => output.push(String(c)));
  return { process: child, output, exited: new Promise((r) => child.once('exit', () => r())) };
}
const active = (c: Child) => c.output.join('').includes('active\n');
const kill9 = async (c: Child) => {
  if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGKILL');
  await c.exited;
};

function delivery(id: string): EventToAppend {
  const at = new Date().toISOString();
  return {
    id: randomUUID(),
    type: 'ScheduledMessageDelivered',
    data: {
      scheduled_message_id: id, channel_id: randomUUID(), sender_id: randomUUID(), at, ciphertext: `c-${id}`, send_at: at,
      thread_root_id: null, mentions: [], file_ids: [], scheduled_for: at, late: false,
    },
    metadata: { actor: { kind: 'system', id: 'scheduler' }, correlation_id: null, causation_id: null, schema: 1 },
  };
}

interface Ctx { db: TestDatabase; store: PostgresEventStore; children: Child[] }
const test = suite<Ctx>('reactor hand-over across processes');
test.before(async (ctx) => {
  ctx.db = await freshDatabase('reactor_handover');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
  await ctx.db.pool.query('CREATE TABLE reactor_attempts (event_id uuid NOT NULL, pid int NOT NULL, batch int NOT NULL)');
  ctx.children = [];
});
test.after(async ({ db, store, children }) => {
  await Promise.all(children.map(kill9));
  await store?.close();
  await db?.drop();
});

test('kill -9 of the process holding the poster: the other takes over and posts every delivery once', async (ctx) => {
  const { db, store } = ctx;
  ctx.children = [startChild(db.url), startChild(db.url)];
  const holder = await until('one process holding the reactor', async () => ctx.children.find(active), 120_000, 50);
  const survivor = ctx.children.find((c) => c !== holder)!;
  assert.not.ok(active(survivor), 'one active instance');

  const ids: string[] = [];
  const appendWave = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      ids.push(id);
      await store.append(`chat_scheduled_message-${id}`, [delivery(id)], { expected: 'any' });
    }
  };
  const attemptsBy = async (pid: number) => Number((await db.pool.query('SELECT count(*) AS n FROM reactor_attempts WHERE pid = $1', [pid])).rows[0].n);
  for (let wave = 0; wave < 3; wave++) await appendWave(10);
  await until('the holder at work', async () => (await attemptsBy(holder.process.pid!)) > 0, 60_000, 20);
  const before = await attemptsBy(holder.process.pid!);
  await appendWave(10);
  // Kill as soon as a new batch has begun: mid-batch, as each pauses 150 ms between its attempt and its effect.
  await until('a new batch begun', async () => (await attemptsBy(holder.process.pid!)) > before, 60_000, 10);
  await kill9(holder);
  for (let wave = 0; wave < 3; wave++) await appendWave(10);

  await until('the survivor holding the reactor', async () => active(survivor), 60_000, 50);
  const posted = async () => (await db.pool.query<{ stream_id: string; n: string }>(
    `SELECT stream_id, count(*) AS n FROM events WHERE type = 'MessagePosted' GROUP BY stream_id`)).rows;
  await until('every delivery posted', async () => (await posted()).length === ids.length, 120_000, 100);

  // Effects per event id: one message per delivery, none missing.
  const effects = await posted();
  assert.equal(effects.map((r) => r.stream_id).sort(), ids.map((id) => `chat_message-${id}`).sort());
  assert.ok(effects.every((r) => Number(r.n) === 1), 'each delivery posted once');

  // Hand-over: the survivor resumed from the checkpoint. Whatever it was handed again is no more
  // than the killed process's last batch, the one whose checkpoint never moved.
  const killed = holder.process.pid!;
  assert.ok(await attemptsBy(survivor.process.pid!) > 0, 'the survivor acted');
  const { rows: repeated } = await db.pool.query<{ event_id: string; n: string }>(
    'SELECT event_id, count(*) AS n FROM reactor_attempts GROUP BY event_id HAVING count(*) > 1');
  const { rows: lastBatch } = await db.pool.query<{ event_id: string }>(
    'SELECT event_id FROM reactor_attempts WHERE pid = $1 AND batch = (SELECT max(batch) FROM reactor_attempts WHERE pid = $1)', [killed]);
  const inLastBatch = new Set(lastBatch.map((r) => r.event_id));
  assert.ok(repeated.every((r) => Number(r.n) === 2 && inLastBatch.has(r.event_id)), `repeated only the killed process's last batch: ${JSON.stringify(repeated)}`);
  const everyDelivery = Number((await db.pool.query(`SELECT count(DISTINCT event_id) AS n FROM reactor_attempts`)).rows[0].n);
  assert.is(everyDelivery, ids.length, 'every delivery handed to a process');
});

test.run();
