// HTTP figures of the orchestration service: authenticated GET /api/v1/me against the
// unauthenticated liveness route under the same load (50 keep-alive connections from a separate
// process), and the latency of a password login with the chosen KDF parameters.

import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { BENCH_POOL_ENV } from './pools.ts';

const run = promisify(execFile);
const LOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'http-load.ts');
const ADMIN_KEY = 'orch_bench-admin-key-0000000000000000000';

export interface HttpFigures {
  healthPerSecond: number;
  mePerSecond: number;
  loginLatenciesMs: number[];
}

async function load(
  url: string,
  headers: Record<string, string>,
  timing: { warmupMs: number; measureMs: number },
): Promise<number> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', LOAD, JSON.stringify({ url, headers, connections: 50, ...timing })],
    { maxBuffer: 1 << 20 },
  );
  const result = JSON.parse(stdout) as { requests: number; failures: number; seconds: number };
  if (result.failures > 0) throw new Error(`${url}: ${result.failures} non-2xx answers under load`);
  return result.requests / result.seconds;
}

export async function measureHttp(
  databaseUrl: string,
  timing: { warmupMs: number; measureMs: number },
  logins: number,
): Promise<HttpFigures> {
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: await mkdtemp(path.join(tmpdir(), 'orchard-bench-http-')),
    ORCH_SECRET_KEY: 'b2'.repeat(32),
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  const [orch] = await startServices(platform, ['orch']);
  try {
    const base = orch!.url;
    const healthPerSecond = await load(`${base}/api/v1/health`, {}, timing);
    const mePerSecond = await load(`${base}/api/v1/me`, { 'X-API-Key': ADMIN_KEY }, timing);

    const account = { username: 'bench', email: 'bench@example.test', password: 'bench-password-0123456789' };
    const registered = await fetch(`${base}/auth/register`, {
      method: 'POST',
      headers: { 'X-API-Key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify(account),
    });
    if (registered.status !== 201) throw new Error(`register: ${registered.status}`);
    const loginLatenciesMs: number[] = [];
    for (let i = 0; i < logins; i++) {
      const started = performance.now();
      const r = await fetch(`${base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: account.email, password: account.password }),
      });
      await r.text();
      if (r.status !== 200) throw new Error(`login: ${r.status}`);
      loginLatenciesMs.push(performance.now() - started);
    }
    return { healthPerSecond, mePerSecond, loginLatenciesMs };
  } finally {
    await orch!.close();
    await platform.close();
  }
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}
