// The estate read models: rebuilding from the log and the blobs reproduces the live tables (the
// search index included, byte for byte once its pending postings are folded in); the search
// index agrees with PostgreSQL's own `tsvector @@ tsquery` (over each chunk's lexemes) on every
// query, with postings pending and folded; events stay small and carry no content.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { documentIdOf } from '../../../domain/orchestration/estate/decider.ts';
import { forgetRecentBlobs } from '../../../infra/blobs.ts';
import { estateProjections } from '../../../projections/orchestration/estate.ts';
import { Lexicon, lexemesOf, queryGroups } from '../../../domain/orchestration/estate/lexemes.ts';
import {
  appendPending,
  applyFold,
  compactSearchIndex,
  foldPending,
  planFold,
  tsquery,
} from '../../../projections/orchestration/estate-index.ts';
import {
  bucketOf,
  forEachPending,
  PENDING_BUCKETS,
  pendingRow,
} from '../../../projections/orchestration/estate-pending.ts';
import { tsvectorArray } from '../../../projections/orchestration/estate-tsvector.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';
import { admin, ADMIN_KEY, ingest, searchFor, vault } from './helpers.ts';

const test = suite<{ s: TestServices }>('estate projections');
test.before(async (ctx) => {
  ctx.s = await startTestApps('estate_projection', { ADMIN_API_KEY: ADMIN_KEY });
});
test.after(async ({ s }) => s?.close());

const SNAPSHOTS: Record<string, string> = {
  estate_documents: 'SELECT * FROM estate_documents ORDER BY id',
  estate_chunks:
    'SELECT chunk_id, document_id, chunk_index, ordinal, is_vault, category, content FROM estate_chunks ORDER BY ordinal',
  estate_postings: `SELECT lexeme, hi, encode(data, 'hex') AS data FROM estate_postings ORDER BY lexeme, hi`,
  estate_partitions: `SELECT partition, hi, encode(data, 'hex') AS data FROM estate_partitions ORDER BY partition, hi`,
  estate_counters: 'SELECT * FROM estate_counters ORDER BY name',
  estate_runs: 'SELECT * FROM estate_runs ORDER BY run_id',
};

const WORDS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'foxtrot',
  'golf',
  'hotel',
  'india',
  'juliet',
  'kilo',
  'lima',
  'deploying',
  'deployment',
  'services',
];

function rng(seed: number) {
  let a = seed;
  return () => {
    a = (a * 1103515245 + 12345) % 2147483648;
    return a / 2147483648;
  };
}

function text(rand: () => number, paragraphs: number): string {
  return Array.from({ length: paragraphs }, (_, p) => {
    const words = Array.from(
      { length: 20 + Math.floor(rand() * 200) },
      () => WORDS[Math.floor(rand() * rand() * WORDS.length)],
    );
    return `${p % 4 === 0 ? '## Section\n\n' : ''}${words.join(' ')}.`;
  }).join('\n\n');
}

