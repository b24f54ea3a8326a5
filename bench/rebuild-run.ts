// How long a rebuild takes (the read models replayed from the log: `orchard rebuild --all` after a
// restore, say), per million events: the registry's read models rebuilt from its bench history
// (10,000 customers, 66,000 events of the domain's own shapes, bench/registry-seed.ts), on the
// PostgreSQL log and on the EventStoreDB test double. `node --import tsx bench/rebuild-run.ts`:
// one JSON object per line on stdout, progress on stderr. The double's figure is labelled as
// one: in memory and in this process, it is for regressions, not a claim about EventStoreDB.
// BENCH_REGISTRY_SCALE scales the history (bench/registry-seed.ts).

import { migrate } from '../infra/db/migrate.ts';
import { BENCH_POOL_SIZE } from './pools.ts';
import { createPool } from '../infra/db/pool.ts';
import { EventStoreDbEventStore } from '../infra/eventstore/eventstoredb.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { createLogger } from '../infra/logging.ts';
import { ProcessorEngine } from '../infra/processors/engine.ts';
import { registryProjections } from '../projections/registry/index.ts';
import { startEsdbTestServer } from '../tests/doubles/esdb-test-server.ts';
import { ESDB_DOUBLE_NOTE } from './esdb-double.ts';
import type { Figure } from './figure.ts';
import { appendHistory, history } from './registry-seed.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const emit = (figure: Figure) => process.stdout.write(JSON.stringify(figure) + '\n');

async function rebuildFigure(url: string, log: 'postgres' | 'esdb_double'): Promise<void> {
  const pool = createPool(url, { max: BENCH_POOL_SIZE, application: 'orchard-bench' });
  const double = log === 'esdb_double' ? await startEsdbTestServer() : null;
  const store: EventStore = double ? new EventStoreDbEventStore(double.url) : new PostgresEventStore(pool, url);
  try {
    await migrate(pool);
    const events = history(Date.now());
    progress(`${log}: seeding ${events.length} registry events`);
    await appendHistory(store, events, 8);
    const engine = new ProcessorEngine(
      store,
      pool,
      registryProjections,
      createLogger({ level: 'error', sink: (l) => process.stderr.write(`${l}\n`) }),
    );
    const began = performance.now();
    let applied = 0;
    for (const p of registryProjections) applied += await engine.rebuild(p.name);
    const seconds = (performance.now() - began) / 1000;
    progress(
      `${log}: ${registryProjections.length} registry projections rebuilt from ${events.length} events (${applied} applications) in ${seconds.toFixed(1)} s`,
    );
    const suffix = log === 'postgres' ? '' : '_esdb_double';
    emit({
      name: `rebuild_registry_s_per_million_events${suffix}`,
      value: Number(((seconds * 1_000_000) / events.length).toFixed(0)),
      unit: 's',
      ...(double ? { note: ESDB_DOUBLE_NOTE } : {}),
    });
  } finally {
    await store.close();
    await double?.stop();
    await pool.end();
  }
}

const server = await benchServer(progress);
try {
  await withBenchDatabase(server.url, 'bench_rebuild_pg', (url) => rebuildFigure(url, 'postgres'));
  await withBenchDatabase(server.url, 'bench_rebuild_esdb', (url) => rebuildFigure(url, 'esdb_double'));
} finally {
  await server.stop();
}
