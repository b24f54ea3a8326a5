// `serve` and the web console's build: before the orchestration service listens, the build
// stamp is compared with the sources (api/orchestration/console/build-stamp.ts). A missing or
// stale build is rebuilt when Vite is installed (one log line), so `git pull && npm start`
// serves the current console; without Vite, the build is served as it is (stale: one warning)
// or `/` says how to build (missing). A failed rebuild is logged and does not stop the server.

import { spawn } from 'node:child_process';
import path from 'node:path';
import {
  builtStamp,
  CONSOLE_DIR,
  consoleBuildDecision,
  sourceStamp,
  viteInstalled,
  type ConsoleBuildDecision,
} from '../api/orchestration/console/build-stamp.ts';
import type { Logger } from '../infra/logging.ts';

export function currentConsoleDecision(): ConsoleBuildDecision {
  return consoleBuildDecision({ sources: sourceStamp(), built: builtStamp(), vite: viteInstalled() });
}

function runBuild(): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(CONSOLE_DIR, 'build.ts'), '--bundle'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ ok: false, output: error.message }));
    child.on('close', (code) => resolve({ ok: code === 0, output }));
  });
}

export async function ensureConsoleBuilt(
  log: Logger,
  decide: () => ConsoleBuildDecision = currentConsoleDecision,
): Promise<ConsoleBuildDecision> {
  const decision = decide();
  if (decision.action === 'rebuild') {
    const started = Date.now();
    const { ok, output } = await runBuild();
    if (ok) log.info('console_built', { reason: decision.reason, ms: Date.now() - started });
    else log.error('console_build_failed', { reason: decision.reason, output: output.slice(-2000) });
  } else if (decision.action === 'serve_as_is') {
    log.warn('console_stale', {
      message:
        'the console sources changed since its build and Vite is not installed: run npm install (or npm run build:console)',
    });
  } else if (decision.action === 'how_to_build') {
    log.warn('console_not_built', {
      message: 'the web console is not built and Vite is not installed: / says how to build it',
    });
  }
  return decision;
}
