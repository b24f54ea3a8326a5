// GET /api/v1/knowledge/search through real HTTP: the exact response, stemming, any/all, scopes
// and the vault's isolation, limit clamps, exact totals, safety of any text, and the index
// following updates and deletes.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { documentIdOf } from '../../../domain/orchestration/estate/decider.ts';
import { createAccount, type Account } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { admin, ADMIN_KEY, filler, ingest, searchFor, vault } from './helpers.ts';

const test = suite<{ s: TestServices; readonly: Account }>('estate search');

const WIDGETS = 120;

test.before(async (ctx) => {
  ctx.s = await startTestApps('estate_search', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.readonly = await createAccount(ctx.s, ADMIN_KEY, 'readonly');
  const r = await ingest(ctx.s, [
    {
      source_repo: 'infra',
      path: 'runbooks/deploy.md',
      content: '# Deploying\n\nDeploying the payment service: run the pipeline, then verify the dashboards.',
    },
    {
      source_repo: 'infra',
      path: 'runbooks/rollback.md',
      content: 'Rollback procedure for the payment service. Rollback, rollback, rollback.',
    },
    {
      source_repo: 'infra',
      path: 'architecture/payments.md',
      content: 'Payment architecture: ledger, queue and workers.',
    },
    { source_repo: 'handbook', path: 'onboarding/laptop.md', content: 'Set up your laptop and your editor.' },
    // One document of many chunks, each mentioning widgets once.
    {
      source_repo: 'catalog',
      path: 'widgets/all.md',
      content: Array.from(
        { length: WIDGETS },
        (_, i) => `## Widget ${i}\n\nThe widget number ${i}. ${filler(40)}`,
      ).join('\n\n'),
    },
  ]);
  if (r.body.status !== 'ok') throw new Error(r.text);
  const v = await vault(ctx.s, [
    { path: 'customers/acme.md', content: 'Acme payment dispute escalation, confidential.' },
  ]);
  if (v.body.status !== 'ok') throw new Error(v.text);
});
test.after(async ({ s }) => s?.close());

const paths = (r: { body: { hits: Array<{ path: string }> } }) => r.body.hits.map((h) => h.path).sort();

test('the response has exactly the documented fields, each hit too', async ({ s }) => {
  const r = await searchFor(s, { q: 'ledger' });
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), [
    'count',
    'hits',
    'limit',
    'limit_clamped',
    'match_mode',
    'max_limit',
    'query',
    'scope',
    'total_matches',
    'truncated',
  ]);
  assert.equal(
    { ...r.body, hits: [] },
    {
      query: 'ledger',
      scope: null,
      match_mode: 'any',
      count: 1,
      total_matches: 1,
      limit: 6,
      max_limit: 100,
      limit_clamped: false,
      truncated: false,
      hits: [],
    },
  );
  const hit = r.body.hits[0];
  assert.equal(Object.keys(hit).sort(), [
    'category',
    'chunk_id',
    'chunk_index',
    'content',
    'document_id',
    'path',
    'score',
    'snippet',
    'source_repo',
  ]);
  assert.equal(
    { ...hit, chunk_id: 'x', score: 0, snippet: '' },
    {
      document_id: documentIdOf('infra', 'architecture/payments.md'),
      chunk_id: 'x',
      source_repo: 'infra',
      path: 'architecture/payments.md',
      category: 'architecture',
      chunk_index: 0,
      score: 0,
      content: 'Payment architecture: ledger, queue and workers.',
      snippet: '',
    },
  );
  assert.match(hit.chunk_id, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(hit.score > 0);
  assert.match(hit.snippet, /\*\*ledger\*\*/);
});

test('English stemming: deployments finds deploying; the snippet marks the matched words', async ({ s }) => {
  const r = await searchFor(s, { q: 'deployments' });
  assert.equal(paths(r), ['runbooks/deploy.md']);
  assert.match(r.body.hits[0].snippet, /\*\*Deploying\*\*/);
  // Stop words alone match nothing (and are not an error).
  const stop = await searchFor(s, { q: 'the and of' });
  assert.is(stop.status, 200);
  assert.equal([stop.body.count, stop.body.total_matches, stop.body.hits], [0, 0, []]);
});

