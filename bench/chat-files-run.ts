// The chat file figures alone: `node --import tsx bench/chat-files-run.ts`, one JSON object per
// line on stdout, progress on stderr. BENCH_UPLOADS sets the number of 100 MiB uploads (default 3).

import { chatFilesFigures } from './chat-files.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_chat_files', (url) =>
    chatFilesFigures(url, {
      uploads: process.env.BENCH_UPLOADS === undefined ? undefined : Number(process.env.BENCH_UPLOADS),
      progress,
    }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
