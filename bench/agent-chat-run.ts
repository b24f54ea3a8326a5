// The chat pipeline figures alone: `node --import tsx bench/agent-chat-run.ts`, one JSON object
// per line on stdout, progress on stderr. DATABASE_URL names a server to use (a temporary
// database is created there and dropped); without it an embedded server runs in a temporary
// directory. BENCH_SECONDS (default 4) sets the measured time.

import { agentChatFigures } from './agent-chat.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_agent_chat', (url) =>
    agentChatFigures(url, { progress, seconds }),
  );
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
