// Bot knowledge through HTTP (in-process): snippets and their limits, the first snippet turning
// knowledge search on, listing and its literal title filter, cross-bot isolation, who may read
// and write. The ranked search: search.test.ts.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAccount, type Account } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_knowledge-admin-key-00000000000000';
const RUNNER_KEY = 'orch_knowledge-runner-key-0000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const SNIPPET_KEYS = ['id', 'profile_id', 'title', 'content', 'source', 'metadata', 'created_at', 'updated_at'];

interface Ctx {
  s: TestServices;
  bot: string;
  other: string;
  user: Account;
  readonly: Account;
}
const test = suite<Ctx>('knowledge: routes');

const newProfile = async (s: TestServices, slug: string) => {
  const r = await http(`${s.orch}/api/v1/agent-chat/profiles`, { headers: admin, json: { slug, name: slug } });
  assert.is(r.status, 201, r.text);
  return r.body.id as string;
};

test.before(async (ctx) => {
  // The admin key comes from a file so the runner may register (a literal admin key refuses it).
  const { mkdtemp, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-knowledge-'));
  await writeFile(path.join(dir, 'admin.key'), ADMIN_KEY);
  ctx.s = await startTestApps('knowledge_routes', {
    ADMIN_API_KEY_FILE: path.join(dir, 'admin.key'),
    ORCH_RUNNER_API_KEY: RUNNER_KEY,
  });
  ctx.bot = await newProfile(ctx.s, 'kb-bot');
  ctx.other = await newProfile(ctx.s, 'kb-other');
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user');
  ctx.readonly = await createAccount(ctx.s, ADMIN_KEY, 'readonly');
});
test.after(async ({ s }) => s?.close());

const kb = (s: TestServices, profileId: string, rest = '') => `${s.orch}/api/v1/bots/${profileId}/knowledge${rest}`;
const add = (s: TestServices, profileId: string, json: unknown, headers: Record<string, string> = admin) =>
  http(kb(s, profileId), { headers, json });
const eventCount = async (s: TestServices) =>
  Number((await s.db.pool.query('SELECT count(*) FROM events')).rows[0].count);
const profile = async (s: TestServices, slug: string) =>
  (await http(`${s.orch}/api/v1/agent-chat/profiles/${slug}`, { headers: admin })).body;

test('POST 201 with the row; the first snippet turns knowledge_search_enabled on at once, by an event', async ({
  s,
  bot,
}) => {
  assert.is((await profile(s, 'kb-bot')).knowledge_search_enabled, false);
  const r = await add(s, bot, { title: 'Opening hours', content: 'We are open nine to five, Monday to Friday.' });
  assert.is(r.status, 201, r.text);
  assert.equal(Object.keys(r.body), SNIPPET_KEYS);
  assert.match(r.body.id, /^[0-9a-f-]{36}$/);
  assert.is(r.body.profile_id, bot);
  assert.is(r.body.source, null);
  assert.is(r.body.metadata, null);
  assert.is(r.body.created_at, r.body.updated_at);
  assert.is((await profile(s, 'kb-bot')).knowledge_search_enabled, true);
  const full = await add(s, bot, {
    title: 'Refunds',
    content: 'Refunds within 30 days.',
    source: 'policy.pdf p3',
    metadata: { lang: 'en', tags: ['billing'] },
  });
  assert.is(full.status, 201);
  assert.is(full.body.source, 'policy.pdf p3');
  assert.equal(full.body.metadata, { lang: 'en', tags: ['billing'] });
  const { rows } = await s.db.pool.query(
    `SELECT stream_id, revision FROM events WHERE type = 'ProfileKnowledgeSearchEnabled'`,
  );
  assert.is(rows.length, 1, 'only the first snippet turns it on');
  assert.is(rows[0].stream_id, 'orch.agent_profile-kb-bot');
});

test('after an admin turns knowledge search off, later snippets leave it off', async ({ s }) => {
  const id = await newProfile(s, 'kb-flag');
  assert.is((await add(s, id, { title: 't', content: 'c' })).status, 201);
  await http(`${s.orch}/api/v1/agent-chat/profiles/kb-flag`, {
    method: 'PUT',
    headers: admin,
    json: { knowledge_search_enabled: false },
  });
  assert.is((await add(s, id, { title: 't2', content: 'c2' })).status, 201);
  assert.is((await profile(s, 'kb-flag')).knowledge_search_enabled, false);
});

test('POST validation: lengths in characters (code points), strict fields, JSON types; nothing is written', async ({
  s,
  bot,
}) => {
  // 200 and 4000 emoji are 400 and 8000 UTF-16 units, and 800 and 16000 bytes: still within the limits.
  const emojiTitle = '😀'.repeat(200);
  const ok = await add(s, bot, { title: emojiTitle, content: '文'.repeat(4000) });
  assert.is(ok.status, 201, ok.text);
  assert.is(ok.body.title, emojiTitle);
  const before = await eventCount(s);
  const bad: [string, unknown][] = [
    ['no title', { content: 'x' }],
    ['no content', { title: 'x' }],
    ['empty title', { title: '', content: 'x' }],
    ['empty content', { title: 'x', content: '' }],
    ['201 characters', { title: '😀'.repeat(201), content: 'x' }],
    ['4001 characters', { title: 'x', content: 'a'.repeat(4001) }],
    ['unknown field', { title: 'x', content: 'y', tags: [] }],
    ['metadata array', { title: 'x', content: 'y', metadata: [1, 2] }],
    ['metadata text', { title: 'x', content: 'y', metadata: 'z' }],
    ['source number', { title: 'x', content: 'y', source: 7 }],
    ['title number', { title: 5, content: 'y' }],
    ['metadata over 64 KiB', { title: 'x', content: 'y', metadata: { blob: 'z'.repeat(64 * 1024) } }],
  ];
  for (const [what, body] of bad) {
    const r = await add(s, bot, body);
    assert.is(r.status, 400, `${what}: ${r.text}`);
    assert.is(r.body.error, 'validation_failed');
  }
  assert.match((await add(s, bot, { title: 'x', content: 'y', tags: [] })).body.message, /tags/);
  assert.is(await eventCount(s), before);
});

test('unknown or malformed profile ids are 404 profile_not_found on every route', async ({ s, bot }) => {
  const snippet = (await http(kb(s, bot), { headers: admin })).body[0].id;
  for (const id of ['7d1c3f62-0000-4000-8000-000000000000', 'not-a-uuid', 'kb-bot']) {
    const calls: [string, string, unknown?][] = [
      ['GET', ''],
      ['POST', '', { title: 't', content: 'c' }],
      ['GET', '/search?q=hours'],
      ['GET', `/${snippet}`],
      ['PATCH', `/${snippet}`, { title: 'x' }],
      ['DELETE', `/${snippet}`],
    ];
    for (const [method, rest, json] of calls) {
      const r = await http(kb(s, id, rest), { method, headers: admin, json });
      assert.is(r.status, 404, `${method} ${id}${rest}: ${r.text}`);
      assert.is(r.body.error, 'profile_not_found');
    }
  }
});

test('GET list: a bare array, newest first', async ({ s }) => {
  const id = await newProfile(s, 'kb-order');
  for (const title of ['first', 'second', 'third']) {
    assert.is((await add(s, id, { title, content: 'x' })).status, 201);
    s.clock.advance(1000);
  }
  const r = await http(kb(s, id), { headers: admin });
  assert.is(r.status, 200);
  assert.equal(
    r.body.map((k: { title: string }) => k.title),
    ['third', 'second', 'first'],
  );
  for (const k of r.body) assert.equal(Object.keys(k), SNIPPET_KEYS);
  assert.equal((await http(kb(s, await newProfile(s, 'kb-empty')), { headers: admin })).body, []);
});

test('title_contains: case-insensitive, a literal substring (% and _ are no wildcards)', async ({ s }) => {
  const id = await newProfile(s, 'kb-filter');
  for (const title of ['100% Uptime', 'a_b rule', 'axb rule', 'Plain title', 'ÉTÉ schedule'])
    assert.is((await add(s, id, { title, content: 'x' })).status, 201);
  const titles = async (filter: string) =>
    (await http(kb(s, id, `?title_contains=${encodeURIComponent(filter)}`), { headers: admin })).body
      .map((k: { title: string }) => k.title)
      .sort();
  assert.equal(await titles('uptime'), ['100% Uptime']);
  assert.equal(await titles('UPTIME'), ['100% Uptime']);
  assert.equal(await titles('%'), ['100% Uptime']);
  assert.equal(await titles('_'), ['a_b rule']);
  assert.equal(await titles('a_b'), ['a_b rule']);
  assert.equal(await titles('rule'), ['a_b rule', 'axb rule']);
  assert.equal(await titles('nothing'), []);
  assert.equal(await titles(''), ['100% Uptime', 'Plain title', 'a_b rule', 'axb rule', 'ÉTÉ schedule']);
  assert.equal(await titles("'; DROP TABLE knowledge_snippets; --"), []);
  // Unknown query parameters are dropped.
  assert.is((await http(kb(s, id, '?nonsense=1'), { headers: admin })).body.length, 5);
});

test("GET, PATCH and DELETE of another bot's snippet are 404, and change nothing", async ({ s, bot, other }) => {
  const mine = (await add(s, other, { title: 'Other bot', content: 'secret of the other bot' })).body;
  const before = await eventCount(s);
  for (const [method, json] of [['GET'], ['PATCH', { title: 'hijacked' }], ['DELETE']] as const) {
    const r = await http(kb(s, bot, `/${mine.id}`), { method, headers: admin, json });
    assert.is(r.status, 404, method);
    assert.is(r.body.error, 'snippet_not_found');
  }
  for (const id of ['00000000-0000-4000-8000-00000000dead', 'nope']) {
    assert.is((await http(kb(s, bot, `/${id}`), { headers: admin })).status, 404);
  }
  assert.is(await eventCount(s), before);
  assert.equal((await http(kb(s, other, `/${mine.id}`), { headers: admin })).body, mine);
});

test('PATCH changes any subset; omitted fields stay; null clears source and metadata', async ({ s, bot }) => {
  const made = (
    await add(s, bot, { title: 'Shipping', content: 'Ships in 2 days.', source: 'faq', metadata: { v: 1 } })
  ).body;
  s.clock.advance(5000);
  const title = await http(kb(s, bot, `/${made.id}`), {
    method: 'PATCH',
    headers: admin,
    json: { title: 'Shipping times' },
  });
  assert.is(title.status, 200, title.text);
  assert.equal(title.body, { ...made, title: 'Shipping times', updated_at: title.body.updated_at });
  assert.ok(title.body.updated_at > made.updated_at);
  const rest = await http(kb(s, bot, `/${made.id}`), {
    method: 'PATCH',
    headers: admin,
    json: { content: 'Ships in 3 days.', metadata: { v: 2, x: [true] } },
  });
  assert.equal(rest.body, {
    ...title.body,
    content: 'Ships in 3 days.',
    metadata: { v: 2, x: [true] },
    updated_at: rest.body.updated_at,
  });
  const cleared = await http(kb(s, bot, `/${made.id}`), {
    method: 'PATCH',
    headers: admin,
    json: { source: null, metadata: null },
  });
  assert.is(cleared.body.source, null);
  assert.is(cleared.body.metadata, null);
  assert.is(cleared.body.title, 'Shipping times');
  const before = await eventCount(s);
  const nothing = await http(kb(s, bot, `/${made.id}`), { method: 'PATCH', headers: admin, json: {} });
  assert.equal(nothing.body, cleared.body);
  for (const body of [{ title: '' }, { content: 'x'.repeat(4001) }, { tags: 1 }, { id: made.id }, { metadata: [1] }]) {
    const r = await http(kb(s, bot, `/${made.id}`), { method: 'PATCH', headers: admin, json: body });
    assert.is(r.status, 400, JSON.stringify(body));
  }
  assert.is(await eventCount(s), before);
  assert.equal((await http(kb(s, bot, `/${made.id}`), { headers: admin })).body, cleared.body);
});

test('DELETE 204; the snippet is gone (GET, PATCH, a second DELETE: 404)', async ({ s, bot }) => {
  const made = (await add(s, bot, { title: 'Temporary', content: 'Soon gone.' })).body;
  const r = await http(kb(s, bot, `/${made.id}`), { method: 'DELETE', headers: admin });
  assert.is(r.status, 204);
  assert.is(r.text, '');
  for (const [method, json] of [['GET'], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
    assert.is((await http(kb(s, bot, `/${made.id}`), { method, headers: admin, json })).status, 404, method);
  }
  assert.not.ok((await http(kb(s, bot), { headers: admin })).body.some((k: { id: string }) => k.id === made.id));
});

test('reads need a key of any role; writes need an admin (403); anonymous 401', async ({ s, bot, user, readonly }) => {
  const snippet = (await add(s, bot, { title: 'Authz', content: 'who may read' })).body;
  const readers = { user: user.apiKey, readonly: readonly.apiKey, runner: RUNNER_KEY };
  for (const [who, key] of Object.entries(readers)) {
    const headers = { 'X-API-Key': key };
    assert.is((await http(kb(s, bot), { headers })).status, 200, `${who} list`);
    assert.is((await http(kb(s, bot, '/search?q=read'), { headers })).status, 200, `${who} search`);
    assert.is((await http(kb(s, bot, `/${snippet.id}`), { headers })).status, 200, `${who} get`);
    for (const [method, rest, json] of [
      ['POST', '', { title: 't', content: 'c' }],
      ['PATCH', `/${snippet.id}`, { title: 'x' }],
      ['DELETE', `/${snippet.id}`],
    ] as const) {
      const r = await http(kb(s, bot, rest), { method, headers, json });
      assert.is(r.status, 403, `${who} ${method}`);
      assert.equal(r.body, { error: 'forbidden', message: 'admin role required' });
    }
  }
  for (const [method, rest] of [
    ['GET', ''],
    ['GET', '/search?q=x'],
    ['GET', `/${snippet.id}`],
    ['POST', ''],
    ['PATCH', `/${snippet.id}`],
    ['DELETE', `/${snippet.id}`],
  ] as const) {
    const r = await http(kb(s, bot, rest), { method, json: method === 'GET' || method === 'DELETE' ? undefined : {} });
    assert.is(r.status, 401, `anonymous ${method} ${rest}`);
  }
  assert.is((await http(kb(s, bot, `/${snippet.id}`), { headers: admin })).body.title, 'Authz');
});

test.run();
