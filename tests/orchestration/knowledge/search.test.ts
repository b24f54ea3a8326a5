// The ranked knowledge search through HTTP: OR semantics with English stemming, titles above
// content, the relevance floor, the limit's default and clamps, that any text is a safe query,
// and that the route and the grounding retrieval are one function.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { GROUNDING_HITS, SEARCH_FLOOR, searchKnowledge } from '../../../projections/orchestration/knowledge.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_search-admin-key-00000000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };

interface Ctx {
  s: TestServices;
  bot: string;
  many: string;
  other: string;
  ids: Record<string, string>;
}
const test = suite<Ctx>('knowledge: ranked search');

async function newProfile(s: TestServices, slug: string): Promise<string> {
  const r = await http(`${s.orch}/api/v1/agent-chat/profiles`, { headers: admin, json: { slug, name: slug } });
  assert.is(r.status, 201, r.text);
  return r.body.id;
}

async function add(s: TestServices, profileId: string, title: string, content: string): Promise<string> {
  const r = await http(`${s.orch}/api/v1/bots/${profileId}/knowledge`, { headers: admin, json: { title, content } });
  assert.is(r.status, 201, r.text);
  return r.body.id;
}

// 250 distinct filler words: a long snippet in which one mention of a word is a passing one.
const filler = Array.from({ length: 250 }, (_, i) => `filler${i}x`).join(' ');

const SNIPPETS: Record<string, [string, string]> = {
  reset: ['Reset your password', 'Open the self-service portal and choose reset.'],
  vpn: ['VPN setup', 'To connect you need your password and the VPN client.'],
  printer: ['Printer', 'The printer is on floor two, next to the kitchen.'],
  hours: ['Office hours', 'We are open nine to five.'],
  tonerTitle: ['Toner order', 'Ask facilities.'],
  tonerBody: ['Supplies', 'Ask for toner.'],
  handbook: ['Handbook', `${filler} zephyr`],
  zephyrTitle: ['Zephyr', 'Our build server.'],
  zephyrShort: ['Weather', 'A zephyr is a light wind.'],
};

