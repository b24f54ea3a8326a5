// The chat bots and webhooks figures alone: `node --import tsx bench/chat-bots-run.ts`, one JSON
// object per line on stdout, progress on stderr. BENCH_SECONDS sets each throughput window
// (default 4).

import { chatBotsFigures } from './chat-bots.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_chat_bots', (url) =>
    chatBotsFigures(url, {
      seconds: process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS),
      progress,
    }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
