// The log's figures with the log on the in-process EventStoreDB TEST DOUBLE
// (tests/doubles/esdb-test-server.ts) through our adapter: `append_1event_8writers` and
// `projection_catchup_100k`, suffixed `_esdb_double`. The double keeps its log in memory and runs
// in this process, so these figures say nothing about EventStoreDB's speed; they exist to catch
// regressions in our EventStoreDB path (the adapter, the client's BatchAppend, the engine's
// subscription feed), run after run on the same machine.

import { EventStoreDbEventStore } from '../infra/eventstore/eventstoredb.ts';
import type { Pool } from '../infra/db/pool.ts';
import { startEsdbTestServer } from '../tests/doubles/esdb-test-server.ts';
import type { Figure } from './figure.ts';
import { appendOperations } from './log.ts';
import { throughput } from './measure.ts';
import { catchUp, projectedRows, resetProjection, seed } from './projection.ts';

export const ESDB_DOUBLE_NOTE =
  'EventStoreDB test double (in-memory, in this process): for regressions of our EventStoreDB path only, not a performance claim';

const round = (value: number) => Number(value.toFixed(0));

/**
 * `pool`: a migrated database with the bench projection tables (read models stay on PostgreSQL,
 * as in production). `seedEvents` as for the PostgreSQL figure.
 */
export async function esdbDoubleFigures(
  pool: Pool,
  options: { progress: (m: string) => void; timing: { warmupMs: number; measureMs: number }; seedEvents: number },
): Promise<Figure[]> {
  const { progress, timing, seedEvents } = options;
  const figures: Figure[] = [];
  const double = await startEsdbTestServer();
  const store = new EventStoreDbEventStore(double.url);
  try {
    const name = 'append_1event_8writers_esdb_double';
    progress(`${name} (${timing.measureMs / 1000}s)`);
    const t = await throughput(appendOperations(store, 8, 1), timing);
    progress(`${name}: ${round(t.perSecond)}/s, ${t.operations} ops, mean latency ${t.meanLatencyMs.toFixed(3)} ms`);
    figures.push({ name, value: round(t.perSecond), unit: 'events/s', note: ESDB_DOUBLE_NOTE });

    const catchup = 'projection_catchup_100k_esdb_double';
    progress(`seeding ${seedEvents} events into the double`);
    const began = Date.now();
    const last = await seed(store, seedEvents, 500, 4);
    progress(`seeded in ${((Date.now() - began) / 1000).toFixed(1)}s; ${catchup}`);
    const projection = projectedRows(true);
    await resetProjection(pool, projection);
    const result = await catchUp(store, pool, projection, last, seedEvents);
    progress(`${catchup}: ${round(result.perSecond)}/s over ${result.seconds.toFixed(2)}s`);
    figures.push({ name: catchup, value: round(result.perSecond), unit: 'events/s', note: ESDB_DOUBLE_NOTE });
  } finally {
    await store.close();
    await double.stop();
  }
  return figures;
}
