// The chat figures alone: `node --import tsx bench/chat-run.ts`, one JSON object per
// line on stdout, progress on stderr. PostgreSQL: a fresh database on DATABASE_URL's server
// (dropped at the end), else an embedded server in a temporary directory. BENCH_SECONDS sets
// each throughput figure's measured time (default 4); BENCH_WS_CONNECTIONS the sockets held
// open (default 2000).

import { chatFigures } from './chat.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_chat', (url) =>
    chatFigures(url, {
      seconds: process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS),
      wsConnections:
        process.env.BENCH_WS_CONNECTIONS === undefined ? undefined : Number(process.env.BENCH_WS_CONNECTIONS),
      progress,
    }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