test('a history touching every event, then rebuild: the same tables, search index included', async ({ s }) => {
  const rand = rng(3);
  const docs = Array.from({ length: 30 }, (_, i) => ({
    source_repo: i % 3 ? 'infra' : 'handbook',
    path: `${['runbooks', 'services', 'people'][i % 3]}/doc-${i}.md`,
    content: text(rand, 3 + (i % 12)),
  }));
  // A long document too: its chunks (over 32) are indexed on other connections (staged).
  docs.push({ source_repo: 'handbook', path: 'people/long.md', content: text(rand, 150) });
  assert.is((await ingest(s, docs)).body.status, 'ok');
  // Updates, unchanged ones, deletes, a re-creation after a delete, the vault.
  assert.is(
    (
      await ingest(
        s,
        docs.slice(0, 10).map((d, i) => (i % 2 ? d : { ...d, content: text(rand, 4) })),
      )
    ).body.status,
    'ok',
  );
  for (const d of docs.slice(20, 24)) {
    assert.is(
      (
        await http(`${s.orch}/api/v1/knowledge/doc/${documentIdOf(d.source_repo, d.path)}`, {
          method: 'DELETE',
          headers: admin,
        })
      ).status,
      204,
    );
  }
  assert.is((await ingest(s, [{ ...docs[20]!, content: text(rand, 2) }])).body.results[0].status, 'created');
  assert.is(
    (
      await vault(s, [
        { path: 'customers/a.md', content: text(rand, 3) },
        { path: 'customers/b.md', content: text(rand, 5) },
      ])
    ).body.status,
    'ok',
  );
  // The same document written twice at once: both events may share a projection batch.
  const racing = await Promise.all([1, 2].map((n) => ingest(s, [{ ...docs[5]!, content: `${text(rand, 2)} ${n}` }])));
  assert.ok(racing.every((r) => r.body.status === 'ok'));
  // A failed run, for the runs table.
  assert.is((await ingest(s, [{ source_repo: 'x', path: '', content: 'x' }])).body.status, 'failed');

  // Pending postings are folded at times that depend on batching: fold them all, then compare.
  const snapshot = async () => {
    await compactSearchIndex(s.db.pool);
    assert.is((await s.db.pool.query('SELECT 1 FROM estate_postings_pending')).rowCount, 0);
    return Object.fromEntries(
      await Promise.all(Object.entries(SNAPSHOTS).map(async ([t, q]) => [t, (await s.db.pool.query(q)).rows])),
    );
  };
  const live = await snapshot();
  for (const [table, rows] of Object.entries(live)) assert.ok((rows as unknown[]).length > 0, table);
  await s.platform.engine.stop(); // rebuild is refused while a process runs the projection
  forgetRecentBlobs(); // the rebuild reads the stored blobs, not the texts this process kept
  for (const projection of estateProjections)
    assert.ok((await s.platform.engine.rebuild(projection.name)) > 0, projection.name);
  const rebuilt = await snapshot();
  for (const table of Object.keys(SNAPSHOTS)) assert.equal(rebuilt[table], live[table], table);
  await s.restart();
});

test('the search index agrees with tsvector @@ tsquery: totals of any and all, in every scope', async ({ s }) => {
  const rand = rng(11);
  const scopes: Array<[Record<string, string>, string]> = [
    [{}, 'NOT is_vault'],
    [{ scope: 'runbooks' }, `NOT is_vault AND category = 'runbooks'`],
    [{ scope: 'people' }, `NOT is_vault AND category = 'people'`],
    [{ scope: 'vault' }, 'is_vault'],
  ];
  // More documents after the first test's compaction: their postings are pending.
  const more = Array.from({ length: 12 }, (_, i) => ({
    source_repo: 'later',
    path: `${['runbooks', 'people'][i % 2]}/later-${i}.md`,
    content: text(rand, 2 + (i % 5)),
  }));
  assert.is((await ingest(s, more)).body.status, 'ok');
  assert.is((await vault(s, [{ path: 'customers/later.md', content: text(rand, 3) }])).body.status, 'ok');
  let compared = 0;
  const lexicon = new Lexicon();
  const pending = (await s.db.pool.query('SELECT 1 FROM estate_postings_pending')).rowCount ?? 0;
  assert.ok(pending > 0, 'some postings are still pending');
  for (let i = 0; i < 40; i++) {
    if (i === 20) await compactSearchIndex(s.db.pool); // the second half with every posting folded
    const q = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(
      ' ',
    );
    for (const match of ['any', 'all'] as const) {
      for (const [params, filter] of scopes) {
        const r = await searchFor(s, { q, match, limit: '100', ...params });
        const groups = queryGroups(q, match);
        const chunks = (
          await s.db.pool.query<{ ordinal: number; content: string }>(
            `SELECT ordinal, content FROM estate_chunks WHERE ${filter}`,
          )
        ).rows;
        const { rows } =
          groups.length === 0
            ? { rows: [{ n: 0 }] }
            : await s.db.pool.query<{ n: number }>(
                'SELECT count(*)::int AS n FROM unnest($1::tsvector[]) AS v WHERE v @@ $2::tsquery',
                [
                  tsvectorArray(
                    lexicon,
                    chunks.map((c) => lexicon.scan(c.content)),
                  ),
                  tsquery(groups),
                ],
              );
        assert.is(r.body.total_matches, rows[0]!.n, `${q} ${match} ${JSON.stringify(params)}`);
        if (rows[0]!.n <= 100) assert.is(r.body.count, rows[0]!.n);
        compared++;
      }
    }
  }
  assert.is(compared, 320);
});

