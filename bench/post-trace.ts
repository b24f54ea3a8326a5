// Where the time of one chat message post goes: `node --import tsx bench/post-trace.ts`.
//
// Sets up what the spaces bench's message_post figure posts into (a community, a group, a
// channel, 8 members), then posts TRACE_POSTS messages from 1 poster in sequence and TRACE_POSTS
// from 8 posters at once, and breaks each POST /api/channels/{id}/messages down into:
//
// - every SQL query the request awaits, named by what it reads (pool wait included, and also
//   reported alone as pool_wait), the log stream read, the fold + decide (the gap between the
//   stream read and the append), the append, the read-your-writes wait, the read-back;
// - the wait, per projection handling MessagePosted: append done -> its subscription's read
//   that delivered the event starts / ends -> the batch starts -> commits -> the wait resolves;
// - the rest: server time outside those phases (Hono, zod, JSON, the event loop) and the client
//   side (fetch, HTTP on loopback).
//
// Measurement only: prototypes of pg.Pool, PostgresEventStore and ProcessorEngine are wrapped in
// this process, and AsyncLocalStorage ties each query to the request (or projection batch) that
// issued it. No product code changes. JSON lines on stdout (p50/p99/mean per phase, for 1 and 8
// posters; projection batch statistics), progress on stderr. DATABASE_URL as for every bench
// (else an embedded server); TRACE_POSTS (default 400) posts per scenario.

import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../infra/config.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { comparePositions, type Position } from '../infra/eventstore/position.ts';
import { createLogger } from '../infra/logging.ts';
import { ProcessorEngine } from '../infra/processors/engine.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { channelWithMembers, chatCaller } from './chat-channel.ts';
import { percentile } from './http.ts';
import { BENCH_POOL_ENV } from './pools.ts';
import { benchServer, withBenchDatabase } from './server.ts';

const POSTS = Number(process.env.TRACE_POSTS ?? 400);
/** TRACE_OFF=1: no wrappers at all, the same posts timed from the client only (what the tracing itself costs). */
const TRACE = process.env.TRACE_OFF !== '1';
const progress = (message: string) => process.stderr.write(`post-trace: ${message}\n`);
const now = () => performance.now();

// --- what the wrappers record ---------------------------------------------------------------

interface Span {
  name: string;
  start: number;
  end: number;
  wait?: number;
}
interface RequestTrace {
  kind: 'request';
  id: string | null;
  start: number;
  end: number;
  spans: Span[];
  appended: Position[];
  appendEnd: number;
  waitEnd: number;
  background: string[];
}
interface BatchTrace {
  kind: 'batch';
  projection: string;
  size: number;
  first: Position;
  last: Position;
  start: number;
  end: number;
  spans: Span[];
}
interface ConsumerTrace {
  kind: 'consumer';
  processor: string;
}
type Trace = RequestTrace | BatchTrace | ConsumerTrace;
interface Read {
  processor: string;
  start: number;
  end: number;
  positions: Position[];
  empty: boolean;
}

const als = new AsyncLocalStorage<Trace>();
const reads: Read[] = [];
const heldBacks: { processor: string; start: number; end: number }[] = [];
const batches: BatchTrace[] = [];
const checkpoints = new Map<string, { t: number; at: Position }[]>();
const otherReads = new Map<string, number>();
let statements = 0;
let tracing = false;
const traces = new Map<string, RequestTrace>();

/** A request's query, named by what it reads or writes. */
function queryName(text: string): string {
  const sql = text.replace(/\s+/g, ' ').trim();
  if (sql.includes('INSERT INTO events')) return 'append';
  if (/FROM events WHERE stream_id = \$1 ORDER BY events.revision/.test(sql)) return 'stream_read';
  if (sql.includes('pg_notify')) return 'notify(not awaited)';
  if (sql.includes('FROM chat_channels ch LEFT JOIN chat_channel_members')) return 'q_channel_standing';
  if (/FROM chat_messages m WHERE m.id = \$1 AND m.channel_id = \$2/.test(sql)) return 'q_read_back_message';
  if (sql.includes('FROM projection_checkpoints')) return 'q_checkpoint';
  if (sql.includes('chat_sessions')) return 'q_session_principal';
  const from = /FROM ([a-z_]+)/i.exec(sql);
  return `q_other:${from ? from[1] : sql.slice(0, 40)}`;
}
function batchQueryName(text: string): string {
  const sql = text.replace(/\s+/g, ' ').trim();
  if (sql.startsWith('BEGIN')) return 'begin+checkpoint';
  if (sql.startsWith('COMMIT')) return 'commit';
  const into = /INSERT INTO ([a-z_]+)/i.exec(sql);
  return into ? `insert ${into[1]}` : sql.slice(0, 30);
}
const textOf = (args: unknown[]) =>
  typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string })?.text ?? '');