test('match any (default) is an OR of the words, all an AND; ranking prefers the better match', async ({ s }) => {
  const any = await searchFor(s, { q: 'payment rollback' });
  assert.is(any.body.match_mode, 'any');
  assert.is(any.body.total_matches, 3);
  assert.equal(paths(any), ['architecture/payments.md', 'runbooks/deploy.md', 'runbooks/rollback.md']);
  assert.is(
    any.body.hits[0].path,
    'runbooks/rollback.md',
    'the chunk holding both words, rollback four times, ranks first',
  );
  const scores = any.body.hits.map((h: { score: number }) => h.score);
  assert.equal(
    scores,
    [...scores].sort((a, b) => b - a),
  );
  const all = await searchFor(s, { q: 'payment rollback', match: 'all' });
  assert.is(all.body.match_mode, 'all');
  assert.equal([all.body.total_matches, paths(all)], [1, ['runbooks/rollback.md']]);
  const none = await searchFor(s, { q: 'payment laptop', match: 'all' });
  assert.equal([none.body.total_matches, none.body.hits], [0, []]);
});

test('scope: a category narrows the estate; vault content only with scope=vault', async ({ s }) => {
  const runbooks = await searchFor(s, { q: 'payment', scope: 'runbooks' });
  assert.equal(
    [runbooks.body.scope, runbooks.body.total_matches, paths(runbooks)],
    ['runbooks', 2, ['runbooks/deploy.md', 'runbooks/rollback.md']],
  );
  assert.is((await searchFor(s, { q: 'payment', scope: 'no-such-category' })).body.total_matches, 0);
  // The vault document mentions payment and acme; the estate never shows it.
  const estate = await searchFor(s, { q: 'payment' });
  assert.is(estate.body.total_matches, 3);
  assert.ok(estate.body.hits.every((h: { source_repo: string }) => h.source_repo !== 'vault'));
  assert.is((await searchFor(s, { q: 'acme' })).body.total_matches, 0);
  assert.is((await searchFor(s, { q: 'acme', scope: 'customers' })).body.total_matches, 0);
  const inVault = await searchFor(s, { q: 'acme payment', scope: 'vault' });
  assert.equal([inVault.body.scope, inVault.body.total_matches], ['vault', 1]);
  assert.equal(
    inVault.body.hits.map((h: { source_repo: string; path: string }) => [h.source_repo, h.path]),
    [['vault', 'customers/acme.md']],
  );
  assert.is((await searchFor(s, { q: 'ledger', scope: 'vault' })).body.total_matches, 0);
  // An empty scope is no scope.
  assert.is((await searchFor(s, { q: 'payment', scope: '' })).body.scope, null);
});

test('limit: default 6, clamped to 1-100 (limit_clamped says so), k as an alias; totals stay exact', async ({ s }) => {
  const check = async (params: Record<string, string>, limit: number, clamped: boolean) => {
    const r = await searchFor(s, { q: 'widget', ...params });
    assert.is(r.status, 200);
    assert.equal(
      [r.body.limit, r.body.limit_clamped, r.body.count, r.body.total_matches, r.body.truncated],
      [limit, clamped, Math.min(limit, WIDGETS), WIDGETS, WIDGETS > limit],
      JSON.stringify(params),
    );
    assert.is(r.body.hits.length, r.body.count);
    assert.is(r.body.max_limit, 100);
  };
  await check({}, 6, false);
  await check({ limit: '0' }, 1, true);
  await check({ limit: '-3' }, 1, true);
  await check({ limit: '1' }, 1, false);
  await check({ limit: '100' }, 100, false);
  await check({ limit: '101' }, 100, true);
  await check({ limit: '100000' }, 100, true);
  await check({ k: '3' }, 3, false);
  await check({ k: '500' }, 100, true);
  await check({ limit: '5', k: '9' }, 5, false);
  await check({ limit: 'abc' }, 6, false);
  // Every hit is distinct.
  const r = await searchFor(s, { q: 'widget', limit: '100' });
  assert.is(new Set(r.body.hits.map((h: { chunk_id: string }) => h.chunk_id)).size, 100);
});