test('a fold leaves rare lexemes pending, one row per bucket, and folds a bucket whole when that row grows too large', async ({
  s,
}) => {
  await compactSearchIndex(s.db.pool);
  const rare = ['quokkaone', 'quokkatwo', 'quokkathree'];
  const rareLexemes = rare.map((word) => [...lexemesOf(word).keys()][0]!);
  const docs = Array.from({ length: 8 }, (_, i) => ({
    source_repo: 'folds',
    path: `runbooks/fold-${i}.md`,
    content: `${text(rng(40 + i), 3)}${i < rare.length ? ` ${rare[i]}` : ''}`,
  }));
  for (const half of [docs.slice(0, 4), docs.slice(4)]) assert.is((await ingest(s, half)).body.status, 'ok');
  const queries = [...rare, 'alpha', 'deploying services', 'quokkaone bravo'];
  const totals = async () =>
    Promise.all(queries.map(async (q) => (await searchFor(s, { q, limit: '100' })).body.total_matches as number));
  const before = await totals();
  assert.equal(before.slice(0, 3), [1, 1, 1]);
  /** Pending postings: lexeme -> how many. */
  const pending = async () => {
    const found = new Map<string, number>();
    for (const { entries } of (
      await s.db.pool.query<{ entries: Buffer }>('SELECT entries FROM estate_postings_pending')
    ).rows) {
      forEachPending(entries, (lexeme, _at, count) => found.set(lexeme, (found.get(lexeme) ?? 0) + count));
    }
    return found;
  };
  assert.ok((await pending()).has('alpha'));

  // Every bucket folded once: the common lexemes go to containers, the rare ones stay pending.
  for (let b = 0; b < PENDING_BUCKETS; b += 16)
    await foldPending(
      s.db.pool,
      1,
      Array.from({ length: 16 }, (_, i) => b + i),
    );
  const left = await pending();
  for (const lexeme of rareLexemes) assert.is(left.get(lexeme), 1, `${lexeme} stays pending`);
  assert.not.ok(left.has('alpha') || left.has('servic'), 'common lexemes are folded');
  assert.ok(
    [...left.values()].every((n) => n < 4),
    'only lexemes with fewer than 4 postings stay',
  );
  const perBucket = (
    await s.db.pool.query<{ n: number }>(
      'SELECT max(n)::int AS n FROM (SELECT count(*) AS n FROM estate_postings_pending GROUP BY bucket) c',
    )
  ).rows[0]!.n;
  assert.is(perBucket, 1, 'one row per bucket left');
  assert.equal(await totals(), before, 'the same sets, folded or pending');

  // A bucket whose rare postings would outgrow a row is folded whole.
  const bucket = bucketOf(Buffer.from(rareLexemes[0]!, 'utf8'));
  const many: [string, number[]][] = [];
  for (let n = 0; many.length < 1200; n++)
    if (bucketOf(Buffer.from(`zz${n}`, 'utf8')) === bucket) many.push([`zz${n}`, [9_000_000 + n]]);
  await appendPending(s.db.pool, { buckets: [bucket], rows: [pendingRow(many)] });
  assert.is(await foldPending(s.db.pool, 1, [bucket]), 1);
  assert.is((await s.db.pool.query('SELECT 1 FROM estate_postings_pending WHERE bucket = $1', [bucket])).rowCount, 0);
  const folded = await s.db.pool.query('SELECT 1 FROM estate_postings WHERE lexeme = $1', [rareLexemes[0]]);
  assert.is(folded.rowCount, 1, 'the rare lexeme of that bucket is folded too');
  assert.equal(await totals(), before);
  await compactSearchIndex(s.db.pool);
  assert.equal(await totals(), before);
});

