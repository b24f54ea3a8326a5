// Profile and bot-knowledge figures, against the real platform (its projections, read models and
// the orchestration app in-process):
//
//   knowledge_search_10k_snippets_{common,rare}_{p50,p99}  ms   searchKnowledge (the one retrieval
//       function: the search route and chat grounding), limit 5, on one profile holding 10,000
//       snippets. Common terms are each in 25-34% of the snippets; rare terms in 5 each.
//   knowledge_search_10k_snippets_question_{p50,p99}  ms   the same for a chat-like question of
//       several words, common ones among them (what grounding sends).
//   knowledge_add_10k_snippets_p50  ms   POST a snippet to that profile (the knowledge decider folds
//       the profile's stream, 10,000 snippet events, before each write).
//   profile_create  profiles/s   POST /api/v1/agent-chat/profiles from 8 concurrent clients, each
//       answered after the read models show it; paired with append_1event_8writers (bench/log.ts),
//       the log's raw append rate from 8 writers, measured in alternating slices for the ratio.
//
// The snippets are seeded as KnowledgeSnippetAdded events appended to the profile's stream in
// batches of 500 (the event shape the knowledge decider writes), then projected: seeding through
// the command runner would fold the growing stream 10,000 times.
//
// The database is temporary: a fresh one on DATABASE_URL's server (dropped at the end), else an
// embedded server in a temporary directory (deleted at the end).

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { profileStream } from '../domain/orchestration/streams.ts';
import { toAppend } from '../infra/commands.ts';
import { loadConfig } from '../infra/config.ts';
import type { ExpectedRevision } from '../infra/eventstore/port.ts';
import { createLogger } from '../infra/logging.ts';
import { createApp } from '../main/apps.ts';
import { ensureBootstrapAdmin } from '../main/bootstrap.ts';
import { openPlatform } from '../main/platform.ts';
import { searchKnowledge } from '../projections/orchestration/knowledge.ts';
import { percentile } from './http.ts';
import { appendEvents } from './log.ts';
import { paired, type Operation } from './measure.ts';
import type { Figure } from './figure.ts';
import { BENCH_POOL_ENV } from './pools.ts';
import { mulberry32 } from '../tests/support/prng.ts';
export type { Figure } from './figure.ts';

const ADMIN_KEY = 'orch_bench-profiles-admin-key-00000000';
const SNIPPETS = 10_000;
const SEED_BATCH = 500;
const QUERIES = 500;
const WARMUP = 50;
const ADDS = 20;
const CLIENTS = 8;

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** A small deterministic generator, so every run searches the same corpus. */
const random = mulberry32;

// Support-desk English: what a bot's knowledge reads like. Words are drawn Zipf-like (early
// words often), so the text has the skew of real prose.
const VOCABULARY = (
  'customer order invoice payment refund shipping delivery product service support team office hour day week month time ' +
  'policy request contact email phone help issue problem question answer guide step setting option feature plan price ' +
  'device laptop printer network wifi software update install version browser mobile app login screen page link file ' +
  'report manager employee leave holiday benefit salary contract training meeting calendar room desk building parking ' +
  'security incident phishing backup storage folder share permission group role admin user license subscription trial ' +
  'discount coupon gift card warranty repair return exchange store stock item package label address country region ' +
  'language currency tax receipt statement balance transfer bank credit limit fee charge cancel renew upgrade downgrade ' +
  'schedule appointment booking reservation confirmation reminder notification message chat ticket queue priority status ' +
  'escalation feedback survey review rating complaint compliment quality standard process procedure checklist template ' +
  'document record history archive data privacy consent cookie tracking analytics dashboard metric goal target result ' +
  'open close start stop reset change check verify confirm approve reject submit send receive download upload print scan'
).split(' ');
const COMMON_TERMS = ['account', 'password', 'onboarding', 'firmware']; // not in VOCABULARY: planted in 25-34% of the snippets
const RARE_TERMS = Array.from({ length: 20 }, (_, i) => `zyx${i}quill`); // each planted in 5 snippets

function sentence(draw: () => number, rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(VOCABULARY[draw()]!);
  const text = out.join(' ');
  return text[0]!.toUpperCase() + text.slice(1) + (rand() < 0.8 ? '.' : '?');
}

function zipf(rand: () => number, n: number): () => number {
  return () => Math.min(n - 1, Math.floor(n * rand() ** 2.2));
}

/** The seeded snippets: titles of 3-7 words, content of 40-160 words. */
function corpus(): { title: string; content: string }[] {
  const rand = random(42);
  const draw = zipf(rand, VOCABULARY.length);
  const rare = new Map<number, string>();
  for (const term of RARE_TERMS) for (let k = 0; k < 5; k++) rare.set(Math.floor(rand() * SNIPPETS), term);
  return Array.from({ length: SNIPPETS }, (_, i) => {
    const title = sentence(draw, rand, 3 + Math.floor(rand() * 5)).replace(/[.?]$/, '');
    const parts: string[] = [];
    for (let words = 40 + Math.floor(rand() * 120); words > 0; words -= 12)
      parts.push(sentence(draw, rand, Math.min(12, words)));
    COMMON_TERMS.forEach((term, t) => {
      if (rand() < 0.25 + t * 0.03) parts.splice(Math.floor(rand() * parts.length), 0, `Your ${term} matters.`);
    });
    const planted = rare.get(i);
    if (planted) parts.push(`See ${planted}.`);
    return { title, content: parts.join(' ') };
  });
}

async function latencies(count: number, work: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await work(i);
    out.push(performance.now() - started);
  }
  return out;
}

