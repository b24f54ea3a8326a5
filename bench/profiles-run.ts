// The profile and knowledge figures alone: `node --import tsx bench/profiles-run.ts`, one JSON
// object per line on stdout, progress on stderr. DATABASE_URL names a server to use (a temporary
// database is created there and dropped); without it an embedded server runs in a temporary
// directory. BENCH_SECONDS (default 4) sets the measured time of the paired throughput figures.

import { profilesFigures } from './profiles.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_profiles', (url) =>
    profilesFigures(url, { progress, seconds }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