// --- the wrappers (this process only) ---------------------------------------------------------
if (TRACE) {
  // Every statement any connection of this process sends while tracing (requests, processors, locks).
  const clientProto = pg.Client.prototype as any;
  const origClientQuery = clientProto.query;
  clientProto.query = function query(this: unknown, ...args: unknown[]) {
    if (tracing) statements += 1;
    return origClientQuery.apply(this, args);
  };

  const proto = pg.Pool.prototype as any;
  const origConnect = proto.connect;
  const origQuery = proto.query;
  // Pool.query as pg-pool does it (connect, query, release), timed in two parts: waiting for a connection and executing.
  proto.query = function query(this: pg.Pool, ...args: unknown[]) {
    const trace = als.getStore();
    if (trace?.kind !== 'request' || typeof args.at(-1) === 'function') return origQuery.apply(this, args);
    const start = now();
    return (async () => {
      const client: pg.PoolClient = await origConnect.call(this);
      const acquired = now();
      try {
        const result = await (client.query as any)(...args);
        client.release();
        return result;
      } catch (error) {
        client.release(error as Error);
        throw error;
      } finally {
        trace.spans.push({ name: queryName(textOf(args)), start, end: now(), wait: acquired - start });
      }
    })();
  };
  // Pool.connect inside a projection batch: the wait, and each statement on the checked-out client.
  proto.connect = function connect(this: pg.Pool, ...args: unknown[]) {
    const trace = als.getStore();
    if (trace?.kind !== 'batch' || args.length) return origConnect.apply(this, args);
    const start = now();
    return (origConnect.call(this) as Promise<pg.PoolClient>).then((client) => {
      trace.spans.push({ name: 'pool_wait', start, end: now() });
      const q = client.query;
      const release = client.release;
      (client as any).query = (...qa: unknown[]) => {
        const t = now();
        const result = (q as any).apply(client, qa) as Promise<unknown>;
        result.then(
          () => trace.spans.push({ name: batchQueryName(textOf(qa)), start: t, end: now() }),
          () => {},
        );
        return result;
      };
      (client as any).release = (...ra: unknown[]) => {
        (client as any).query = q;
        (client as any).release = release;
        return (release as any).apply(client, ra);
      };
      return client;
    });
  };

  const store = PostgresEventStore.prototype as any;
  const origAppend = store.append;
  store.append = async function append(this: unknown, ...args: unknown[]) {
    const result = await origAppend.apply(this, args);
    const trace = als.getStore();
    if (trace?.kind === 'request') {
      trace.appended.push(result.position);
      trace.appendEnd = now();
    }
    return result;
  };
  const origReadPage = store.readPage;
  store.readPage = async function readPage(this: unknown, ...args: unknown[]) {
    const trace = als.getStore();
    const start = now();
    const result = await origReadPage.apply(this, args);
    if (tracing) {
      if (trace?.kind === 'consumer' && watched.has(trace.processor)) {
        reads.push({
          processor: trace.processor,
          start,
          end: now(),
          positions: result.events.map((e: { position: Position }) => e.position),
          empty: result.events.length === 0,
        });
      } else {
        const who = trace?.kind === 'consumer' ? trace.processor : (trace?.kind ?? 'none');
        otherReads.set(who, (otherReads.get(who) ?? 0) + 1);
      }
    }
    return result;
  };
  const origHeldBack = store.heldBack;
  store.heldBack = async function heldBack(this: unknown, ...args: unknown[]) {
    const trace = als.getStore();
    const start = now();
    const result = await origHeldBack.apply(this, args);
    if (tracing && trace?.kind === 'consumer') heldBacks.push({ processor: trace.processor, start, end: now() });
    return result;
  };

  const engineProto = ProcessorEngine.prototype as any;
  const origConsume = engineProto.consume;
  engineProto.consume = function consume(this: unknown, processor: { name: string }, done: unknown) {
    return als.run({ kind: 'consumer', processor: processor.name }, () => origConsume.call(this, processor, done));
  };
  const origApplyBatch = engineProto.applyBatch;
  engineProto.applyBatch = async function applyBatch(
    this: unknown,
    projection: { name: string },
    batch: { position: Position }[],
    previous: unknown,
  ) {
    const trace: BatchTrace = {
      kind: 'batch',
      projection: projection.name,
      size: batch.length,
      first: batch[0]!.position,
      last: batch.at(-1)!.position,
      start: now(),
      end: 0,
      spans: [],
    };
    try {
      return await als.run(trace, () => origApplyBatch.call(this, projection, batch, previous));
    } finally {
      trace.end = now();
      if (tracing && watched.has(projection.name)) batches.push(trace);
    }
  };
  const origWait = engineProto.waitForEvents;
  engineProto.waitForEvents = async function waitForEvents(this: unknown, ...args: unknown[]) {
    const trace = als.getStore();
    const start = now();
    try {
      return await origWait.apply(this, args);
    } finally {
      if (trace?.kind === 'request') {
        trace.spans.push({ name: 'wait_projections', start, end: now() });
        trace.waitEnd = now();
      }
    }
  };

  // Each request runs in its own trace, from the server's 'request' event to the response's end.
  const origEmit = http.Server.prototype.emit as (this: http.Server, ...a: unknown[]) => boolean;
  http.Server.prototype.emit = function emit(this: http.Server, event: string, ...args: any[]) {
    if (event !== 'request') return origEmit.apply(this, [event, ...args]);
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    const id = (req.headers['x-trace-id'] as string | undefined) ?? null;
    const trace: RequestTrace = {
      kind: 'request',
      id,
      start: now(),
      end: 0,
      spans: [],
      appended: [],
      appendEnd: 0,
      waitEnd: 0,
      background: [],
    };
    res.once('finish', () => {
      trace.end = now();
    });
    if (id) traces.set(id, trace);
    return als.run(trace, () => origEmit.apply(this, [event, ...args]));
  } as typeof http.Server.prototype.emit;

  // hono/jwt's HS256: the key import and the signature check, on WebCrypto (asynchronous).
  const subtle = globalThis.crypto.subtle as any;
  for (const method of ['importKey', 'verify'] as const) {
    const orig = subtle[method];
    subtle[method] = async function timed(this: unknown, ...args: unknown[]) {
      const trace = als.getStore();
      const start = now();
      try {
        return await orig.apply(this, args);
      } finally {
        if (trace?.kind === 'request') trace.spans.push({ name: 'auth_jwt_crypto', start, end: now() });
      }
    };
  }
}

