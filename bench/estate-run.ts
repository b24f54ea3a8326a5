// The estate figures alone: `node --import tsx bench/estate-run.ts`, one JSON object per line on
// stdout, progress on stderr. DATABASE_URL names a server to use (a temporary database is
// created there and dropped); without it an embedded server runs in a temporary directory.
// ESTATE_BENCH_CHUNKS (default 1,000,000) shrinks the corpus for a quick run.

import { estateFigures } from './estate.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
// A durable server (fsync, full page writes), as in production and in bench/run.ts: the ingest
// figure includes making its writes durable.
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_estate', (url, name) =>
    estateFigures(url, name, { progress }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
