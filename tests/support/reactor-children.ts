// The parent's side of the two-process hand-over tests: start a reactor process
// (./reactor-process.ts) against a database, see whether it holds its reactor, kill it with
// SIGKILL, and read what the processes wrote down in `reactor_attempts`.

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as assert from 'uvu/assert';
import type { Pool } from '../../infra/db/pool.ts';
import { until } from './until.ts';

const CHILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'reactor-process.ts');

export interface ReactorChild {
  process: ChildProcess;
  output: string[];
  exited: Promise<void>;
}

/** A reactor process on `databaseUrl`; `env` names the reactor and its settings (REACTOR, PAUSE_MS, ...). */
export function startReactorChild(databaseUrl: string, env: Record<string, string> = {}): ReactorChild {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, ...env, DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (c) => output.push(String(c)));
  child.stderr!.on('data', (c) => output.push(String(c)));
  return { process: child, output, exited: new Promise((r) => child.once('exit', () => r())) };
}

/** Whether the process holds its reactor's lock. */
export const holdsReactor = (c: ReactorChild) => c.output.join('').includes('active\n');

export async function kill9(c: ReactorChild): Promise<void> {
  if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill('SIGKILL');
  await c.exited;
}

/**
 * Kill the holder mid-batch: once it is at work, append one more wave and kill it with SIGKILL as
 * soon as a new batch has begun (each batch pauses between its attempt and its effects, so the
 * kill lands before them).
 */
export async function killMidBatch(db: Pool, holder: ReactorChild, appendWave: () => Promise<void>): Promise<void> {
  await until('the holder at work', async () => (await attemptsBy(db, holder.process.pid!)) > 0, 60_000, 20);
  const before = await attemptsBy(db, holder.process.pid!);
  await appendWave();
  await until('a new batch begun', async () => (await attemptsBy(db, holder.process.pid!)) > before, 60_000, 10);
  await kill9(holder);
}

/** The table the processes write each batch's events to, before acting on them. */
export const createAttemptsTable = (db: Pool) =>
  db.query('CREATE TABLE reactor_attempts (event_id uuid NOT NULL, pid int NOT NULL, batch int NOT NULL)');

/** How many events the process was handed. */
export const attemptsBy = async (db: Pool, pid: number) =>
  Number((await db.query('SELECT count(*) AS n FROM reactor_attempts WHERE pid = $1', [pid])).rows[0].n);

/**
 * The hand-over's check: the survivor acted and resumed from the checkpoint, so whatever it was
 * handed again is no more than the killed process's last batch (the one whose checkpoint never
 * moved), and every one of the `expected` events was handed to a process.
 */
export async function assertResumedFromCheckpoint(
  db: Pool,
  killed: ReactorChild,
  survivor: ReactorChild,
  expected: number,
): Promise<void> {
  assert.ok((await attemptsBy(db, survivor.process.pid!)) > 0, 'the survivor acted');
  const { repeated, lastBatch, distinct } = await repeatedAttempts(db, killed.process.pid!);
  assert.ok(
    repeated.every((r) => r.n === 2 && lastBatch.has(r.event_id)),
    `repeated only the killed process's last batch: ${JSON.stringify(repeated)}`,
  );
  assert.is(distinct, expected, 'every event handed to a process');
}

/** Events handed over more than once, and the events of the killed process's last batch (the one whose checkpoint never moved). */
async function repeatedAttempts(
  db: Pool,
  killed: number,
): Promise<{ repeated: { event_id: string; n: number }[]; lastBatch: Set<string>; distinct: number }> {
  const { rows: repeated } = await db.query<{ event_id: string; n: string }>(
    'SELECT event_id, count(*) AS n FROM reactor_attempts GROUP BY event_id HAVING count(*) > 1',
  );
  const { rows: lastBatch } = await db.query<{ event_id: string }>(
    'SELECT event_id FROM reactor_attempts WHERE pid = $1 AND batch = (SELECT max(batch) FROM reactor_attempts WHERE pid = $1)',
    [killed],
  );
  const distinct = Number((await db.query('SELECT count(DISTINCT event_id) AS n FROM reactor_attempts')).rows[0].n);
  return {
    repeated: repeated.map((r) => ({ event_id: r.event_id, n: Number(r.n) })),
    lastBatch: new Set(lastBatch.map((r) => r.event_id)),
    distinct,
  };
}
