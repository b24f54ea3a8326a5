// The chat-service connector figures alone: `node --import tsx bench/connector-run.ts`, one JSON
// object per line on stdout, progress on stderr. BENCH_DM_REPLIES (default 200) and
// BENCH_SCAN_MESSAGES (default 3000) size the runs.

import { connectorFigures } from './connector.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_connector', (url) =>
    connectorFigures(url, {
      dmReplies: process.env.BENCH_DM_REPLIES === undefined ? undefined : Number(process.env.BENCH_DM_REPLIES),
      scanMessages: process.env.BENCH_SCAN_MESSAGES === undefined ? undefined : Number(process.env.BENCH_SCAN_MESSAGES),
      progress,
    }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
