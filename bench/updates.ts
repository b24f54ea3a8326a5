// Managed updates on the process runtime, measured for real: releases built from this working
// tree (1.0.0; 1.1.0 with one more migration; 1.2.0 whose extra migration fails), precompiled as
// releases are (`orchard release bundle`), signed, served
// from a loopback manifest host, and the real sidecar (`orchard serve sidecar`) running the
// services as children on a throw-away PostgreSQL cluster of the installed pg_dump's major (the
// harness of tests/e2e/updates-process.test.ts).
//
// - sidecar_signed_requests_per_s: signed `GET /v1/status` round trips (request signed, answer's
//   signature checked), several clients in closed loops.
// - Then 100,000 events are appended to the log in bulk (through the event store port, as
//   bench/projection.ts seeds), so the snapshot and the restore carry a real log.
// - update_unavailable_ms: a successful apply (1.0.0 → 1.1.0) while `/api/v1/health` is polled
//   every 50 ms; the sum of the spans it failed (non-200 or no answer), each from its first
//   failing poll to the next good one.
// - update_read_only_ms: the same apply, a write (`POST /api/v1/projects`) tried every 50 ms;
//   from the first 503 `maintenance` to the next accepted write.
// - update_rollback_ms: a failing apply (1.2.0's migration fails), from the journal: from
//   `rollback_started` to `apply_completed` (snapshot re-hashed and restored, the prior release
//   healthy again, maintenance lifted).
// Each apply's phases (the time between its journal entries) go to the progress output, and the
// swap's own: from the last pre-flight entry (the new release prepared) to the new release
// listening (`health_check_started`): drain, migrate, start.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort } from '../infra/db/embedded.ts';
import { createPool } from '../infra/db/pool.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { BIN } from '../tests/support/cli.ts';
import { buildRelease, unpackRelease, type Release } from '../tests/support/releases.ts';
import { releaseKeys, sign, signedFetch, StaticHost } from '../tests/support/updates.ts';
import { until as pollUntil } from '../tests/support/until.ts';
import type { Figure } from './figure.ts';
import { throughput } from './measure.ts';
import { analyzeLog, seed } from './projection.ts';
import { benchServer, withBenchDatabase } from './server.ts';

/** The bench polls every 100 ms (its phases are timed from these waits). */
const until = <T>(what: string, fn: () => Promise<T | null | undefined | false>, ms: number) =>
  pollUntil(what, fn, ms, 100);

