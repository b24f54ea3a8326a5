// Estate knowledge figures, over HTTP against the real orchestration service:
//
//   estate_search_1m_{common,rare}_{any,all}_{p50,p99}  ms   GET /api/v1/knowledge/search on a corpus
//                                                            of 1,000,000 chunks (estate-corpus.ts)
//   estate_ingest                                      chunks/s  POST /api/v1/knowledge/ingest of
//                                                            100-document batches of markdown, into
//                                                            that corpus (to the response: stored,
//                                                            indexed and readable)
//   estate_ingest_characters                           characters/s  the same, in characters (a
//                                                            chunk rate depends on chunk size)
//
// Common queries use the most frequent words that are not stop words (each in 20-40% of the
// chunks, so `any` of two matches about half the corpus); rare queries use long-tail words
// (about 5 chunks each). Every search counts its matches exactly (`total_matches`).
//
// The database is temporary: a fresh one on DATABASE_URL's server (dropped at the end), else an
// embedded server in a temporary directory (deleted at the end). ESTATE_BENCH_CHUNKS shrinks the
// corpus for a quick run (the figure names keep saying 1m; the progress line says what ran).

import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { migrate } from '../infra/db/migrate.ts';
import { createPool, type Pool } from '../infra/db/pool.ts';
import { startServiceProcess } from '../tests/support/service-process.ts';
import { lexemesOf } from '../domain/orchestration/estate/lexemes.ts';
import { hiOf, loOf, toBits } from '../projections/orchestration/estate-postings.ts';
import { forEachPending, ordinalAt } from '../projections/orchestration/estate-pending.ts';
import { loadCorpus, MILLION, paragraph, random, tailWord, VOCABULARY, zipfSampler } from './estate-corpus.ts';
import { percentile } from './http.ts';
import type { Figure } from './figure.ts';
import { BENCH_POOL_ENV } from './pools.ts';
export type { Figure } from './figure.ts';

const ADMIN_KEY = 'orch_bench-estate-admin-key-0000000000';
const QUERIES_PER_FIGURE = 300;
const WARMUP_QUERIES = 30;
/**
 * Ingest batches measured (ESTATE_INGEST_BATCHES). 16 batches are about 90 projection batches,
 * about three folds of the search index (estate-index.ts, FOLD_ROWS): the fold work in the
 * measurement is then close to its long-run share. Fewer weigh too heavily the fold of the rows
 * the corpus leaves pending (bench/estate-corpus.ts); 8 gave 4,131 chunks/s where 16 gave 5,731.
 */
const INGEST_BATCHES = Number(process.env.ESTATE_INGEST_BATCHES ?? 16);
const DOCUMENTS_PER_BATCH = 100;

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** CPU seconds and minor page faults so far (from /proc; every thread of a process). */
interface Usage {
  cpu: number;
  faults: number;
}

const TICKS = 100; // USER_HZ on Linux

/** Every process's /proc/<pid>/stat fields of interest (those readable). */
function processes() {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return [
          {
            pid,
            ppid: fields[1]!,
            cpu: Number(fields[11]) + Number(fields[12]),
            children: Number(fields[13]) + Number(fields[14]),
            faults: Number(fields[7]),
            childFaults: Number(fields[8]),
            cmd: readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
          },
        ];
      } catch {
        return [];
      }
    });
}

/** The usage of process `pid`, or null where it cannot be read. */
function processUsage(pid: number): Usage | null {
  const found = processes().find((p) => p.pid === String(pid));
  return found ? { cpu: found.cpu / TICKS, faults: found.faults } : null;
}

/**
 * The usage of the local PostgreSQL server listening on `url`'s port (its postmaster and every
 * child), or null where that cannot be read. With other work on the machine, wall time says
 * little; CPU time per chunk says where the cost is. Faults count because on a virtual machine a
 * page of memory touched afresh can cost several microseconds (the README's estate section).
 */
function serverUsage(url: string): Usage | null {
  try {
    const port = new URL(url).port;
    const stats = processes();
    const master = stats.find(
      (s) => s.cmd.startsWith('/') && s.cmd.includes('postgres') && s.cmd.split('\0').includes(port),
    );
    if (!master) return null;
    // Live children, and (in the postmaster's children counts) those that exited meanwhile.
    const live = stats.filter((s) => s.pid === master.pid || s.ppid === master.pid);
    return {
      cpu: (master.children + live.reduce((n, s) => n + s.cpu, 0)) / TICKS,
      faults: master.childFaults + live.reduce((n, s) => n + s.faults, 0),
    };
  } catch {
    return null;
  }
}

