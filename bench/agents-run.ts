// `node --import tsx bench/agents-run.ts`: the task and cockpit figures alone, one JSON line each
// on stdout (progress on stderr). PostgreSQL: DATABASE_URL when set (a fresh database is created
// there and dropped at the end), else an embedded server in a temporary directory.
// BENCH_SECONDS (default 4) sets the throughput figure's measured time.

import { agentsBench } from './agents.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000 };
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_agents', (url) => agentsBench(url, timing, progress));
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