/** Processors whose reads and batches are followed: those handling MessagePosted (set once the platform is open). */
const watched = new Set<string>();

// --- the run ----------------------------------------------------------------------------------

interface PostSample {
  client: number;
  phases: Map<string, number>;
}

function breakdown(trace: RequestTrace, clientMs: number, handling: string[]): Map<string, number> {
  const phases = new Map<string, number>();
  const add = (name: string, ms: number) => phases.set(name, (phases.get(name) ?? 0) + ms);
  let awaited = 0;
  let poolWait = 0;
  const sorted = [...trace.spans].sort((a, b) => a.start - b.start);
  const streamRead = sorted.find((s) => s.name === 'stream_read');
  const append = sorted.find((s) => s.name === 'append');
  for (const span of sorted) {
    if (span.name.startsWith('notify')) {
      add('x_notify_not_awaited', span.end - span.start);
      continue;
    }
    add(span.name, span.end - span.start);
    awaited += span.end - span.start;
    poolWait += span.wait ?? 0;
  }
  if (streamRead && append) {
    add('fold_decide', append.start - streamRead.end);
    awaited += append.start - streamRead.end;
  }
  add('x_pool_wait_in_queries', poolWait);
  const server = trace.end - trace.start;
  add('rest_server', server - awaited);
  const timed = sorted.filter((s) => !s.name.startsWith('notify'));
  if (timed.length) {
    add('rest_server.a_before_first_query', timed[0]!.start - trace.start);
    add('rest_server.c_after_last_phase', trace.end - Math.max(...timed.map((s) => s.end)));
  }
  add('rest_client_http', clientMs - server);
  add('total', clientMs);
  // The wait, per projection handling MessagePosted: where its event was in the pipeline.
  const position = trace.appended.at(-1);
  if (position) {
    for (const name of handling) {
      const delivered = reads.find(
        (r) => r.processor === name && r.positions.some((p) => comparePositions(p, position) === 0),
      );
      const batch = batches.find(
        (b) =>
          b.projection === name && comparePositions(b.first, position) <= 0 && comparePositions(b.last, position) >= 0,
      );
      const cp = (checkpoints.get(name) ?? []).find((c) => comparePositions(c.at, position) >= 0);
      if (!delivered || !batch) continue;
      const emptyReads = reads.filter(
        (r) => r.processor === name && r.empty && r.start >= trace.appendEnd - 1 && r.end <= delivered.start,
      ).length;
      const held = heldBacks.filter(
        (h) => h.processor === name && h.start >= trace.appendEnd && h.end <= delivered.start,
      ).length;
      add(`w.${name}.1_append_to_read_start`, delivered.start - trace.appendEnd);
      add(`w.${name}.2_read`, delivered.end - delivered.start);
      add(`w.${name}.3_read_to_batch`, batch.start - delivered.end);
      add(`w.${name}.4_batch_apply_commit`, batch.end - batch.start);
      add(`w.${name}.5_commit_to_wait_end`, trace.waitEnd - batch.end);
      if (cp) add(`w.${name}.checkpoint_after_append`, cp.t - trace.appendEnd);
      add(`w.${name}.n_empty_reads_before`, emptyReads);
      add(`w.${name}.n_heldback_checks_before`, held);
      add(`w.${name}.batch_size`, batch.size);
    }
  }
  return phases;
}

