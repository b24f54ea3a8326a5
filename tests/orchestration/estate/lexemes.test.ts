// The estate lexemes (domain/orchestration/estate/lexemes.ts) and their encodings for
// PostgreSQL: the rule on its edge cases, agreement with to_tsvector('english', ...) on plain
// English prose, and tsvectors, texts and pending postings sent as binary parameters reading back
// as what was meant.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  fnv1a,
  Lexicon,
  lexemesOf,
  MAX_POSITION,
  queryGroups,
  restrict,
} from '../../../domain/orchestration/estate/lexemes.ts';
import { byteaArray, textArray } from '../../../infra/db/binary-params.ts';
import { bucketOf, forEachPending, ordinalAt, pendingRows } from '../../../projections/orchestration/estate-pending.ts';
import { tsvectorArray } from '../../../projections/orchestration/estate-tsvector.ts';
import { freshDatabase, type TestDatabase } from '../../support/database.ts';

interface Ctx {
  db: TestDatabase;
}
const test = suite<Ctx>('estate lexemes');

test.before(async (ctx) => {
  ctx.db = await freshDatabase('estate_lexemes', { migrate: false });
});
test.after(async ({ db }) => db?.drop());

const entries = (text: string) => Object.fromEntries(lexemesOf(text));

test('words are runs of letters, digits and marks; stop words keep their positions', () => {
  assert.equal(entries('The deployments were rolled back.'), { deploy: [2], roll: [4], back: [5] });
  assert.equal(entries("well-known user@example.com don't"), {
    well: [1],
    known: [2],
    user: [3],
    exampl: [4],
    com: [5],
  });
  assert.equal(entries('snake_case kebab-case'), { snake: [1], case: [2, 4], kebab: [3] });
});

test('lowercased; words with a digit are not stemmed; other words are (Snowball English)', () => {
  assert.equal(entries('Running RUNS ran'), { run: [1, 2], ran: [3] });
  assert.equal(entries('v2 Running2 2024 3.14'), { v2: [1], running2: [2], '2024': [3], '3': [4], '14': [5] });
  assert.equal(entries('skies generously'), { sky: [1], generous: [2] });
});

test('beyond ASCII: letters and marks of any script, surrogate pairs whole, other symbols separate', () => {
  assert.equal(entries('Ünïcode café — naïve'), { ünïcode: [1], café: [2], naïv: [3] });
  assert.equal(entries('𝒜lpha→βeta 日本語'), { '𝒜lpha': [1], βeta: [2], 日本語: [3] });
  assert.equal(entries('emoji 🎉 here'), { emoji: [1] });
  assert.equal(entries(''), {});
  assert.equal(entries('the and of ... !!!'), {});
});

test('limits: a lexeme keeps 256 positions; positions stop at 16,383; words over 2,047 bytes give none', () => {
  assert.is(lexemesOf('deploy '.repeat(300)).get('deploy')!.length, 256);
  const long = lexemesOf(`${'word '.repeat(MAX_POSITION + 10)}tail extra tail`);
  assert.equal(long.get('tail'), [MAX_POSITION]);
  assert.equal(long.get('extra'), [MAX_POSITION]);
  assert.equal(entries(`${'x'.repeat(2048)} ok`), { ok: [2] });
  assert.equal(entries(`${'é'.repeat(1024)} ok`), { ok: [2] }, '2,048 bytes in UTF-8');
  assert.equal(entries(`${'é'.repeat(1023)} ok`), { ['é'.repeat(1023)]: [1], ok: [2] });
});

test('queries: `all` is one group; `any` a group per whitespace-separated part; stop words drop out', () => {
  assert.equal(queryGroups('payment rollbacks', 'all'), [['payment', 'rollback']]);
  assert.equal(queryGroups('payment  well-known the', 'any'), [['payment'], ['well', 'known']]);
  assert.equal(queryGroups('the of', 'any'), []);
  assert.equal(queryGroups('payment:* & !rollback', 'any'), [['payment'], ['rollback']]);
});