test.before(async (ctx) => {
  ctx.s = await startTestApps('knowledge_search', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.bot = await newProfile(ctx.s, 'search-bot');
  ctx.other = await newProfile(ctx.s, 'search-other');
  ctx.many = await newProfile(ctx.s, 'search-many');
  ctx.ids = {};
  for (const [key, [title, content]] of Object.entries(SNIPPETS))
    ctx.ids[key] = await add(ctx.s, ctx.bot, title, content);
  await add(ctx.s, ctx.other, 'Password of the other bot', 'The other bot also knows about passwords and printers.');
  for (let i = 0; i < 55; i++) await add(ctx.s, ctx.many, `Policy ${i}`, `Policy number ${i} about expenses.`);
});
test.after(async ({ s }) => s?.close());

const search = (s: TestServices, profileId: string, query: string) =>
  http(`${s.orch}/api/v1/bots/${profileId}/knowledge/search?${query}`, { headers: admin });
const q = (text: string) => `q=${encodeURIComponent(text)}`;

test("hits are snippet rows with a numeric score, relevance descending, only this bot's", async ({ s, bot, ids }) => {
  const r = await search(s, bot, q('password'));
  assert.is(r.status, 200);
  assert.equal(
    r.body.map((h: { id: string }) => h.id),
    [ids.reset, ids.vpn],
    'the title hit first',
  );
  for (const h of r.body) {
    assert.equal(Object.keys(h), [
      'id',
      'profile_id',
      'title',
      'content',
      'source',
      'metadata',
      'created_at',
      'updated_at',
      'score',
    ]);
    assert.type(h.score, 'number');
    assert.ok(h.score >= SEARCH_FLOOR);
    assert.is(h.profile_id, bot);
  }
  assert.ok(r.body[0].score > r.body[1].score);
});

test("the query's words are ORed, with English stemming", async ({ s, bot, ids }) => {
  const stemmed = await search(s, bot, q('resetting passwords'));
  assert.equal(stemmed.body.map((h: { id: string }) => h.id).sort(), [ids.reset, ids.vpn].sort());
  assert.is(stemmed.body[0].id, ids.reset, 'two words matched outrank one');
  const either = await search(s, bot, q('printer vpn'));
  assert.equal(either.body.map((h: { id: string }) => h.id).sort(), [ids.printer, ids.vpn].sort());
  assert.equal(
    (await search(s, bot, q('Printers!'))).body.map((h: { id: string }) => h.id),
    [ids.printer],
  );
});

test('a title hit weighs more than the same word in the content', async ({ s, bot, ids }) => {
  const r = await search(s, bot, q('toner'));
  assert.equal(
    r.body.map((h: { id: string }) => h.id),
    [ids.tonerTitle, ids.tonerBody],
  );
  assert.ok(r.body[0].score > r.body[1].score);
});

test("the relevance floor: a single passing mention in a long snippet's content is not returned", async ({
  s,
  bot,
  ids,
}) => {
  const r = await search(s, bot, q('zephyr'));
  const found = r.body.map((h: { id: string }) => h.id);
  assert.ok(found.includes(ids.zephyrTitle));
  assert.ok(found.includes(ids.zephyrShort));
  assert.not.ok(found.includes(ids.handbook), 'below the floor');
  // The handbook does match the word: it is the floor, not the match, that leaves it out.
  const { rows } = await s.db.pool.query(
    `SELECT ts_rank_cd('{0.1,0.2,0.4,1.0}'::real[], search, to_tsquery('english', 'zephyr'), 1) AS score FROM knowledge_snippets WHERE id = $1 AND search @@ to_tsquery('english', 'zephyr')`,
    [ids.handbook],
  );
  assert.is(rows.length, 1);
  assert.ok(rows[0].score > 0 && rows[0].score < SEARCH_FLOOR, `score ${rows[0].score}`);
});

test("scores are ts_rank_cd of the ORed query over each snippet's weighted vector (one word and several)", async ({
  s,
  bot,
}) => {
  for (const [text, tsquery] of [
    ['password', 'password'],
    ['printer vpn toner zephyr', 'printer | vpn | toner | zephyr'],
    ['resetting passwords', 'reset | password'],
  ] as const) {
    const hits = (await search(s, bot, `${q(text)}&limit=50`)).body as { id: string; score: number }[];
    assert.ok(hits.length > 0, text);
    const { rows } = await s.db.pool.query<{ id: string; rank: number }>(
      `SELECT id, ts_rank_cd('{0.1,0.2,0.4,1.0}'::real[], search, to_tsquery('english', $2), 1) AS rank FROM knowledge_snippets
       WHERE profile_id = $1 AND search @@ to_tsquery('english', $2)`,
      [bot, tsquery],
    );
    const expected = rows.filter((r) => r.rank >= SEARCH_FLOOR).sort((a, b) => b.rank - a.rank);
    assert.equal(hits.map((h) => h.id).sort(), expected.map((r) => r.id).sort(), text);
    for (const hit of hits)
      assert.ok(Math.abs(hit.score - rows.find((r) => r.id === hit.id)!.rank) < 1e-5, `${text}: ${hit.score}`);
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score >= hits[i]!.score, 'relevance descending');
  }
});

test('equal scores: the newer snippet first; quotes and backslashes in snippets are indexed like any text', async ({
  s,
}) => {
  const id = await newProfile(s, 'search-ties');
  const older = await add(s, id, 'Gadget', 'Same text.');
  s.clock.advance(1000);
  const newer = await add(s, id, 'Gadget', 'Same text.');
  for (const text of ['gadget', 'gadget text']) {
    assert.equal(
      (await search(s, id, q(text))).body.map((h: { id: string }) => h.id),
      [newer, older],
      text,
    );
  }
  const odd = await add(
    s,
    id,
    'O\'Brien\'s "quoted" notes',
    "Paths like C:\\temp\\x.txt and \\\\server\\share, it's fine; a\\b 'single'.",
  );
  for (const text of ['Brien', 'temp', 'quoted notes', 'C:\\temp\\x.txt']) {
    assert.ok(
      (await search(s, id, q(text))).body.some((h: { id: string }) => h.id === odd),
      text,
    );
  }
});

test('nothing found: an unknown word, or only stop words, is an empty array', async ({ s, bot }) => {
  for (const text of ['xylophone', 'the and of', 'a']) {
    const r = await search(s, bot, q(text));
    assert.is(r.status, 200, text);
    assert.equal(r.body, [], text);
  }
});

test('q missing, empty or blank: 400', async ({ s, bot }) => {
  for (const query of ['', 'q=', 'q=%20%20', 'limit=3', 'q=&limit=2']) {
    const r = await search(s, bot, query);
    assert.is(r.status, 400, query);
    assert.is(r.body.error, 'validation_failed');
  }
});