/** WAL written by the server so far (pg_stat_wal): bytes and full-page images. */
async function walSoFar(url: string): Promise<{ bytes: number; fpi: number }> {
  const pool = createPool(url, { max: 1, application: 'orchard-bench' });
  try {
    const { rows } = await pool.query<{ bytes: string; fpi: string }>(
      'SELECT wal_bytes::text AS bytes, wal_fpi::text AS fpi FROM pg_stat_wal',
    );
    return { bytes: Number(rows[0]!.bytes), fpi: Number(rows[0]!.fpi) };
  } finally {
    await pool.end();
  }
}

/** Frequent words that are not English stop words (so they are indexed). */
const COMMON_TERMS = [
  'one',
  'said',
  'time',
  'way',
  'use',
  'like',
  'make',
  'day',
  'people',
  'water',
  'number',
  'word',
  'long',
  'two',
  'thing',
  'look',
];

function queries(kind: 'common' | 'rare', mode: 'any' | 'all', tailWords: number): string[] {
  const rand = random(kind === 'common' ? 7 : 11);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const rare = () => tailWord(Math.floor(rand() * tailWords));
  return Array.from({ length: QUERIES_PER_FIGURE + WARMUP_QUERIES }, () => {
    if (kind === 'common') return `${pick(COMMON_TERMS)} ${pick(COMMON_TERMS)}`;
    // `all` of a rare word and a common one; `any` of two rare words.
    return mode === 'all' ? `${rare()} ${pick(COMMON_TERMS)}` : `${rare()} ${rare()}`;
  });
}

/** A markdown document of about `chars` characters: headings, paragraphs, a code block now and then. */
function markdown(draw: () => number, rand: () => number, chars: number): string {
  const parts: string[] = [`# ${VOCABULARY[draw()]} ${VOCABULARY[draw()]}`];
  let length = 0;
  while (length < chars) {
    let part: string;
    const r = rand();
    if (r < 0.12) part = `## ${VOCABULARY[draw()]} ${VOCABULARY[draw()]} ${VOCABULARY[draw()]}`;
    else if (r < 0.17)
      part =
        '```sh\n' +
        Array.from(
          { length: 3 + Math.floor(rand() * 6) },
          () => `${VOCABULARY[draw()]} --${VOCABULARY[draw()]}=${Math.floor(rand() * 100)}`,
        ).join('\n') +
        '\n```';
    else part = paragraph(draw, rand, 40 + Math.floor(rand() * 120));
    parts.push(part);
    length += part.length + 2;
  }
  return parts.join('\n\n');
}

/**
 * The bulk load agrees with the projection's definitions on a sample: the search index holds
 * each sampled chunk under each lexeme of its content (domain/orchestration/estate/lexemes.ts),
 * in a container or, from `pendingFrom` on, in a pending row; and in its partitions.
 */
async function checkSample(pool: Pool, chunks: number, pendingFrom: number): Promise<void> {
  // Every n-th chunk, about 300 of them, and the newest: a TABLESAMPLE of a small corpus could sample none.
  const { rows: sampled } = await pool.query<{ ordinal: number; category: string; content: string }>(
    'SELECT ordinal, category, content FROM estate_chunks WHERE ordinal % $1 = 0 OR ordinal = $2 LIMIT 301',
    [Math.max(1, Math.floor(chunks / 300)), chunks - 1],
  );
  const rows = sampled.map((r) => ({ ...r, lexemes: [...lexemesOf(r.content).keys()] }));
  const keys = rows.flatMap((r) => [
    ...r.lexemes.map((l) => ['l', l, r.ordinal] as const),
    ['p', 'estate', r.ordinal] as const,
    ['p', `c:${r.category}`, r.ordinal] as const,
  ]);
  const inContainers = keys.filter((k) => k[0] === 'p' || k[2] < pendingFrom);
  const { rows: containers } = await pool.query<{ kind: string; key: string; hi: number; data: Buffer }>(
    `SELECT 'l' AS kind, lexeme AS key, hi, data FROM estate_postings WHERE (lexeme, hi) IN (SELECT * FROM unnest($1::text[], $2::int[]))
     UNION ALL SELECT 'p', partition, hi, data FROM estate_partitions`,
    [
      inContainers.filter((k) => k[0] === 'l').map((k) => k[1]),
      inContainers.filter((k) => k[0] === 'l').map((k) => hiOf(k[2])),
    ],
  );
  const bits = new Map(containers.map((c) => [`${c.kind} ${c.key} ${c.hi}`, toBits(c.data)]));
  const pendingSampled = new Set(rows.filter((r) => r.ordinal >= pendingFrom).map((r) => r.ordinal));
  const pending = new Set<string>();
  for (const { entries } of (await pool.query<{ entries: Buffer }>('SELECT entries FROM estate_postings_pending'))
    .rows) {
    forEachPending(entries, (lexeme, at, count) => {
      for (let end = at + 4 * count; at < end; at += 4)
        if (pendingSampled.has(ordinalAt(entries, at))) pending.add(`${lexeme} ${ordinalAt(entries, at)}`);
    });
  }
  const missing = keys.filter(([kind, key, o]) => {
    if (kind === 'l' && o >= pendingFrom) return !pending.has(`${key} ${o}`);
    const set = bits.get(`${kind} ${key} ${hiOf(o)}`);
    return !set || !(set[loOf(o) >>> 5]! & (1 << (loOf(o) & 31)));
  }).length;
  if (rows.length === 0 || rows.every((r) => r.lexemes.length === 0) || pendingSampled.size === 0 || missing > 0) {
    throw new Error(
      `bulk load check: ${rows.length} sampled (${pendingSampled.size} pending), ${missing} index entries missing`,
    );
  }
}