const SEED_EVENTS = 100_000;
const POLL_MS = 50;
const SIGNED_CLIENTS = 8;
const ADMIN_KEY = 'orch_updates-bench-admin-key-00000000000000';
const TERMINAL = ['succeeded', 'failed', 'rolled_back', 'recovered', 'frozen'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (value: number, digits = 0) => Number(value.toFixed(digits));

export interface UpdatesOptions {
  progress?: (message: string) => void;
  seconds?: number;
  /** Events in the log before the applies (default 100,000). */
  events?: number;
}

/** The installed PostgreSQL's binaries (pg_dump must be at least the server's major). */
export function installedPgBinDir(): string | null {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** One probe every `POLL_MS` (start to start) until `stop()`; each sample is (ms, outcome). */
function poller<T>(probe: () => Promise<T>) {
  const samples: { at: number; value: T }[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const began = performance.now();
      samples.push({ at: began, value: await probe() });
      await sleep(Math.max(0, POLL_MS - (performance.now() - began)));
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** Sum of the spans where `bad` held: each from its first bad sample to the next good one. */
export function badSpanMs<T>(samples: { at: number; value: T }[], bad: (value: T) => boolean): number {
  let total = 0;
  let since: number | null = null;
  for (const s of samples) {
    if (bad(s.value)) since ??= s.at;
    else if (since !== null) {
      total += s.at - since;
      since = null;
    }
  }
  if (since !== null && samples.length) total += samples.at(-1)!.at - since;
  return total;
}

interface JournalEvent {
  type: string;
  state: string;
  at: string;
}

/** "step +ms" for each journal entry: where an apply spends its time. */
function phases(events: JournalEvent[]): string {
  return events
    .map((e, i) => `${e.type}${i ? ` +${Date.parse(e.at) - Date.parse(events[i - 1]!.at)}` : ''}`)
    .join(', ');
}

const between = (events: JournalEvent[], from: string, to: string) => {
  const a = events.find((e) => e.type === from);
  const b = events.findLast((e) => e.type === to);
  if (!a || !b) throw new Error(`the journal lacks ${a ? to : from}`);
  return Date.parse(b.at) - Date.parse(a.at);
};

export async function updatesFigures(options: UpdatesOptions = {}): Promise<Figure[]> {
  const progress = options.progress ?? (() => {});
  const seconds = options.seconds ?? 4;
  const events = options.events ?? SEED_EVENTS;
  const binDir = installedPgBinDir();
  if (!binDir) {
    progress('updates: no pg_config on PATH (the sidecar needs pg_dump and psql): skipped');
    return [];
  }
  const server = await benchServer(progress, { binDir });
  try {
    return await withBenchDatabase(server.url, 'bench_updates', (url) =>
      measure(url, binDir, { progress, seconds, events }),
    );
  } finally {
    await server.stop();
  }
}

async function measure(
  url: string,
  binDir: string,
  o: { progress: (m: string) => void; seconds: number; events: number },
): Promise<Figure[]> {
  const { progress } = o;
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-updates-'));
  const keys = await releaseKeys();
  const host = await new StaticHost().start();
  let sidecar: ChildProcess | null = null;
  const stderr: string[] = [];
  try {
    progress('updates: building releases 1.0.0, 1.1.0 (one more migration), 1.2.0 (a failing migration)');
    const probe = { '900_release_probe.sql': 'CREATE TABLE release_probe (id int PRIMARY KEY);\n' };
    const releases: Record<string, Release> = {};
    for (const [version, migrations] of [
      ['1.0.0', {}],
      ['1.1.0', probe],
      ['1.2.0', { ...probe, '901_fails.sql': 'SELECT 1 / 0;\n' }],
    ] as const) {
      releases[version] = await buildRelease(dir, version, migrations);
      host.routes.set(`/artifacts/${version}.tar.gz`, {
        status: 200,
        body: await readFile(releases[version]!.file),
        type: 'application/gzip',
      });
    }
    const releasesDir = path.join(dir, 'releases');
    await unpackRelease(releases['1.0.0']!, releasesDir);
    await symlink('1.0.0', path.join(releasesDir, 'current'));
    await writeFile(path.join(dir, 'admin.key'), ADMIN_KEY + '\n', { mode: 0o600 });
    const [orchPort, chatPort, registryPort, sidecarPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const orch = `http://127.0.0.1:${orchPort}`;
    const sidecarUrl = `http://127.0.0.1:${sidecarPort}`;
    const env = {
      DATABASE_URL: url,
      DATA_DIR: path.join(dir, 'data'),
      ORCH_SECRET_KEY: 'b2'.repeat(32),
      ADMIN_API_KEY_FILE: path.join(dir, 'admin.key'),
      ORCH_LISTEN: `127.0.0.1:${orchPort}`,
      CHATSVC_LISTEN: `127.0.0.1:${chatPort}`,
      REGISTRY_LISTEN: `127.0.0.1:${registryPort}`,
      ORCH_UPDATER_LISTEN: `127.0.0.1:${sidecarPort}`,
      ORCH_UPDATER_RUNTIME: 'process',
      ORCH_UPDATER_DATA_DIR: path.join(dir, 'updater'),
      ORCH_UPDATER_RELEASES_DIR: releasesDir,
      ORCH_UPDATER_PG_BINDIR: binDir,
      ORCH_UPDATER_API_TOKEN_FILE: keys.tokenFile,
      ORCH_UPDATER_PUBLIC_KEY_FILE: keys.publicKeyFile,
      ORCH_UPDATER_HEALTH_GRACE_SECS: '90',
      ORCH_UPDATER_DRAIN_SECS: '10',
      ORCH_UPDATER_DELIVERY_CHECK_SECS: '0',
      ORCH_UPDATES_CHECK_INTERVAL_SECS: 'off',
      LOG_LEVEL: 'warn',
    };

    progress('updates: starting the sidecar (it starts 1.0.0)');
    sidecar = spawn(process.execPath, [BIN, 'serve', 'sidecar'], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    sidecar.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
    await until('the sidecar', async () => (await fetch(`${sidecarUrl}/health`)).ok, 60_000);
    const version = async () => ((await (await fetch(`${orch}/api/v1/health`)).json()) as { version?: string }).version;
    await until('1.0.0 healthy', async () => (await version()) === '1.0.0', 90_000);

    const figures: Figure[] = [];

    // --- signed requests -------------------------------------------------------------------
    progress(`updates: sidecar_signed_requests_per_s, ${SIGNED_CLIENTS} clients (${o.seconds}s)`);
    const signed = await throughput(
      Array.from({ length: SIGNED_CLIENTS }, () => async () => {
        const r = await signedFetch(sidecarUrl, 'GET', '/v1/status');
        if (r.status !== 200 || !r.responseSigned)
          throw new Error(`signed status answered ${r.status} (signed: ${r.responseSigned})`);
        return 1;
      }),
      { warmupMs: o.seconds * 250, measureMs: o.seconds * 1000 },
    );
    progress(
      `updates: ${round(signed.perSecond)} signed requests/s, mean latency ${round(signed.meanLatencyMs, 2)} ms`,
    );
    figures.push({ name: 'sidecar_signed_requests_per_s', value: round(signed.perSecond), unit: 'requests/s' });

    // --- the log -----------------------------------------------------------------------------
    {
      progress(`updates: appending ${o.events} events in bulk`);
      const pool = createPool(url, { max: 8, application: 'orchard-bench' });
      const store = new PostgresEventStore(pool, url);
      try {
        const began = performance.now();
        await seed(store, o.events, 500, 4);
        await analyzeLog(pool);
        const total = (await pool.query<{ n: string }>('SELECT count(*) AS n FROM events')).rows[0]!.n;
        progress(
          `updates: ${total} events in the log (seeded in ${((performance.now() - began) / 1000).toFixed(1)}s); waiting for the services' audit chainer`,
        );
        // A log that large was chained long before an apply; a chainer still busy with it would
        // slow the drain and the read-only wait, and measure the seeding instead of the apply.
        await until(
          'the chain over the seeded events',
          async () =>
            (
              await pool.query<{ done: boolean }>('SELECT (SELECT count(*) FROM event_chain) >= $1::bigint AS done', [
                total,
              ])
            ).rows[0]!.done,
          600_000,
        );
        progress(`updates: chained in ${((performance.now() - began) / 1000).toFixed(1)}s since the seeding began`);
      } finally {
        await store.close();
        await pool.end();
      }
    }

    const manifest = (release: Release) =>
      sign(keys, {
        schema: 1,
        channel: 'stable',
        version: release.version,
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        image: { repository: 'registry.example/orchard', digest: `sha256:${'ab'.repeat(32)}` },
        artifact: { url: `${host.url}/artifacts/${release.version}.tar.gz`, sha256: release.sha256 },
        migrations: release.migrations,
        requirements: [],
      });
    const apply = async (release: Release) => {
      const id = randomUUID();
      const r = await signedFetch(sidecarUrl, 'POST', '/v1/apply', {
        apply_id: id,
        manifest: manifest(release),
        requested_by: 'bench',
        source: 'orch',
      });
      if (r.status !== 202) throw new Error(`apply answered ${r.status}: ${JSON.stringify(r.body)}`);
      return id;
    };
    const finished = async (id: string) => {
      const done = await until(
        `apply ${id}`,
        async () => {
          const r = await signedFetch(sidecarUrl, 'GET', `/v1/apply/${id}`);
          return TERMINAL.includes(r.body?.state) ? r.body : null;
        },
        300_000,
      );
      const journal = (await signedFetch(sidecarUrl, 'GET', `/v1/apply/${id}/events`)).body.events as JournalEvent[];
      progress(`updates: apply ${done.from_version} → ${done.to_version}: ${done.state}; ${phases(journal)}`);
      return { done, journal };
    };

    // --- a successful apply: health and writes polled every 50 ms ---------------------------
    {
      progress('updates: applying 1.1.0 (health and a write polled every 50 ms)');
      const health = poller(async () => {
        try {
          return (await fetch(`${orch}/api/v1/health`, { signal: AbortSignal.timeout(1000) })).status;
        } catch {
          return 0;
        }
      });
      let n = 0;
      const writes = poller(async () => {
        try {
          const res = await fetch(`${orch}/api/v1/projects`, {
            method: 'POST',
            headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `bench-probe-${n++}` }),
            signal: AbortSignal.timeout(1000),
          });
          const body = (await res.json().catch(() => null)) as { error?: string } | null;
          return res.status === 503 && body?.error === 'maintenance' ? 'maintenance' : String(res.status);
        } catch {
          return 'no answer';
        }
      });
      await sleep(200);
      const id = await apply(releases['1.1.0']!);
      const { done, journal } = await finished(id);
      // Until the service is back and takes writes again.
      await until(
        'a write accepted after the apply',
        async () => writes.samples.at(-1)?.value === '201' && health.samples.at(-1)?.value === 200,
        60_000,
      );
      await health.stop();
      await writes.stop();
      if (done.state !== 'succeeded')
        throw new Error(`the apply to 1.1.0 ended ${done.state}: ${JSON.stringify(done.error)}`);
      const unavailable = badSpanMs(health.samples, (status) => status !== 200);
      const firstRefusal = writes.samples.findIndex((s) => s.value === 'maintenance');
      if (firstRefusal < 0) throw new Error('no write was refused with 503 maintenance');
      const readOnly = badSpanMs(writes.samples.slice(firstRefusal), (v) => v !== '201');
      const kinds = new Map<string, number>();
      for (const s of writes.samples.slice(firstRefusal)) kinds.set(s.value, (kinds.get(s.value) ?? 0) + 1);
      progress(
        `updates: health failed for ${round(unavailable)} ms (${health.samples.filter((s) => s.value !== 200).length} of ${health.samples.length} polls); ` +
          `writes refused for ${round(readOnly)} ms (${[...kinds].map(([k, v]) => `${k}: ${v}`).join(', ')}); ` +
          `journal: maintenance_started → apply_completed ${between(journal, 'maintenance_started', 'apply_completed')} ms, ` +
          `swap (prepared → listening) ${between(journal, journal.some((e) => e.type === 'release_prepared') ? 'release_prepared' : 'digest_verified', 'health_check_started')} ms`,
      );
      figures.push({ name: 'update_unavailable_ms', value: round(unavailable), unit: 'ms' });
      figures.push({ name: 'update_read_only_ms', value: round(readOnly), unit: 'ms' });
    }

    // --- a failing apply: its rollback ---------------------------------------------------------
    {
      progress('updates: applying 1.2.0 (its migration fails: rollback)');
      const { done, journal } = await finished(await apply(releases['1.2.0']!));
      if (done.state !== 'rolled_back')
        throw new Error(`the apply to 1.2.0 ended ${done.state}: ${JSON.stringify(done.error)}`);
      const rollback = between(journal, 'rollback_started', 'apply_completed');
      progress(`updates: rollback ${rollback} ms (restore ${between(journal, 'restore_started', 'restored')} ms)`);
      figures.push({ name: 'update_rollback_ms', value: rollback, unit: 'ms' });
    }
    return figures;
  } catch (error) {
    progress(`updates: sidecar said: ${stderr.join('').slice(-2000)}`);
    throw error;
  } finally {
    if (sidecar && sidecar.exitCode === null && sidecar.signalCode === null) {
      const exited = new Promise((r) => sidecar!.once('exit', r));
      sidecar.kill('SIGTERM');
      await exited;
    }
    await stopServices(path.join(dir, 'updater', 'services.pid'));
    await host.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(keys.dir, { recursive: true, force: true });
  }
}

/** The services outlive a stopping sidecar (by design): stop them by their pid file. */
async function stopServices(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  try {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100; i++) {
      process.kill(pid, 0);
      await sleep(100);
    }
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}