test('a Lexicon gives the same lexemes however much it holds, and starts over only when asked', () => {
  const lexicon = new Lexicon();
  const text = 'Deployments roll back; deployment rolled forward. Deploying again!';
  const first = lexicon.scan(text);
  for (let i = 0; i < 50_000; i++) lexicon.distinct(`word${i} filler${i % 7}`); // growth and rehashing
  const again = lexicon.scan(text);
  const named = (found: typeof first) => Array.from(found.ids, (id) => lexicon.lexeme(id));
  assert.equal(named(again), named(first));
  assert.equal(again.positions, first.positions);
  assert.equal(
    Array.from(lexicon.distinct(text), (id) => lexicon.lexeme(id)),
    named(first),
  );
  assert.equal(Buffer.from(lexicon.utf8(first.ids[0]!)).toString(), 'deploy');
  assert.is(lexicon.utf8Hash(first.ids[0]!), fnv1a(Buffer.from('deploy')));
  const kept = restrict(again, (id) => lexicon.lexeme(id) === 'roll');
  assert.equal(
    Array.from(kept.ids, (id) => lexicon.lexeme(id)),
    ['roll'],
  );
  assert.equal(Array.from(kept.positions), [2, 5]);
});

test("plain English prose: the same tsvector as to_tsvector('english', ...)", async ({ db }) => {
  const prose = [
    'The deployment pipeline builds every service, runs the integration tests and publishes the images.',
    'When a release fails its health checks, the orchestrator rolls the traffic back to the previous version automatically.',
    'Operators are paged only if the rollback itself fails; otherwise an incident report is written the next morning.',
    'Databases are backed up nightly, and restores are rehearsed every quarter against a copy of production.',
  ];
  const lexicon = new Lexicon();
  const { rows } = await db.pool.query<{ same: boolean; ours: string; theirs: string }>(
    `SELECT v = to_tsvector('english', t) AS same, v::text AS ours, to_tsvector('english', t)::text AS theirs
     FROM unnest($1::text[], $2::tsvector[]) AS u(t, v)`,
    [
      textArray(prose),
      tsvectorArray(
        lexicon,
        prose.map((p) => lexicon.scan(p)),
      ),
    ],
  );
  for (const row of rows) assert.ok(row.same, `${row.ours}\n${row.theirs}`);
  assert.is(rows.length, prose.length);
});

test('binary parameters: texts and bytes of any kind read back exactly', async ({ db }) => {
  const texts = [
    '',
    'plain',
    'quote " backslash \\ brace { } comma ,',
    'Ünïcode 𝒜 日本語',
    'x'.repeat(100_000),
    'NULL',
  ];
  const { rows } = await db.pool.query<{ t: string }>(
    'SELECT t FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n',
    [textArray(texts)],
  );
  assert.equal(
    rows.map((r) => r.t),
    texts,
  );
  const bytes = [Buffer.alloc(0), Buffer.from([0, 255, 92, 120, 34]), Buffer.alloc(70_000, 7)];
  const back = await db.pool.query<{ b: Buffer }>(
    'SELECT b FROM unnest($1::bytea[]) WITH ORDINALITY AS u(b, n) ORDER BY n',
    [byteaArray(bytes)],
  );
  assert.equal(
    back.rows.map((r) => r.b),
    bytes,
  );
});

test('pending rows hold each chunk under each of its lexemes, grouped by bucket, ordinals ascending', () => {
  const lexicon = new Lexicon();
  const texts = ['alpha beta', 'beta gamma', 'alpha café', 'the of'];
  const ordinals = [7, 9, 70_000, 70_001];
  const { buckets, rows } = pendingRows(
    lexicon,
    texts.map((t) => lexicon.distinct(t)),
    ordinals,
  );
  const decoded = new Map<string, number[]>();
  rows.forEach((row, i) =>
    forEachPending(row, (lexeme, at, count) => {
      assert.is(bucketOf(Buffer.from(lexeme)), buckets[i]);
      decoded.set(
        lexeme,
        Array.from({ length: count }, (_, k) => ordinalAt(row, at + 4 * k)),
      );
    }),
  );
  assert.equal(Object.fromEntries(decoded), { alpha: [7, 70_000], beta: [7, 9], gamma: [9], café: [70_000] });
  assert.equal(
    buckets,
    [...buckets].sort((a, b) => a - b),
  );
  assert.throws(() => forEachPending(Buffer.from([0, 1, 97, 0, 0, 0, 9]), () => {}), /malformed/);
});

test.run();