/** The figures on a fresh database `database` at `url` (bench/server.ts makes one). */
export async function estateFigures(
  url: string,
  database: string,
  options: { progress?: (m: string) => void; chunks?: number } = {},
): Promise<Figure[]> {
  const progress = options.progress ?? (() => {});
  const shape = { ...MILLION, chunks: options.chunks ?? Number(process.env.ESTATE_BENCH_CHUNKS ?? MILLION.chunks) };
  const pool = createPool(url, { max: 4, application: 'orchard-bench' });
  const figures: Figure[] = [];
  try {
    await migrate(pool);
    const version = (await pool.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
    progress(
      `database ${database} on PostgreSQL ${version}, ${cpus().length} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; loading ${shape.chunks} chunks`,
    );

    let started = performance.now();
    const loaded = await loadCorpus(pool, shape, 2, progress);
    await pool.query(
      'VACUUM ANALYZE estate_chunks, estate_documents, estate_postings, estate_partitions, estate_postings_pending, blobs',
    );
    // The load's own dirty pages are written now, not by a checkpoint running beside the ingest
    // measured below (a role without pg_checkpoint skips it).
    await pool.query('CHECKPOINT').catch((error: Error) => progress(`no CHECKPOINT after the load: ${error.message}`));
    progress(
      `loaded ${loaded.chunks} chunks of ${loaded.avgChars} characters on average in ${round((performance.now() - started) / 1000)} s`,
    );
    await checkSample(pool, loaded.chunks, loaded.pendingFrom);
    const sizes = (
      await pool.query<{ chunks: string; postings: string; rows: string }>(
        `SELECT pg_size_pretty(pg_total_relation_size('estate_chunks')) AS chunks,
              pg_size_pretty(pg_total_relation_size('estate_postings')) AS postings, (SELECT count(*) FROM estate_postings) AS rows`,
      )
    ).rows[0]!;
    progress(`sizes: chunks ${sizes.chunks}, search index ${sizes.postings} in ${sizes.rows} containers`);

    // The service in a process of its own, as it is deployed: this process, which loaded the
    // corpus and is the client, shares neither its heap nor its event loop (a service in the
    // loader's process measured up to a third slower, its garbage collections marking what the
    // load left in the heap).
    const service = await startServiceProcess('orch', url, {
      ...BENCH_POOL_ENV,
      ORCH_SECRET_KEY: 'c3'.repeat(32),
      ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'error',
    });
    try {
      const base = service.url;
      const headers = { 'X-API-Key': ADMIN_KEY };
      for (const kind of ['common', 'rare'] as const) {
        for (const mode of ['any', 'all'] as const) {
          const latencies: number[] = [];
          let matches = 0;
          for (const [i, q] of queries(kind, mode, shape.tailWords).entries()) {
            const t = performance.now();
            const r = await fetch(`${base}/api/v1/knowledge/search?${new URLSearchParams({ q, match: mode })}`, {
              headers,
            });
            const body = (await r.json()) as { total_matches: number };
            if (r.status !== 200) throw new Error(`search ${q}: ${r.status} ${JSON.stringify(body)}`);
            if (i >= WARMUP_QUERIES) {
              latencies.push(performance.now() - t);
              matches += body.total_matches;
            }
          }
          const name = `estate_search_1m_${kind}_${mode}`;
          progress(
            `${name} (load average ${loadavg()[0]!.toFixed(1)}): ${QUERIES_PER_FIGURE} queries, ${Math.round(matches / QUERIES_PER_FIGURE)} matches on average, p50 ${round(percentile(latencies, 50))} ms, p99 ${round(percentile(latencies, 99))} ms`,
          );
          figures.push({ name: `${name}_p50`, value: round(percentile(latencies, 50)), unit: 'ms' });
          figures.push({ name: `${name}_p99`, value: round(percentile(latencies, 99)), unit: 'ms' });
        }
      }

      figures.push(...(await ingestFigures(base, service.child.pid!, url, progress)));
    } finally {
      await service.stop();
    }
  } finally {
    await pool.end();
  }
  return figures;
}

/**
 * `estate_ingest` and `estate_ingest_characters`: INGEST_BATCHES batches of 100 markdown
 * documents of 20,000-80,000 characters, one at a time, through the service at `base` (process
 * `servicePid`, for its CPU; its database at `url`, for the server's). A request is timed from
 * its first byte sent to the last received.
 */
export async function ingestFigures(
  base: string,
  servicePid: number,
  url: string,
  progress: (m: string) => void,
): Promise<Figure[]> {
  const rand = random(99);
  const draw = zipfSampler(VOCABULARY.length, rand);
  let chunks = 0;
  let chars = 0;
  let seconds = 0;
  const used = { service: { cpu: 0, faults: 0 } as Usage | null, server: { cpu: 0, faults: 0 } as Usage | null };
  const add = (sum: Usage | null, before: Usage | null, after: Usage | null) =>
    sum === null || before === null || after === null
      ? null
      : { cpu: sum.cpu + after.cpu - before.cpu, faults: sum.faults + after.faults - before.faults };
  const wal = await walSoFar(url);
  for (let b = 0; b < INGEST_BATCHES; b++) {
    const documents = Array.from({ length: DOCUMENTS_PER_BATCH }, (_, i) => ({
      source_repo: 'bench-ingest',
      path: `ingested/batch-${b}/doc-${i}.md`,
      content: markdown(draw, rand, 20_000 + Math.floor(rand() * 60_000)),
    }));
    const body = JSON.stringify({ documents });
    chars += documents.reduce((n, d) => n + d.content.length, 0);
    const before = { service: processUsage(servicePid), server: serverUsage(url) };
    const t = performance.now();
    const r = await fetch(`${base}/api/v1/knowledge/ingest`, {
      method: 'POST',
      headers: { 'X-API-Key': ADMIN_KEY, 'content-type': 'application/json' },
      body,
    });
    const text = await r.text();
    seconds += (performance.now() - t) / 1000;
    used.service = add(used.service, before.service, processUsage(servicePid));
    used.server = add(used.server, before.server, serverUsage(url));
    const result = JSON.parse(text) as { status: string; total_chunks: number };
    if (r.status !== 200 || result.status !== 'ok') throw new Error(`ingest: ${r.status} ${text.slice(0, 300)}`);
    chunks += result.total_chunks;
  }
  const walAfter = await walSoFar(url);
  const perChunk = (n: number, digits = 0) => round(n / chunks, digits);
  const usage = (u: Usage | null, where: string) =>
    u === null ? '' : `${perChunk(u.cpu * 1e6)} µs CPU and ${perChunk(u.faults, 1)} page faults in ${where}`;
  progress(
    `estate_ingest (load average ${loadavg()[0]!.toFixed(1)}): ${chunks} chunks (${Math.round(chars / chunks)} characters on average) in ${round(seconds)} s, ${round(chars / seconds / 1e6, 2)} M characters/s; ` +
      `per chunk: ${[usage(used.service, 'the service'), usage(used.server, 'PostgreSQL')].filter(Boolean).join(', ')}; ` +
      `WAL per chunk: ${round((walAfter.bytes - wal.bytes) / chunks / 1000)} kB, ${round((walAfter.fpi - wal.fpi) / chunks, 2)} full-page images`,
  );
  return [
    { name: 'estate_ingest', value: Math.round(chunks / seconds), unit: 'chunks/s' },
    { name: 'estate_ingest_characters', value: Math.round(chars / seconds), unit: 'characters/s' },
  ];
}
