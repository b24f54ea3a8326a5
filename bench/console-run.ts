// The web console figures alone: `node --import tsx bench/console-run.ts`, one JSON object per
// line on stdout, progress on stderr. DATABASE_URL names a server to use (a temporary database is
// created there and dropped); without it an embedded server runs in a temporary directory.
// CHROMIUM_PATH (default /usr/bin/chromium) names the browser.

import { consoleFigures } from './console.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const server = await benchServer(progress);
try {
  const figures = await withBenchDatabase(server.url, 'bench_console', (url) => consoleFigures(url, progress));
  for (const figure of figures) process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
