// What `npm test` (tests/run.ts) and `npm run test:browser` (tests/browser/run.ts) share: one
// PostgreSQL server for the whole run, and each suite in its own process (tests/run-suite.ts)
// whose output is kept and printed whole when it ends.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedPostgres } from '../../infra/db/embedded.ts';

const RUN_SUITE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'run-suite.ts');

/** TEST_DATABASE_URL when set, else an embedded server in a temporary directory (removed by `stop`). */
export async function testServer(prefix: string): Promise<{ url: string; stop: () => Promise<void> }> {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL, stop: async () => {} };
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  const server = await startEmbeddedPostgres(dir, { persistent: false, durable: false });
  return {
    url: server.url,
    stop: async () => {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface SuiteOutcome {
  file: string;
  total: number;
  passed: number;
  skipped: number;
  code: number | null;
  seconds: number;
}

/** Run one suite file in its own process against `serverUrl`; print its output (under `label`) when it ends. */
export function runSuiteProcess(
  file: string,
  serverUrl: string,
  label: (outcome: SuiteOutcome) => string,
  env: Record<string, string> = {},
): Promise<SuiteOutcome> {
  const began = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', RUN_SUITE, file], {
      env: { ...process.env, ...env, ORCHARD_TEST_SERVER_URL: serverUrl, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('close', (code) => {
      const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
      const count = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(plain)?.[1] ?? 0);
      const outcome = {
        file,
        total: count('Total'),
        passed: count('Passed'),
        skipped: count('Skipped'),
        code,
        seconds: (Date.now() - began) / 1000,
      };
      process.stdout.write(`${label(outcome)}\n${plain.replace(/\n\s*Total:[\s\S]*$/, '').trimEnd()}\n\n`);
      resolve(outcome);
    });
  });
}
