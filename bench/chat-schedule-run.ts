// The chat scheduler figure alone: `node --import tsx bench/chat-schedule-run.ts`, one JSON
// object per line on stdout, progress on stderr. BENCH_SCHEDULER_JOBS sets the jobs (default 10,000).

import { scheduleFigures } from './chat-schedule.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_schedule', (url) =>
    scheduleFigures(url, {
      jobs: process.env.BENCH_SCHEDULER_JOBS === undefined ? undefined : Number(process.env.BENCH_SCHEDULER_JOBS),
      progress,
    }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
