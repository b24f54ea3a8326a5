// The log's live and audit figures:
//
//   append_1event_8writers_unchained / _chained   events/s   8 writers appending one event per
//       call (bench/log.ts appendEvents), without and with the chainer hashing the log behind them;
//       measured in alternating slices (the chainer caught up, untimed, before each chained slice,
//       so each slice chains only its own events). ratio = chained / unchained (target >= 0.9).
//   ws_events_per_sec   events/s   log events delivered to 200 admin sockets on /ws (the sum over
//       the sockets), from the first append of 2,000 events (4 writers, 50 events an append) to the
//       last frame on the last socket; the server and the 200 clients share this process.
//   audit_verify   events/s   `orchard audit verify FILE` (verifyExportFile) over a 1,000,000-event
//       export with its 1,000 signed checkpoints (target >= 100,000). The export is written by the
//       exporter's own line and chain functions (no database: a million appends would take minutes).

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import {
  chainEntryJson,
  chainHash,
  generateSigningSeedHex,
  GENESIS_HASH,
  signCheckpoint,
  signingKeyFromSeed,
} from '../crypto/audit.ts';
import { Chainer } from '../infra/audit/chainer.ts';
import { ChainStore } from '../infra/audit/chain-store.ts';
import { eventLine, EXPORT_FORMAT, itemLine } from '../infra/audit/records.ts';
import { verifyExportFile } from '../infra/audit/verify.ts';
import { systemClock } from '../infra/clock.ts';
import { loadConfig } from '../infra/config.ts';
import { migrate } from '../infra/db/migrate.ts';
import { createPool } from '../infra/db/pool.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import type { Figure } from './figure.ts';
import { appendEvents, benchEvent } from './log.ts';
import { throughput, timed } from './measure.ts';
import { withBenchDatabase } from './server.ts';
import { BENCH_POOL_ENV, BENCH_POOL_SIZE } from './pools.ts';

const round = (value: number, digits = 0) => Number(value.toFixed(digits));
const quiet = createLogger({ level: 'error', sink: () => {} });

export interface AuditBenchOptions {
  progress: (message: string) => void;
  /** Measured seconds of each throughput side (default 4). */
  seconds?: number;
  /** Events of the export audit_verify reads (default 1,000,000). */
  exportEvents?: number;
}

export async function auditFigures(serverUrl: string, options: AuditBenchOptions): Promise<Figure[]> {
  const figures: Figure[] = [];
  figures.push(...(await withBenchDatabase(serverUrl, 'bench_audit', (url) => appendRatio(url, options))));
  figures.push(await withBenchDatabase(serverUrl, 'bench_ws', (url) => wsDelivery(url, options)));
  figures.push(await verifyFigure(options));
  return figures;
}

async function appendRatio(url: string, { progress, seconds = 4 }: AuditBenchOptions): Promise<Figure[]> {
  const pool = createPool(url, { max: BENCH_POOL_SIZE, application: 'orchard-bench' });
  await migrate(pool);
  const store = new PostgresEventStore(pool, url);
  const chain = new ChainStore(pool);
  const key = signingKeyFromSeed(generateSigningSeedHex());
  const plain = appendEvents(url, 8, 1);
  const chained = appendEvents(url, 8, 1);
  const slices = 8;
  const slice = { warmupMs: 0, measureMs: (seconds * 1000) / slices };
  const totals = { plain: 0, chained: 0 };
  try {
    progress(`append_1event_8writers unchained vs chained (${seconds}s each, ${slices} slices)`);
    await throughput(plain.operations, { warmupMs: seconds * 250, measureMs: 0 });
    await throughput(chained.operations, { warmupMs: seconds * 250, measureMs: 0 });
    for (let i = 0; i < slices; i++) {
      totals.plain += (await throughput(plain.operations, slice)).units;
      const chainer = new Chainer(store, chain, pool, key, systemClock, quiet);
      await chainer.catchUp(); // untimed: the previous slices' events
      chainer.start();
      totals.chained += (await throughput(chained.operations, slice)).units;
      await chainer.stop();
    }
  } finally {
    await plain.close();
    await chained.close();
    await store.close();
    await pool.end();
  }
  const unchained = totals.plain / seconds;
  const withChain = totals.chained / seconds;
  progress(`append_1event_8writers: ${round(unchained)}/s unchained, ${round(withChain)}/s chained`);
  return [
    { name: 'append_1event_8writers_unchained', value: round(unchained), unit: 'events/s' },
    {
      name: 'append_1event_8writers_chained',
      value: round(withChain),
      unit: 'events/s',
      baseline: 'append_1event_8writers_unchained',
      ratio: round(withChain / unchained, 3),
    },
  ];
}

const SOCKETS = 200;
const WS_EVENTS = 2000;
const ADMIN_KEY = 'orch_bench-ws-admin-key-0000000000000000';

