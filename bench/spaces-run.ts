// The chat spaces figures alone: `node --import tsx bench/spaces-run.ts`, one JSON object per
// line on stdout, progress on stderr. BENCH_SECONDS sets each throughput window (default 4);
// BENCH_HISTORY_MESSAGES the history channel's size (default 1,000,000).

import { spacesFigures } from './spaces.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_spaces', (url) =>
    spacesFigures(url, {
      seconds: process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS),
      historyMessages:
        process.env.BENCH_HISTORY_MESSAGES === undefined ? undefined : Number(process.env.BENCH_HISTORY_MESSAGES),
      progress,
    }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
