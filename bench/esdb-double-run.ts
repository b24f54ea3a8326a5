// The EventStoreDB test double's log figures alone: `node --import tsx bench/esdb-double-run.ts`,
// one JSON object per line on stdout, progress on stderr (see bench/esdb-double.ts: for
// regressions only). DATABASE_URL names a server for the read models (a temporary database is
// created there and dropped); without it an embedded server runs in a temporary directory.
// BENCH_SECONDS (default 4) sets the append figure's measured time.

import { migrate } from '../infra/db/migrate.ts';
import { BENCH_POOL_SIZE } from './pools.ts';
import { createPool } from '../infra/db/pool.ts';
import { esdbDoubleFigures } from './esdb-double.ts';
import { createProjectionTables } from './projection.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const server = await benchServer(progress);
try {
  await withBenchDatabase(server.url, 'bench_esdb_double', async (url) => {
    const pool = createPool(url, { max: BENCH_POOL_SIZE, application: 'orchard-bench' });
    try {
      await migrate(pool);
      await createProjectionTables(pool);
      const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000 };
      for (const figure of await esdbDoubleFigures(pool, { progress, timing, seedEvents: 100_000 }))
        process.stdout.write(JSON.stringify(figure) + '\n');
    } finally {
      await pool.end();
    }
  });
} finally {
  await server.stop();
}