/** The figures on a fresh database at `url` (bench/server.ts makes one). */
export async function profilesFigures(
  url: string,
  options: { progress?: (m: string) => void; seconds?: number } = {},
): Promise<Figure[]> {
  const progress = options.progress ?? (() => {});
  const seconds = options.seconds ?? 4;
  const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000, slices: 8 };

  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-profiles-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c3'.repeat(32),
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'error',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  const figures: Figure[] = [];
  try {
    await ensureBootstrapAdmin(platform);
    const app = createApp('orch', platform);
    const post = async (pathname: string, body: unknown) => {
      const r = await app.request(`http://orch.bench${pathname}`, {
        method: 'POST',
        headers: { 'X-API-Key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status !== 201) throw new Error(`POST ${pathname}: ${r.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };

    // --- knowledge search on 10,000 snippets ------------------------------------------------
    const profile = await post('/api/v1/agent-chat/profiles', { slug: 'bench-kb', name: 'Bench knowledge' });
    const profileId = String(profile.id);
    progress(`seeding ${SNIPPETS} snippets`);
    const began = Date.now();
    const snippets = corpus();
    let expected: ExpectedRevision = 0n;
    let last;
    const context = { actor: { kind: 'system' as const, id: 'bench' }, correlationId: null };
    for (let i = 0; i < snippets.length; i += SEED_BATCH) {
      const at = new Date(Date.now() + i).toISOString();
      const events = snippets.slice(i, i + SEED_BATCH).map((s) =>
        toAppend(
          {
            type: 'KnowledgeSnippetAdded',
            data: {
              snippet_id: randomUUID(),
              profile_id: profileId,
              title: s.title,
              content: s.content,
              source: 'bench',
              metadata: null,
              added_by: null,
              at,
            },
          },
          context,
        ),
      );
      last = await platform.store.append(profileStream('bench-kb'), events, { expected });
      expected = last.nextExpectedRevision;
    }
    await platform.engine.waitFor(last!.position, ['KnowledgeSnippetAdded'], 600_000);
    // Steady state: autovacuum visits freshly inserted tables (insert thresholds) and sets their
    // visibility maps, which lets the term index answer without heap fetches.
    await platform.pool.query('VACUUM ANALYZE knowledge_snippets, knowledge_terms');
    const matches = async (term: string) =>
      (
        await platform.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM knowledge_snippets WHERE profile_id = $1 AND search @@ plainto_tsquery('english', $2)`,
          [profileId, term],
        )
      ).rows[0]!.n;
    progress(
      `seeded in ${((Date.now() - began) / 1000).toFixed(1)} s; common terms match ${(await Promise.all(COMMON_TERMS.map(matches))).join(', ')} snippets, rare ${await matches(RARE_TERMS[0]!)}`,
    );

    const QUESTIONS = [
      'How do I reset my account password?',
      'Where can I find the onboarding checklist for a new employee?',
      'My laptop firmware update failed, what should I do?',
      'Can I get a refund on my subscription invoice?',
    ];
    for (const [kind, terms] of [
      ['common', COMMON_TERMS],
      ['rare', RARE_TERMS],
      ['question', QUESTIONS],
    ] as const) {
      const term = (i: number) => terms[i % terms.length]!;
      await latencies(WARMUP, (i) => searchKnowledge(platform.pool, profileId, term(i), 5));
      const ms = await latencies(QUERIES, async (i) => {
        const hits = await searchKnowledge(platform.pool, profileId, term(i), 5);
        if (hits.length === 0) throw new Error(`no hit for ${term(i)}`);
      });
      progress(
        `knowledge_search_10k_snippets_${kind}: p50 ${round(percentile(ms, 50))} ms, p99 ${round(percentile(ms, 99))} ms over ${QUERIES} queries`,
      );
      figures.push({ name: `knowledge_search_10k_snippets_${kind}_p50`, value: round(percentile(ms, 50)), unit: 'ms' });
      figures.push({ name: `knowledge_search_10k_snippets_${kind}_p99`, value: round(percentile(ms, 99)), unit: 'ms' });
    }

    const adds = await latencies(ADDS, (i) =>
      post(`/api/v1/bots/${profileId}/knowledge`, {
        title: `Added ${i}`,
        content: 'A snippet added to a large knowledge base.',
      }),
    );
    progress(`knowledge_add_10k_snippets: p50 ${round(percentile(adds, 50))} ms over ${ADDS} adds`);
    figures.push({ name: 'knowledge_add_10k_snippets_p50', value: round(percentile(adds, 50), 1), unit: 'ms' });

    // --- profile creation from 8 clients, paired with the raw append rate -------------------
    progress(`profile_create (${CLIENTS} clients) paired with append_1event_8writers (${seconds} s each)`);
    let n = 0;
    const create: Operation = async () => {
      await post('/api/v1/agent-chat/profiles', { slug: `bench-${++n}`, name: `Bench ${n}` });
      return 1;
    };
    const appends = appendEvents(url, CLIENTS, 1);
    try {
      const [created, appended] = await paired(
        Array.from({ length: CLIENTS }, () => create),
        appends.operations,
        timing,
      );
      progress(
        `profile_create: ${round(created.perSecond, 0)}/s (mean latency ${round(created.meanLatencyMs)} ms); append_1event_8writers: ${round(appended.perSecond, 0)}/s`,
      );
      figures.push({ name: 'append_1event_8writers', value: round(appended.perSecond, 0), unit: 'events/s' });
      figures.push({
        name: 'profile_create',
        value: round(created.perSecond, 0),
        unit: 'profiles/s',
        baseline: 'append_1event_8writers',
        ratio: round(created.perSecond / appended.perSecond, 3),
      });
    } finally {
      await appends.close();
    }
    return figures;
  } finally {
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