test('refused: q missing, empty or blank, q too long, match neither any nor all', async ({ s }) => {
  const refused: Array<Record<string, string>> = [
    {},
    { q: '' },
    { q: '   ' },
    { q: 'x'.repeat(2001) },
    { q: 'payment', match: 'some' },
    { q: 'payment', match: 'ALL' },
  ];
  for (const params of refused) {
    const r = await searchFor(s, params);
    assert.is(r.status, 400, JSON.stringify(params).slice(0, 80));
    assert.is(r.body.error, 'validation_failed');
    assert.type(r.body.message, 'string');
  }
  assert.is((await searchFor(s, { q: 'x'.repeat(2000) })).status, 200);
  assert.is((await searchFor(s, { q: 'payment', match: '' })).body.match_mode, 'any');
});

test('any text is a safe query: tsquery syntax, quotes, backslashes and odd characters never fail', async ({ s }) => {
  const texts = [
    '!',
    '&',
    '|',
    '&&',
    '||',
    '!!payment',
    'payment & rollback',
    'payment | ledger',
    '!payment',
    'payment:*',
    'pay:*',
    'payment:A',
    '(payment',
    'payment)',
    '()',
    '<->',
    'payment <-> service',
    'payment <2> service',
    "'",
    "''",
    "payment'",
    "'payment'",
    '"payment"',
    '\\',
    '\\\\',
    'payment\\',
    '\\x00',
    ':',
    '::',
    '*',
    '-payment',
    '+payment',
    'NOT payment',
    'payment OR ledger',
    '%',
    '_',
    '%_%',
    "'; DROP TABLE estate_chunks; --",
    '💥 payment 💥',
    'ｐａｙｍｅｎｔ',
    'пейм',
    '支付',
    'x\u2028\u2029y',
    '\t\npayment\r\n',
    'a-b-c-d',
    'foo-bar',
    'http://example.com/payment?x=1&y=2',
    '1e309',
    '-1',
    'NaN',
    '{"q": 1}',
    '[payment]',
    '<b>payment</b>',
    'payment\u200bservice',
    `${'payment '.repeat(250)}`.slice(0, 2000),
  ];
  for (const q of texts) {
    for (const match of ['any', 'all']) {
      const r = await searchFor(s, { q, match });
      assert.is(r.status, 200, `${JSON.stringify(q)} ${match}: ${r.status} ${r.text.slice(0, 200)}`);
      assert.is(r.body.query, q);
      assert.is(r.body.count, r.body.hits.length);
    }
  }
  // Operators are just text: `!payment` still finds payment, `payment & rollback` with any is an OR.
  assert.is((await searchFor(s, { q: '!payment' })).body.total_matches, 3);
  assert.is((await searchFor(s, { q: 'payment & rollback' })).body.total_matches, 3);
  assert.is((await searchFor(s, { q: 'payment:*' })).body.total_matches, 3);
});

test('the index follows the documents: updated content replaces the old, deleted content goes', async ({ s }) => {
  const path = 'runbooks/zebra.md';
  assert.is(
    (await ingest(s, [{ source_repo: 'infra', path, content: 'The zebra crossing procedure.' }])).body.status,
    'ok',
  );
  assert.is((await searchFor(s, { q: 'zebra' })).body.total_matches, 1);
  assert.equal(
    (await ingest(s, [{ source_repo: 'infra', path, content: 'The giraffe procedure.' }])).body.results[0].status,
    'updated',
  );
  assert.is((await searchFor(s, { q: 'zebra' })).body.total_matches, 0);
  assert.is((await searchFor(s, { q: 'giraffe' })).body.total_matches, 1);
  const del = await http(`${s.orch}/api/v1/knowledge/doc/${documentIdOf('infra', path)}`, {
    method: 'DELETE',
    headers: admin,
  });
  assert.is(del.status, 204);
  assert.is((await searchFor(s, { q: 'giraffe' })).body.total_matches, 0);
  // Back again after the delete: found again.
  await ingest(s, [{ source_repo: 'infra', path, content: 'The zebra returns.' }]);
  const back = await searchFor(s, { q: 'zebra' });
  assert.equal([back.body.total_matches, back.body.hits[0].content], [1, 'The zebra returns.']);
});

test('searching needs a key, any role', async ({ s, readonly }) => {
  assert.is((await searchFor(s, { q: 'payment' }, { 'X-API-Key': readonly.apiKey })).status, 200);
  const anonymous = await searchFor(s, { q: 'payment' }, {});
  assert.is(anonymous.status, 401);
  assert.is(anonymous.body.message, 'missing X-API-Key header');
  assert.is((await searchFor(s, { q: 'payment' }, { 'X-API-Key': 'orch_wrong' })).status, 401);
});

test.run();