test('a fold reads and computes before its first write, and leaves the rows appended meanwhile pending', async ({
  s,
}) => {
  await compactSearchIndex(s.db.pool);
  const docs = Array.from({ length: 4 }, (_, i) => ({
    source_repo: 'folds',
    path: `runbooks/late-${i}.md`,
    content: text(rng(60 + i), 3),
  }));
  assert.is((await ingest(s, docs)).body.status, 'ok');
  const bucket = bucketOf(Buffer.from('alpha', 'utf8'));
  const queries = ['alpha', 'alpha bravo', 'deploying services'];
  const totals = async () =>
    Promise.all(queries.map(async (q) => (await searchFor(s, { q, limit: '100' })).body.total_matches as number));
  const before = await totals();
  assert.ok(before[0]! > 0);
  let late = '';
  for (let n = 0; !late; n++) if (bucketOf(Buffer.from(`zzlate${n}`, 'utf8')) === bucket) late = `zzlate${n}`;

  const tx = await s.db.pool.connect();
  try {
    await tx.query('BEGIN');
    const plan = await planFold(tx, [bucket], false);
    assert.ok(plan.read.length > 0 && plan.containers.keys.includes('alpha'));
    // No transaction id yet: until the writes, this fold holds back no reader of the log.
    assert.is((await tx.query('SELECT pg_current_xact_id_if_assigned() AS xid')).rows[0].xid, null);
    // Meanwhile a projection batch appends a row to the same bucket.
    await appendPending(s.db.pool, { buckets: [bucket], rows: [pendingRow([[late, [8_000_000]]])] });
    await applyFold(tx, plan);
    await tx.query('COMMIT');
  } finally {
    tx.release();
  }
  const left = (
    await s.db.pool.query<{ entries: Buffer }>('SELECT entries FROM estate_postings_pending WHERE bucket = $1', [
      bucket,
    ])
  ).rows;
  const lexemes: string[] = [];
  for (const { entries } of left) forEachPending(entries, (lexeme) => lexemes.push(lexeme));
  assert.equal(lexemes, [late], 'only the row appended after the fold read the bucket is left');
  assert.ok((await s.db.pool.query('SELECT 1 FROM estate_postings WHERE lexeme = $1', ['alpha'])).rowCount! > 0);
  assert.equal(await totals(), before, 'the same sets once folded');
  await compactSearchIndex(s.db.pool);
  assert.equal(await totals(), before);
});

test('events stay far below 1 MB and hold no content: the worst-case document', async ({ s }) => {
  const marker = 'zqxjkmarker';
  const worst = `${marker}\n${'# h\nx\n'.repeat(83_000)}`.slice(0, 500_000);
  const r = await ingest(s, [
    { source_repo: 'worst', path: 'case/headings.md', content: worst, metadata: { note: 'm'.repeat(16_000) } },
  ]);
  assert.is(r.body.status, 'ok', r.text.slice(0, 200));
  assert.ok(r.body.total_chunks > 1000);
  const { rows } = await s.db.pool.query<{ n: number }>(
    `SELECT max(octet_length(data::text))::int AS n FROM events WHERE type LIKE 'Estate%'`,
  );
  assert.ok(rows[0]!.n < 200_000, `largest estate event: ${rows[0]!.n} bytes`);
  assert.not.match(await logText(s), marker);
  assert.is((await searchFor(s, { q: marker })).body.total_matches, 1);
});

test.run();
