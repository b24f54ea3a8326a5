// `npm run test:browser`: the web console in a real browser (Debian's chromium through
// playwright-core), against the real orchestration service on an ephemeral port and an embedded
// PostgreSQL (TEST_DATABASE_URL when set). Not part of `npm test`. Suites are the files
// tests/browser/*.browser.ts, run one at a time (a browser each), each in its own process.
//
// No chromium at CHROMIUM_PATH (default /usr/bin/chromium): one line and exit 0, unless
// REQUIRE_BROWSER=1 (CI), then exit 1. A missing or stale console build is rebuilt first.
// The closing line is plain, like tests/run.ts: `browser: N passed, N failed, N skipped` (one word before the colon, the form CI reads).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_DIR } from '../../api/orchestration/console/build-stamp.ts';
import { startEmbeddedPostgres } from '../../infra/db/embedded.ts';
import { currentConsoleDecision } from '../../main/console.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

if (!existsSync(chromium)) {
  const required = process.env.REQUIRE_BROWSER === '1';
  console.log(`browser tests ${required ? 'failed (REQUIRE_BROWSER=1)' : 'skipped'}: no chromium at ${chromium}; apt-get install -y chromium`);
  process.exit(required ? 1 : 0);
}

const decision = currentConsoleDecision();
if (decision.action === 'rebuild') {
  console.log(`console build ${decision.reason}: building it first`);
  const built = spawnSync(process.execPath, ['--import', 'tsx', path.join(CONSOLE_DIR, 'build.ts'), '--bundle'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(1);
} else if (decision.action !== 'serve') {
  console.log(`the console build is ${decision.reason.replace(/_/g, ' ')}: npm install, then npm run build:console`);
  process.exit(1);
}

const filters = process.argv.slice(2);
const suites = (await readdir(here)).filter((f) => f.endsWith('.browser.ts') && (filters.length === 0 || filters.some((x) => f.includes(x)))).sort();

let stop = async () => {};
let serverUrl = process.env.TEST_DATABASE_URL;
if (!serverUrl) {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-browser-'));
  const server = await startEmbeddedPostgres(dir, { persistent: false, durable: false });
  serverUrl = server.url;
  stop = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}

interface Outcome { total: number; passed: number; skipped: number; code: number | null }

function runSuite(file: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, '..', 'run-suite.ts'), path.join(here, file)], {
      env: { ...process.env, ORCHARD_TEST_SERVER_URL: serverUrl, CHROMIUM_PATH: chromium, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const count = (label: string) => Number(new RegExp(`${label}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0);
      process.stdout.write(`${file}\n${plain.replace(/\n\s*Total:[\s\S]*$/, '').trimEnd()}\n\n`);
      resolve({ total: count('Total'), passed: count('Passed'), skipped: count('Skipped'), code });
    });
  });
}

const outcomes: Outcome[] = [];
try {
  for (const file of suites) outcomes.push(await runSuite(file));
} finally {
  await stop();
}
const total = outcomes.reduce((n, o) => n + o.total, 0);
const passed = outcomes.reduce((n, o) => n + o.passed, 0);
const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
const crashed = outcomes.filter((o) => o.code !== 0 && o.total === o.passed + o.skipped).length;
const failed = total - passed - skipped + crashed;
console.log(`browser: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || total === 0 ? 1 : 0;
