// Registry figures, against the real service on a loopback port with a seeded history (see
// registry-seed.ts: 10,000 customers, 50,000 subscription changes over 13 months):
//   registry_summary, registry_trend_12m: p99 latency (ms) of GET /api/v1/summary and
//     GET /api/v1/summary/trend?months=12 with a machine token, one request at a time
//     (target: 20 ms each); their p50 beside them;
//   registry_token_request: requests/s of a machine-token request (GET /api/v1/auth/me: token
//     lookup, rate limiter, route) under 50 keep-alive connections from a separate process, one
//     token per connection, as a ratio to the anonymous GET /health under the same load.

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { registryProjections } from '../projections/registry/index.ts';
import { percentile } from './http.ts';
import { appendHistory, history, SEED } from './registry-seed.ts';
import type { Figure } from './figure.ts';
import { BENCH_POOL_ENV } from './pools.ts';
export type { Figure } from './figure.ts';

const run = promisify(execFile);
const LOAD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'http-load.ts');

const round = (value: number, digits = 0) => Number(value.toFixed(digits));

async function load(
  url: string,
  headerSets: Record<string, string>[],
  timing: { warmupMs: number; measureMs: number },
): Promise<number> {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', LOAD, JSON.stringify({ url, headers: {}, headerSets, connections: 50, ...timing })],
    { maxBuffer: 1 << 20 },
  );
  const result = JSON.parse(stdout) as { requests: number; failures: number; seconds: number };
  if (result.failures > 0) throw new Error(`${url}: ${result.failures} non-2xx answers under load`);
  return result.requests / result.seconds;
}

async function latencies(
  url: string,
  headers: Record<string, string>,
  warmup: number,
  count: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < warmup + count; i++) {
    const started = performance.now();
    const r = await fetch(url, { headers });
    await r.text();
    if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
    if (i >= warmup) out.push(performance.now() - started);
  }
  return out;
}

export async function registryBench(
  databaseUrl: string,
  timing: { warmupMs: number; measureMs: number },
  progress: (m: string) => void = () => {},
): Promise<Figure[]> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-registry-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c3'.repeat(32),
    REGISTRY_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32',
    // The limiter stays on the path, with room for the load (one token per connection).
    REGISTRY_TOKEN_RATE_PER_MIN: '1000000',
  });
  // Projections start once the history is in the log: the catch-up is timed on its own.
  const platform = await openPlatform(
    config,
    createLogger({ level: 'error', sink: (line) => progress(`engine: ${line}`) }),
    { runProjections: false },
  );
  const [registry] = await startServices(platform, ['registry']);
  try {
    const base = registry!.url;
    const events = history(Date.now());
    progress(
      `registry: seeding ${events.length} events (${SEED.customers} customers, ${SEED.subscriptionChanges} subscription changes, ${SEED.deployments} deployments)`,
    );
    let began = performance.now();
    const last = await appendHistory(platform.store, events, 8);
    progress(`registry: appended in ${((performance.now() - began) / 1000).toFixed(1)} s; waiting for the projections`);
    began = performance.now();
    platform.engine.start();
    // Each type's last event: every projection handling that type has applied it.
    for (const [type, position] of last) await platform.engine.waitFor(position, [type], 900_000);
    progress(
      `registry: projections (${registryProjections.map((p) => p.name).join(', ')}) caught up in ${((performance.now() - began) / 1000).toFixed(1)} s`,
    );
    // A fresh bulk load: settle autovacuum's work before timing (a long-lived registry has it done).
    await platform.pool.query('VACUUM ANALYZE');

    const identity = { 'X-Idp-Username': 'bench', 'X-Idp-Groups': 'registry-admin' };
    const me = (await (await fetch(`${base}/api/v1/auth/me`, { headers: identity })).json()) as { csrf_token: string };
    const admin = {
      ...identity,
      cookie: `registry_csrf=${me.csrf_token}`,
      'x-csrf-token': me.csrf_token,
      'content-type': 'application/json',
    };
    const tokens: Record<string, string>[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await fetch(`${base}/api/v1/admin/tokens`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: `bench-${i}`, scopes: ['customers:read', 'deployments:read'] }),
      });
      if (r.status !== 201) throw new Error(`mint token: ${r.status} ${await r.text()}`);
      tokens.push({ authorization: `Bearer ${((await r.json()) as { token: string }).token}` });
    }
    const summary = (await (await fetch(`${base}/api/v1/summary`, { headers: tokens[0]! })).json()) as {
      customers_total: number;
      mrr_cents: number;
    };
    progress(`registry: summary says ${summary.customers_total} customers, MRR ${summary.mrr_cents} cents`);

    const figures: Figure[] = [];
    for (const [name, route] of [
      ['registry_summary', '/api/v1/summary'],
      ['registry_trend_12m', '/api/v1/summary/trend?months=12'],
    ] as const) {
      const ms = await latencies(`${base}${route}`, tokens[0]!, 100, 1000);
      progress(
        `${name}: p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms over ${ms.length} requests`,
      );
      figures.push({ name, value: round(percentile(ms, 99), 2), unit: 'ms (p99)' });
      figures.push({ name: `${name}_p50`, value: round(percentile(ms, 50), 2), unit: 'ms' });
    }

    progress(`registry_token_request paired with GET /health, 50 connections (${timing.measureMs / 1000} s each)`);
    const health = await load(`${base}/health`, [{}], timing);
    const token = await load(`${base}/api/v1/auth/me`, tokens, timing);
    figures.push({ name: 'registry_health_50conn', value: round(health), unit: 'requests/s' });
    figures.push({
      name: 'registry_token_request',
      value: round(token),
      unit: 'requests/s',
      baseline: 'registry_health_50conn',
      ratio: round(token / health, 3),
    });
    return figures;
  } finally {
    await registry!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