const r2 = (v: number) => Number(v.toFixed(2));

function report(label: string, samples: PostSample[], extra: Record<string, unknown>) {
  const names = [...new Set(samples.flatMap((s) => [...s.phases.keys()]))].sort();
  for (const name of names) {
    const values = samples.map((s) => s.phases.get(name) ?? 0);
    const present = samples.filter((s) => s.phases.has(name)).length;
    process.stdout.write(
      JSON.stringify({
        scenario: label,
        phase: name,
        p50: r2(percentile(values, 50)),
        p99: r2(percentile(values, 99)),
        mean: r2(values.reduce((a, b) => a + b, 0) / values.length),
        n: present,
      }) + '\n',
    );
  }
  process.stdout.write(JSON.stringify({ scenario: label, ...extra }) + '\n');
}

function batchReport(label: string, all: BatchTrace[]) {
  const stats = (v: number[]) => ({
    p50: r2(percentile(v, 50)),
    p99: r2(percentile(v, 99)),
    mean: r2(v.reduce((a, b) => a + b, 0) / Math.max(1, v.length)),
  });
  for (const projection of new Set(all.map((b) => b.projection))) {
    const list = all.filter((b) => b.projection === projection);
    const per = (name: string) =>
      list.map((b) => b.spans.filter((s) => s.name === name).reduce((a, s) => a + s.end - s.start, 0));
    const names = [...new Set(list.flatMap((b) => b.spans.map((s) => s.name)))];
    const sizes = list.map((b) => b.size);
    process.stdout.write(
      JSON.stringify({
        scenario: label,
        projection,
        batches: list.length,
        events: sizes.reduce((a, b) => a + b, 0),
        batch_size: stats(sizes),
        batch_ms: stats(list.map((b) => b.end - b.start)),
        per_event_ms: stats(list.map((b) => (b.end - b.start) / b.size)),
        statements_ms_per_batch: Object.fromEntries(names.map((n) => [n, stats(per(n))])),
      }) + '\n',
    );
  }
}

