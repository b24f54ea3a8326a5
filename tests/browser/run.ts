// `npm run test:browser`: the web console in a real browser (Debian's chromium through
// playwright-core), against the real orchestration service on an ephemeral port and an embedded
// PostgreSQL (TEST_DATABASE_URL when set). Not part of `npm test`. Suites are the files
// tests/browser/*.browser.ts, run one at a time (a browser each), each in its own process.
//
// No chromium at CHROMIUM_PATH (default /usr/bin/chromium): one line and exit 0, unless
// REQUIRE_BROWSER=1 (CI), then exit 1. A missing or stale console build is rebuilt first.
// The closing line is plain, like tests/run.ts: `browser: N passed, N failed, N skipped` (one word before the colon, the form CI reads).

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_DIR } from '../../api/orchestration/console/build-stamp.ts';
import { currentConsoleDecision } from '../../main/console.ts';
import { runSuiteProcess, testServer, type SuiteOutcome } from '../support/suite-process.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

if (!existsSync(chromium)) {
  const required = process.env.REQUIRE_BROWSER === '1';
  console.log(
    `browser tests ${required ? 'failed (REQUIRE_BROWSER=1)' : 'skipped'}: no chromium at ${chromium}; apt-get install -y chromium`,
  );
  process.exit(required ? 1 : 0);
}

const decision = currentConsoleDecision();
if (decision.action === 'rebuild') {
  console.log(`console build ${decision.reason}: building it first`);
  const built = spawnSync(process.execPath, ['--import', 'tsx', path.join(CONSOLE_DIR, 'build.ts'), '--bundle'], {
    stdio: 'inherit',
  });
  if (built.status !== 0) process.exit(1);
} else if (decision.action !== 'serve') {
  console.log(`the console build is ${decision.reason.replace(/_/g, ' ')}: npm install, then npm run build:console`);
  process.exit(1);
}

const filters = process.argv.slice(2);
const suites = (await readdir(here))
  .filter((f) => f.endsWith('.browser.ts') && (filters.length === 0 || filters.some((x) => f.includes(x))))
  .sort();

const server = await testServer('orchard-browser-');
type Outcome = SuiteOutcome;
const runSuite = (file: string) =>
  runSuiteProcess(path.join(here, file), server.url, () => file, { CHROMIUM_PATH: chromium });

const outcomes: Outcome[] = [];
try {
  for (const file of suites) outcomes.push(await runSuite(file));
} finally {
  await server.stop();
}
const total = outcomes.reduce((n, o) => n + o.total, 0);
const passed = outcomes.reduce((n, o) => n + o.passed, 0);
const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
const crashed = outcomes.filter((o) => o.code !== 0 && o.total === o.passed + o.skipped).length;
const failed = total - passed - skipped + crashed;
console.log(`browser: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || total === 0 ? 1 : 0;
