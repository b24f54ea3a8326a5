// `npm run bench`: the log's write and projection figures, one JSON object per line on stdout
// ({"name","value","unit","baseline"?,"ratio"?,"note"?}); progress goes to stderr so stdout stays
// machine-readable. Every figure is measured in this one run against the same PostgreSQL, so
// the ratios compare like with like.
//
// PostgreSQL: DATABASE_URL when set (a fresh database is created there and dropped at the
// end), else an embedded server in a temporary directory, deleted at the end.
// BENCH_SECONDS (default 4) sets each throughput figure's measured time; the warm-up is a
// quarter of it. The whole run takes about 15 minutes on a 2-core machine, most of it building
// the registry's and the estate's large data sets; `bench/<area>-run.ts` runs one area alone,
// BENCH_AREAS=<word>,... the areas whose name holds one of the words.
// The server may be shared: every pool the bench opens is bounded (bench/pools.ts). An area that
// fails is named with its error and the others still run; the exit status is then 1.

import { randomBytes } from 'node:crypto';
import { migrate } from '../infra/db/migrate.ts';
import { createPool, withDatabase } from '../infra/db/pool.ts';
import { PostgresEventStore } from '../infra/eventstore/postgres.ts';
import { appendEvents, createBaselineTable, insertRows } from './log.ts';
import { paired, throughput, type Throughput } from './measure.ts';
import { measureHttp, percentile } from './http.ts';
import { analyzeLog, catchUp, createProjectionTables, projectedRows, seed } from './projection.ts';
import { chatFigures } from './chat.ts';
import { e2eeFigures } from './e2ee.ts';
import { esdbDoubleFigures } from './esdb-double.ts';
import { estateFigures } from './estate.ts';
import { auditFigures } from './audit.ts';
import { agentsBench } from './agents.ts';
import { spacesFigures } from './spaces.ts';
import { agentChatFigures } from './agent-chat.ts';
import { updatesFigures } from './updates.ts';
import { chatBotsFigures } from './chat-bots.ts';
import { chatFilesFigures } from './chat-files.ts';
import { scheduleFigures } from './chat-schedule.ts';
import { connectorFigures } from './connector.ts';
import { consoleFigures } from './console.ts';
import { profilesFigures } from './profiles.ts';
import { registryBench } from './registry.ts';
import { inProcessChecks, REDIS_IN_FLIGHT, redisChecks } from './ratelimit.ts';
import type { Figure } from './figure.ts';
import { benchServer, withBenchDatabase } from './server.ts';
import { areaFilter, runAreas, type Area } from './areas.ts';
import { BENCH_POOL_SIZE } from './pools.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const emit = (figure: Figure) => process.stdout.write(JSON.stringify(figure) + '\n');
const round = (value: number, digits = 0) => Number(value.toFixed(digits));

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
if (!(seconds > 0)) throw new Error(`BENCH_SECONDS must be a positive number, got ${process.env.BENCH_SECONDS}`);
const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000 };
const SEED_EVENTS = 100_000;
const LOGINS = 30; // sequential password logins (scrypt N=2^17, r=8, p=1) for the latency figures
const SLICES = 8; // alternations per paired figure

// --- setup: a server, then a fresh, migrated database on it -------------------------------
const server = await benchServer(progress);
const serverUrl = server.url;
const database = `bench_${randomBytes(4).toString('hex')}`;
const admin = createPool(serverUrl, { max: 1, application: 'orchard-bench' });
await admin.query(`CREATE DATABASE ${database}`);
const url = withDatabase(serverUrl, database);
const pool = createPool(url, { max: BENCH_POOL_SIZE, application: 'orchard-bench' });