const server = await benchServer(progress);
try {
  await withBenchDatabase(server.url, 'bench_post_trace', async (databaseUrl) => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-post-trace-'));
    const config = loadConfig({
      ...BENCH_POOL_ENV,
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      ORCH_SECRET_KEY: 'c4'.repeat(32),
      CHATSVC_LISTEN: '127.0.0.1:0',
      LOG_LEVEL: 'error',
      CHATSVC_AUTH_RATE_PER_MIN: '100000000',
      CHATSVC_API_RATE_PER_SEC: '100000000',
    });
    const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
    const [chat] = await startServices(platform, ['chat']);
    const handling = platform.engine.projections
      .filter((p) => (p.handles as readonly string[]).includes('MessagePosted'))
      .map((p) => p.name);
    const reactors = platform.engine.reactors
      .filter((r) => (r.handles as readonly string[]).includes('MessagePosted'))
      .map((r) => r.name);
    for (const name of [...handling, ...reactors]) watched.add(name);
    progress(
      `projections handling MessagePosted: ${handling.join(', ')}; reactors: ${reactors.join(', ')}; pool ${config.databasePoolSize}`,
    );
    (platform.engine as any).progress.on('checkpoint', (name: string) => {
      if (!tracing || !watched.has(name)) return;
      const at = platform.engine.position(name);
      if (at) checkpoints.set(name, [...(checkpoints.get(name) ?? []), { t: now(), at }]);
    });
    const base = chat!.url;
    let seq = 0;
    const caller = chatCaller(base);
    const call = (method: string, route: string, token: string | null, body?: unknown, traceId?: string) =>
      caller(method, route, token, body, traceId ? { 'x-trace-id': traceId } : {});
    try {
      progress('a community, a group, a channel and 8 members');
      const { channelId: chid, members } = await channelWithMembers(caller, 8);
      const ciphertext = 'x'.repeat(200);
      const post = (token: string) => call('POST', `/api/channels/${chid}/messages`, token, { ciphertext });
      const scenario = async (label: string, posters: number) => {
        progress(`${label}: warm-up`);
        await Promise.all(
          members.slice(0, posters).map(async (m) => {
            for (let i = 0; i < 40 / posters + 5; i++) await post(m.token);
          }),
        );
        reads.length = 0;
        heldBacks.length = 0;
        batches.length = 0;
        checkpoints.clear();
        traces.clear();
        otherReads.clear();
        statements = 0;
        tracing = true;
        const loop = monitorEventLoopDelay({ resolution: 1 });
        loop.enable();
        progress(`${label}: ${POSTS} posts`);
        const samples: { id: string; client: number }[] = [];
        const started = now();
        await Promise.all(
          members.slice(0, posters).map(async (m) => {
            for (let i = 0; i < POSTS / posters; i++) {
              const id = `p${++seq}`;
              const t = now();
              await call('POST', `/api/channels/${chid}/messages`, m.token, { ciphertext }, id);
              samples.push({ id, client: now() - t });
            }
          }),
        );
        const seconds = (now() - started) / 1000;
        loop.disable();
        await new Promise((r) => setTimeout(r, 200));
        tracing = false;
        const results: PostSample[] = samples.map(({ id, client }) => ({
          client,
          phases: TRACE ? breakdown(traces.get(id)!, client, handling) : new Map([['total', client]]),
        }));
        report(label, results, {
          posts: samples.length,
          seconds: r2(seconds),
          posts_per_second: r2(samples.length / seconds),
          statements_per_post_all_connections: r2(statements / samples.length),
          log_reads_per_post: {
            other_processors: Object.fromEntries([...otherReads].map(([k, v]) => [k, r2(v / samples.length)])),
            ...Object.fromEntries(
              [...watched].map((name) => [
                name,
                {
                  reads: r2(reads.filter((r) => r.processor === name).length / samples.length),
                  empty: r2(reads.filter((r) => r.processor === name && r.empty).length / samples.length),
                  held_back_checks: r2(heldBacks.filter((h) => h.processor === name).length / samples.length),
                  read_ms_p50: r2(
                    percentile(
                      reads.filter((r) => r.processor === name).map((r) => r.end - r.start),
                      50,
                    ),
                  ),
                },
              ]),
            ),
          },
          event_loop_delay_ms: {
            p50: r2(loop.percentile(50) / 1e6),
            p99: r2(loop.percentile(99) / 1e6),
            max: r2(loop.max / 1e6),
          },
        });
        batchReport(label, batches);
      };
      await scenario('1_poster', 1);
      await scenario('8_posters', 8);
    } finally {
      await chat!.close();
      await platform.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
} finally {
  await server.stop();
}