test('any text is a safe query: operators, quotes, backslashes, unicode, NUL and broken encodings never give a 5xx', async ({
  s,
  bot,
  ids,
}) => {
  const texts = [
    '&|!():*\'"\\',
    "'",
    '\\',
    '"',
    'a & b',
    '!',
    'foo:*',
    '(((',
    ')',
    '<->',
    '<2>',
    'password:*A',
    '!password',
    'password & !vpn',
    "'; DROP TABLE knowledge_snippets; --",
    '日本語 café naïve',
    '😀🔥',
    'مرحبا',
    '\u0000',
    'pass\u0000word',
    '\u0001\u001f',
    ' \t\n ',
    'x'.repeat(10_000),
    'password '.repeat(2_000),
    "'password'",
    "\\'",
    '%',
    '_',
    '$1',
    '::tsquery',
  ];
  for (const text of texts) {
    const r = await search(s, bot, q(text));
    assert.ok(
      r.status === 200 || r.status === 400,
      `${JSON.stringify(text.slice(0, 40))}: ${r.status} ${r.text.slice(0, 200)}`,
    );
    if (r.status === 200) assert.ok(Array.isArray(r.body));
  }
  // Percent-encodings that are not UTF-8, and a lone surrogate.
  for (const raw of ['q=%ED%A0%80', 'q=%FF%FE', 'q=%C0%AF', 'q=%E0%A4%A', 'q=%', 'q=%%%']) {
    const r = await search(s, bot, raw);
    assert.ok(r.status < 500, `${raw}: ${r.status} ${r.text}`);
  }
  // Operators are plain text: the words around them still match.
  assert.ok(
    (await search(s, bot, q('password & !vpn'))).body.some((h: { id: string }) => h.id === ids.vpn),
    '! is not a NOT',
  );
  // A NUL in the query is refused before the route (the path and query check of every service).
  assert.is((await search(s, bot, q('pass\u0000word password'))).status, 400);
  assert.is((await s.db.pool.query('SELECT count(*)::int AS n FROM knowledge_snippets')).rows[0].n > 0, true);
});

test('limit: default 5, clamped to 1-50, never 400', async ({ s, many }) => {
  const count = async (query: string) => {
    const r = await search(s, many, `q=policy&${query}`);
    assert.is(r.status, 200, query);
    return r.body.length;
  };
  assert.is(await count(''), 5);
  assert.is(await count('limit=1'), 1);
  assert.is(await count('limit=7'), 7);
  assert.is(await count('limit=50'), 50);
  assert.is(await count('limit=51'), 50);
  assert.is(await count('limit=1000000'), 50);
  assert.is(await count('limit=0'), 1);
  assert.is(await count('limit=-3'), 1);
  assert.is(await count('limit=abc'), 5);
  assert.is(await count('limit='), 5);
  assert.is(await count('limit=2.9'), 2);
  assert.is(await count('limit=99999999999999999999999'), 50);
  assert.is(await count('limit=2&limit=3'), 2);
  assert.is(await count('unknown=1'), 5);
});

test('edits and deletions reach the search at once', async ({ s, bot, ids }) => {
  const patched = await http(`${s.orch}/api/v1/bots/${bot}/knowledge/${ids.hours}`, {
    method: 'PATCH',
    headers: admin,
    json: { content: 'Open nine to five; the helpdesk answers quokka questions.' },
  });
  assert.is(patched.status, 200);
  assert.equal(
    (await search(s, bot, q('quokka'))).body.map((h: { id: string }) => h.id),
    [ids.hours],
  );
  assert.is(
    (await http(`${s.orch}/api/v1/bots/${bot}/knowledge/${ids.hours}`, { method: 'DELETE', headers: admin })).status,
    204,
  );
  assert.equal((await search(s, bot, q('quokka'))).body, []);
});

test("the route and the chat pipeline's grounding retrieval are one function (top 5)", async ({ s, bot, many }) => {
  assert.is(GROUNDING_HITS, 5);
  for (const [profile, text] of [
    [bot, 'password printer toner zephyr'],
    [many, 'policy expenses'],
    [many, 'policy'],
  ] as const) {
    const route = (await search(s, profile, q(text))).body;
    const direct = await searchKnowledge(s.platform.pool, profile, text, GROUNDING_HITS);
    assert.equal(
      route.map((h: { id: string; score: number }) => [h.id, h.score]),
      direct.map((h) => [h.id, h.score]),
    );
  }
});

test.run();