try {
  await migrate(pool);
  await createBaselineTable(pool);
  await createProjectionTables(pool);
  const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
  progress(`database ${database} on PostgreSQL ${version}${server.embedded ? ' (embedded)' : ' (DATABASE_URL)'}`);

  // Each area runs to its end or its failure (bench/areas.ts); BENCH_AREAS=<word>,... runs only
  // the areas whose name holds one of the words.
  const areas: Area[] = [];
  const describe = (name: string, t: Throughput) =>
    progress(`${name}: ${round(t.perSecond)}/s, ${t.operations} ops, mean latency ${round(t.meanLatencyMs, 3)} ms`);

  // Each append figure is measured paired with its baseline (alternating slices, see
  // measure.ts), so the ratio does not depend on what else the machine did meanwhile.
  areas.push({
    name: 'log_append_paired',
    run: async () => {
      for (const [baseline, name, workers] of [
        ['insert_1row_1conn', 'append_1event_1writer', 1],
        ['insert_1row_8conn', 'append_1event_8writers', 8],
      ] as const) {
        progress(`${baseline} paired with ${name} (${seconds}s each)`);
        const inserts = insertRows(url, workers);
        const appends = appendEvents(url, workers, 1);
        try {
          const [base, append] = await paired(inserts.operations, appends.operations, { ...timing, slices: SLICES });
          describe(baseline, base);
          describe(name, append);
          emit({ name: baseline, value: round(base.perSecond), unit: 'rows/s' });
          emit({
            name,
            value: round(append.perSecond),
            unit: 'events/s',
            baseline,
            ratio: round(append.perSecond / base.perSecond, 3),
          });
        } finally {
          await inserts.close();
          await appends.close();
        }
      }
    },
  });

  areas.push({
    name: 'log_append_100events',
    run: async () => {
      const name = 'append_100events_1writer';
      progress(`${name} (${seconds}s)`);
      const appends = appendEvents(url, 1, 100);
      try {
        const t = await throughput(appends.operations, timing);
        describe(name, t);
        emit({ name, value: round(t.perSecond), unit: 'events/s' });
      } finally {
        await appends.close();
      }
    },
  });

  areas.push({
    name: 'projection_catchup',
    run: async () => {
      const name = 'projection_catchup_100k';
      const store = new PostgresEventStore(pool, url);
      try {
        progress(`seeding ${SEED_EVENTS} events`);
        const began = Date.now();
        const last = await seed(store, SEED_EVENTS, 500, 4);
        await analyzeLog(pool);
        progress(`seeded in ${((Date.now() - began) / 1000).toFixed(1)}s; ${name}`);
        for (const [figure, batched] of [
          [name, true],
          [`${name}_per_event`, false],
        ] as const) {
          const result = await catchUp(store, pool, projectedRows(batched), last, SEED_EVENTS);
          progress(`${figure}: ${round(result.perSecond)}/s over ${result.seconds.toFixed(2)}s`);
          emit({ name: figure, value: round(result.perSecond), unit: 'events/s' });
        }
      } finally {
        await store.close();
      }
    },
  });

  areas.push({
    name: 'esdb_double',
    run: async () => {
      // The same two log figures with the log on the EventStoreDB test double (read models on
      // this database): labelled `_esdb_double` with a note, for regressions only.
      for (const figure of await esdbDoubleFigures(pool, { progress, timing, seedEvents: SEED_EVENTS })) emit(figure);
    },
  });

  areas.push({
    name: 'ratelimit',
    run: async () => {
      // The shared rate limiter: in-process, and on Redis over one connection.
      progress(`ratelimit_check_inprocess (${seconds}s)`);
      const local = await inProcessChecks(timing);
      describe('ratelimit_check_inprocess', local);
      emit({ name: 'ratelimit_check_inprocess', value: round(local.perSecond), unit: 'checks/s' });
      const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
      progress(`ratelimit_check_redis paired with redis_ping, ${REDIS_IN_FLIGHT} in flight (${seconds}s each)`);
      const redis = await redisChecks(redisUrl, { ...timing, slices: SLICES });
      if (!redis) progress(`no Redis at ${redisUrl}: ratelimit_check_redis skipped`);
      else {
        describe('redis_ping', redis.ping);
        describe('ratelimit_check_redis', redis.checks);
        emit({ name: 'redis_ping', value: round(redis.ping.perSecond), unit: 'requests/s' });
        emit({
          name: 'ratelimit_check_redis',
          value: round(redis.checks.perSecond),
          unit: 'checks/s',
          baseline: 'redis_ping',
          ratio: round(redis.checks.perSecond / redis.ping.perSecond, 3),
        });
      }
    },
  });

  areas.push({
    name: 'profiles',
    run: async () => {
      // Profiles and bot knowledge (a database of their own: 10,000 snippets on one profile).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_profiles', (db) =>
        profilesFigures(db, { progress, seconds }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'registry',
    run: async () => {
      // The registry's rollups and token requests, on a database of their own (10,000 customers).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_registry', (db) =>
        registryBench(db, timing, progress),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'chat',
    run: async () => {
      // The chat service: logins, refreshes, bundle fetches, WebSocket connections (a database of their own).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_chat', (db) => chatFigures(db, { seconds })))
        emit(figure);
    },
  });

  areas.push({
    name: 'chat_spaces',
    run: async () => {
      // Chat spaces: posting, history pages, fan-out to 500 sockets (a database of their own).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_spaces', (db) =>
        spacesFigures(db, { seconds, progress }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'chat_bots',
    run: async () => {
      // Chat bots and webhooks: bot-token requests paired with JWT ones, webhook executes across 50 webhooks.
      for (const figure of await withBenchDatabase(serverUrl, 'bench_chat_bots', (db) =>
        chatBotsFigures(db, { seconds, progress }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'chat_files',
    run: async () => {
      // Chat files: a 100 MiB upload over a real socket (MB/s, RSS growth) beside a discarding sink.
      for (const figure of await withBenchDatabase(serverUrl, 'bench_chat_files', (db) =>
        chatFilesFigures(db, { progress }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'chat_schedule',
    run: async () => {
      // The chat scheduler: two instances firing 10,000 due jobs (jobs/s, duplicates).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_schedule', (db) =>
        scheduleFigures(db, { progress }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'connector',
    run: async () => {
      // The chat-service connector: encrypted DM round trips to the bot, channel scanning.
      for (const figure of await withBenchDatabase(serverUrl, 'bench_connector', (db) =>
        connectorFigures(db, { progress }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'console',
    run: async () => {
      // The web console: first page's JS (gzip), a cold load to an interactive cockpit, a board move
      // seen in a second browser (the browser figures skipped without chromium).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_console', (db) => consoleFigures(db, progress)))
        emit(figure);
    },
  });

  areas.push({
    name: 'estate',
    run: async () => {
      // Estate knowledge: a 1,000,000-chunk corpus (its own database; ESTATE_BENCH_CHUNKS shrinks it).
      const chunks = process.env.ESTATE_BENCH_CHUNKS ? Number(process.env.ESTATE_BENCH_CHUNKS) : undefined;
      for (const figure of await withBenchDatabase(serverUrl, 'bench_estate', (db, name) =>
        estateFigures(db, name, { progress, chunks }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'agent_chat',
    run: async () => {
      // The chat pipeline: public chat turns on the local model (a database of its own).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_agent_chat', (db) =>
        agentChatFigures(db, { progress, seconds }),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'agents',
    run: async () => {
      // Projects, tasks and the cockpit (100 projects, 100,000 tasks; a database of their own).
      for (const figure of await withBenchDatabase(serverUrl, 'bench_agents', (db) =>
        agentsBench(db, timing, progress),
      ))
        emit(figure);
    },
  });

  areas.push({
    name: 'audit',
    run: async () => {
      // The tamper-evident log: appends with the chainer on and off, /ws fan-out, offline verify.
      for (const figure of await auditFigures(serverUrl, { progress, seconds })) emit(figure);
    },
  });

  areas.push({
    name: 'updates',
    run: async () => {
      // Managed updates on the process runtime (its own pg_config cluster; DATABASE_URL is not used).
      for (const figure of await updatesFigures({ progress, seconds })) emit(figure);
    },
  });

  areas.push({
    name: 'e2ee',
    run: async () => {
      // The end-to-end encryption library (CPU only), each figure paired with node's crypto.
      progress(`e2ee figures (${seconds}s each, paired with node's crypto)`);
      for (const figure of await e2eeFigures({ seconds })) emit(figure);
    },
  });

  areas.push({
    name: 'http',
    run: async () => {
      // The orchestration service under HTTP load from a separate process (50 connections).
      progress(`http: GET /api/v1/health and GET /api/v1/me, 50 connections (${seconds}s each); ${LOGINS} logins`);
      const http = await measureHttp(url, timing, LOGINS);
      emit({ name: 'http_health_50conn', value: round(http.healthPerSecond), unit: 'requests/s' });
      emit({
        name: 'http_me_50conn',
        value: round(http.mePerSecond),
        unit: 'requests/s',
        baseline: 'http_health_50conn',
        ratio: round(http.mePerSecond / http.healthPerSecond, 3),
      });
      emit({ name: 'login_p50', value: round(percentile(http.loginLatenciesMs, 50), 1), unit: 'ms' });
      emit({ name: 'login_p99', value: round(percentile(http.loginLatenciesMs, 99), 1), unit: 'ms' });
    },
  });

  const began = Date.now();
  const outcome = await runAreas(areas, progress, areaFilter(process.env.BENCH_AREAS));
  const minutes = ((Date.now() - began) / 60_000).toFixed(1);
  if (outcome.failed.length > 0) {
    progress(
      `${outcome.failed.length} of ${outcome.ran.length} areas FAILED in ${minutes} min: ${outcome.failed.map((f) => `${f.name} (${f.error})`).join('; ')}`,
    );
    process.exitCode = 1;
  } else progress(`${outcome.ran.length} areas done in ${minutes} min`);
} finally {
  // --- teardown: the database (DATABASE_URL) or the whole embedded server -----------------
  await pool.end();
  if (!server.embedded) {
    await admin
      .query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
      .catch((error: Error) => progress(`drop failed: ${error.message}`));
  }
  await admin.end();
  await server.stop();
}
