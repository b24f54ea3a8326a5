// Projection catch-up: how fast a read model is (re)built from a log that already holds many
// events, e.g. after `rebuild` or when a new projection is deployed. The projection is
// deliberately trivial (one row per event) so the figure measures the engine's feed and
// batching, not the projection's own SQL.

import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '../infra/db/pool.ts';
import type { EventStore, RecordedEvent } from '../infra/eventstore/port.ts';
import { comparePositions, START, type Position } from '../infra/eventstore/position.ts';
import { createLogger } from '../infra/logging.ts';
import { ProcessorEngine } from '../infra/processors/engine.ts';
import type { Projection } from '../infra/processors/projection.ts';
import { benchEvent } from './log.ts';
import { timed } from './measure.ts';

const SEEDED_TYPE = 'BenchSeeded';

export async function createProjectionTables(pool: Pool): Promise<void> {
  for (const table of ['bench_projected', 'bench_projected_each']) {
    await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (
      event_id uuid PRIMARY KEY, stream_id text NOT NULL, revision bigint NOT NULL, n bigint NOT NULL)`);
  }
}

/**
 * One row per event, the shape of a list read model (tasks, messages, audit entries).
 * `batched`: the whole batch in one multi-row INSERT (`applyBatch`), as a production read model
 * that must rebuild quickly would do; otherwise one INSERT round trip per event (`apply` only).
 */
export function projectedRows(batched: boolean): Projection {
  const table = batched ? 'bench_projected' : 'bench_projected_each';
  const projection: Projection = {
    name: table,
    handles: [SEEDED_TYPE],
    tables: [table],
    async apply(event: RecordedEvent, tx: PoolClient) {
      await tx.query(
        {
          name: `${table}_insert`,
          text: `INSERT INTO ${table} (event_id, stream_id, revision, n) VALUES ($1, $2, $3, $4)`,
        },
        [event.id, event.stream, event.revision.toString(), Number(event.data.n)],
      );
    },
  };
  if (batched) {
    projection.applyBatch = async (events, tx) => {
      await tx.query(
        `INSERT INTO ${table} (event_id, stream_id, revision, n)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::bigint[])`,
        [
          events.map((e) => e.id),
          events.map((e) => e.stream),
          events.map((e) => e.revision.toString()),
          events.map((e) => Number(e.data.n)),
        ],
      );
    };
  }
  return projection;
}

/**
 * Append `total` events in calls of `perCall` events (the fast way to seed, not the figure
 * being measured), from `writers` concurrent writers on distinct streams. Returns the position
 * of the last seeded event in log order (the greatest position any append returned).
 */
export async function seed(store: EventStore, total: number, perCall: number, writers: number): Promise<Position> {
  const calls = Math.ceil(total / perCall);
  const run = randomUUID().slice(0, 8);
  let next = 0;
  let n = 0;
  let last: Position = START;
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let call = next++; call < calls; call = next++) {
        const size = Math.min(perCall, total - call * perCall);
        const events = Array.from({ length: size }, () => benchEvent(SEEDED_TYPE, n++));
        const { position } = await store.append(`bench_seed_${run}-${call}`, events, { expected: 'no_stream' });
        if (comparePositions(position, last) > 0) last = position;
      }
    }),
  );
  return last;
}

/**
 * Refresh the planner's statistics on the log. A table that just received 100k rows may not
 * have been auto-analyzed yet, and without statistics the planner can read each 500-event
 * batch with a bitmap scan plus a sort over everything after the checkpoint instead of walking
 * the (transaction_id, position) index: the figure would then measure a stats gap, not the
 * engine. Autovacuum gives a long-lived log the same statistics.
 */
export async function analyzeLog(pool: Pool): Promise<void> {
  await pool.query('ANALYZE events');
}

/** Empty a bench projection's table and forget its checkpoint, so a second catch-up (another log) starts from nothing. */
export async function resetProjection(pool: Pool, projection: Projection): Promise<void> {
  await pool.query(`TRUNCATE ${projection.tables[0]}`);
  await pool.query('DELETE FROM projection_checkpoints WHERE name = $1', [projection.name]);
}

/**
 * Start a ProcessorEngine with `projectedRows` from an empty checkpoint and time it until its
 * checkpoint reaches `target` (the last seeded event; taken from the appends rather than from
 * headPosition() so the target does not depend on the read path under test). Returns events/s
 * over `expected` events, after checking that each was applied exactly once.
 */
export async function catchUp(
  store: EventStore,
  pool: Pool,
  projection: Projection,
  target: Position,
  expected: number,
): Promise<{ perSecond: number; seconds: number }> {
  // Quiet, except that a failing batch (the engine logs and retries it) shows on stderr
  // instead of turning into an unexplained timeout.
  const log = createLogger({ level: 'error', sink: (line) => process.stderr.write(`bench: engine: ${line}\n`) });
  const engine = new ProcessorEngine(store, pool, [projection], log);
  try {
    const { seconds } = await timed(async () => {
      engine.start();
      // Generous: a slow machine should give a low figure, not an exception; a stuck engine
      // (a batch failing over and over) still ends the run.
      await engine.waitFor(target, [SEEDED_TYPE], 90_000);
    });
    const { rows } = await pool.query<{ count: string }>(`SELECT count(*)::text AS count FROM ${projection.tables[0]}`);
    const applied = Number(rows[0]?.count ?? 0);
    if (applied !== expected) throw new Error(`projection applied ${applied} events, expected ${expected}`);
    return { perSecond: expected / seconds, seconds };
  } finally {
    await engine.stop();
  }
}
