// Write workloads of the log: raw single-row INSERTs (the baselines: what this PostgreSQL can
// do with one autocommit statement per row) and appends through PostgresEventStore (what the
// log costs on top of that: the revision check, the extra indexes, the RETURNING, the NOTIFY).
//
// Baseline and append run the same number of concurrent callers, the same payload shape and
// the same harness, so their ratio isolates the adapter's own cost. The baseline gets exactly
// one connection per worker (that is what "1conn"/"8conn" means); the store gets the pool size
// the platform gives it (infra/platform.ts, 40), because its side-channel NOTIFY must not queue
// behind the appends on a pool of exactly `writers` connections. The NOTIFY's server work still
// counts against the append figure.

import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '../infra/db/pool.ts';
import type { EventStore, EventToAppend, ExpectedRevision } from '../infra/eventstore/port.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import type { Operation } from './measure.ts';
import { BENCH_POOL_SIZE } from './pools.ts';

/** Operations for the harness, plus what to close once they are measured. */
export interface Workload {
  operations: Operation[];
  close(): Promise<void>;
}

/** A small, typical event body (a few snake_case fields), shared by baseline and append. */
function body(n: number): Record<string, unknown> {
  return { n, title: 'benchmark event', status: 'open', note: 'x'.repeat(64) };
}

export function benchEvent(type: string, n: number): EventToAppend {
  return {
    id: randomUUID(),
    type,
    data: body(n),
    metadata: { actor: { kind: 'system', id: null }, correlation_id: null, causation_id: null, schema: 1 },
  };
}

/** The baseline's table: as plain as a table gets, one index (the primary key). */
export async function createBaselineTable(pool: Pool): Promise<void> {
  await pool.query('CREATE TABLE IF NOT EXISTS bench_rows (id bigserial PRIMARY KEY, data jsonb NOT NULL)');
}

/** `workers` workers doing one-statement, autocommit, single-row INSERTs, one connection each. */
export function insertRows(url: string, workers: number): Workload {
  const pool = createPool(url, { max: workers, application: 'orchard-bench' });
  let n = 0;
  const insert: Operation = async () => {
    await pool.query('INSERT INTO bench_rows (data) VALUES ($1)', [JSON.stringify(body(n++))]);
    return 1;
  };
  return { operations: Array.from({ length: workers }, () => insert), close: () => pool.end() };
}

/**
 * `writers` writers, each on its own stream, appending `perCall` events per call with the
 * revision the previous append returned (the command-handler pattern of DESIGN.md). Distinct
 * streams: this measures the append path, not revision conflicts.
 */
export function appendEvents(url: string, writers: number, perCall: number): Workload {
  const pool = createPool(url, { max: BENCH_POOL_SIZE, application: 'orchard-bench' });
  const store = new PostgresEventStore(pool, url);
  return {
    operations: appendOperations(store, writers, perCall),
    async close() {
      await store.close();
      await pool.end();
    },
  };
}

/** The writers of `appendEvents` on any store (the EventStoreDB double's figures use them too). */
export function appendOperations(store: EventStore, writers: number, perCall: number): Operation[] {
  const run = randomUUID().slice(0, 8);
  let n = 0;
  const operations = Array.from({ length: writers }, (_, index): Operation => {
    const stream = `bench_${perCall}x${writers}_${run}-${index}`;
    let expected: ExpectedRevision = 'no_stream';
    return async () => {
      const events = Array.from({ length: perCall }, () => benchEvent('BenchAppended', n++));
      expected = (await store.append(stream, events, { expected })).nextExpectedRevision;
      return perCall;
    };
  });
  return operations;
}