async function wsDelivery(url: string, { progress }: AuditBenchOptions): Promise<Figure> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-ws-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
  });
  const platform = await openPlatform(config, quiet);
  const running = await startServices(platform, ['orch']);
  const base = running[0]!.url.replace(/^http/, 'ws');
  const sockets: WebSocket[] = [];
  try {
    progress(`ws_events_per_sec: ${SOCKETS} sockets, ${WS_EVENTS} events`);
    const counts = new Array<number>(SOCKETS).fill(0);
    let finished = 0;
    let allDone: () => void = () => {};
    const done = new Promise<void>((resolve) => (allDone = resolve));
    const marker = `bench_ws-${randomUUID()}`;
    await Promise.all(
      Array.from(
        { length: SOCKETS },
        (_, i) =>
          new Promise<void>((resolve, reject) => {
            const socket = new WebSocket(`${base}/ws`, { headers: { 'X-API-Key': ADMIN_KEY } });
            sockets.push(socket);
            socket.on('message', (data) => {
              const text = String(data);
              if (text.startsWith('{"control"')) return resolve();
              if (!text.includes(marker)) return;
              if (++counts[i]! === WS_EVENTS && ++finished === SOCKETS) allDone();
            });
            socket.once('error', reject);
          }),
      ),
    );
    const writers = 4;
    const { seconds } = await timed(async () => {
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          let expected: bigint | 'no_stream' = 'no_stream';
          for (let i = 0; i < WS_EVENTS / writers / 50; i++) {
            const events = Array.from({ length: 50 }, (_, n) => benchEvent('BenchDelivered', i * 50 + n));
            expected = (await platform.store.append(`${marker}-${w}`, events, { expected })).nextExpectedRevision;
          }
        }),
      );
      await done;
    });
    const perSecond = (WS_EVENTS * SOCKETS) / seconds;
    progress(
      `ws_events_per_sec: ${round(perSecond)} deliveries/s (${round(WS_EVENTS / seconds)} events/s to each of ${SOCKETS} sockets)`,
    );
    return { name: 'ws_events_per_sec', value: round(perSecond), unit: `events/s (sum over ${SOCKETS} sockets)` };
  } finally {
    for (const socket of sockets) socket.terminate();
    await Promise.all(running.map((s) => s.close()));
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function verifyFigure({ progress, exportEvents = 1_000_000 }: AuditBenchOptions): Promise<Figure> {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-audit-'));
  const file = path.join(dir, 'export.jsonl');
  try {
    progress(`audit_verify: writing a ${exportEvents}-event export`);
    const key = signingKeyFromSeed(generateSigningSeedHex());
    const out = createWriteStream(file);
    const write = async (line: string) => {
      if (!out.write(line + '\n')) await once(out, 'drain');
    };
    await write(
      itemLine({
        kind: 'header',
        format: EXPORT_FORMAT,
        after: null,
        previous_hash: GENESIS_HASH,
        stream_prefix: null,
        public_key: key.publicKeyHex,
        exported_at: new Date().toISOString(),
      }),
    );
    let previous = GENESIS_HASH;
    const actor = { kind: 'user', id: randomUUID() };
    for (let i = 1; i <= exportEvents; i++) {
      const position = `${1000 + Math.floor(i / 3)}/${i}`;
      const entry = chainEntryJson({
        stream: `bench_audit-${i % 5000}`,
        revision: String(Math.floor(i / 5000)),
        type: 'BenchAppended',
        data: { n: i, title: 'benchmark event', status: 'open', note: 'x'.repeat(64) },
        metadata: { actor, correlation_id: null, causation_id: null, schema: 1 },
        created_at: new Date(1_700_000_000_000 + i).toISOString(),
      });
      previous = chainHash(previous, entry);
      await write(eventLine(position, previous, entry));
      if (i % 1000 === 0) {
        const checkpoint = { position, hash: previous, at: new Date().toISOString() };
        await write(
          itemLine({
            kind: 'checkpoint',
            ...checkpoint,
            public_key: key.publicKeyHex,
            signature: signCheckpoint(key, checkpoint),
          }),
        );
      }
    }
    out.end();
    await once(out, 'finish');
    const size = (await stat(file)).size;
    progress(`audit_verify: verifying ${exportEvents} events (${round(size / 1e6)} MB)`);
    const { result, seconds } = await timed(() => verifyExportFile(file, key.publicKeyHex));
    if (!result.ok || result.events !== exportEvents)
      throw new Error(`audit_verify: the export did not verify: ${JSON.stringify(result)}`);
    const perSecond = exportEvents / seconds;
    progress(`audit_verify: ${round(perSecond)} events/s over ${seconds.toFixed(2)}s`);
    return { name: 'audit_verify', value: round(perSecond), unit: 'events/s' };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
