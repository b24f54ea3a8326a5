// The Estate knowledge and Conversations pages in a real browser against the real orchestration
// service, seeded through the API. Estate: search with scope, match any/all, a clamped limit and
// a truncated result ("showing N of M"), each checked against the API; snippets whose text holds
// markup show it as text, with the matched words in <mark>; a folder ingest (a directory given to
// the folder picker) with an empty file and an over-long one failing on the server and a binary
// one skipped in the browser, the results per document, the run and its failures in the runs
// list, the corpus counts after; a document's chunks in order and its deletion after a
// confirmation; a readonly account sees no write control. Conversations (admin): the list and a
// conversation's messages oldest first, as the API has them; a non-admin gets "needs admin".
// axe on every page and the open dialog, light and dark; screenshots; the request recorder.

import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createAccount, type Account } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';
import {
  axeClean,
  closeSuite,
  disallowed,
  focusOn,
  h1,
  launchBrowser,
  nav,
  screenshots,
  setUp,
  signedIn,
  writesWithoutCsrf,
  type Recorded,
} from './support.ts';

const ADMIN_KEY = 'orch_browser-estate-admin-key-0000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const HOSTILE = 'The deploy guide mentions <script>alert(1)</script> and <img src=x onerror=alert(2)> as text.';

interface Ctx {
  s: TestServices;
  dir: string;
  browser: Browser;
  admin: Account;
  user: Account;
  reader: Account;
  recorded: Recorded[];
  settled: (() => Promise<void>)[];
  hostileId: string;
}
const test = suite<Ctx>('console: estate knowledge and conversations');

test.before(setUp(seed));

async function seed(ctx: Ctx): Promise<void> {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-estate-'));
  ctx.s = await startTestServices('browser_estate', { ADMIN_API_KEY: ADMIN_KEY });
  [ctx.admin, ctx.user, ctx.reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'admin'),
    createAccount(ctx.s, ADMIN_KEY, 'user'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
  // 8 documents say "deploy"; 3 of them also "rollback" (match all); 2 are guides (scope).
  const documents = [
    ...Array.from({ length: 5 }, (_, i) => ({
      source_repo: 'infra',
      path: `runbooks/deploy-${i}.md`,
      content: `How to deploy service ${i} safely, step by step.`,
    })),
    ...Array.from({ length: 2 }, (_, i) => ({
      source_repo: 'infra',
      path: `runbooks/rollback-${i}.md`,
      content: `Deploy went wrong? Rollback plan ${i}.`,
    })),
    { source_repo: 'handbook', path: 'guides/rollback.md', content: 'Guide: deploy, watch, and rollback when needed.' },
    { source_repo: 'handbook', path: 'guides/hostile.md', content: HOSTILE },
    { source_repo: 'handbook', path: 'policies/leave.md', content: 'Holidays are booked a month ahead.' },
  ];
  const stored = await http(`${ctx.s.orch}/api/v1/knowledge/ingest`, { headers: admin, json: { documents } });
  assert.is(stored.status, 200, stored.text);
  assert.is(stored.body.status, 'ok');
  ctx.hostileId = stored.body.results[8].document_id;
  // Conversations: private-chat turns (the local model answers; no provider is configured).
  await http(`${ctx.s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'helpdesk', name: 'Helpdesk', security_tier: 3 },
  });
  const first = await http(`${ctx.s.orch}/api/v1/agent-chat/chat/helpdesk`, {
    json: { message: 'Where is the deploy runbook?' },
    headers: { 'X-API-Key': ctx.user.apiKey },
  });
  assert.is(first.status, 200, first.text);
  const again = await http(`${ctx.s.orch}/api/v1/agent-chat/chat/helpdesk`, {
    json: { message: 'And the <b>rollback</b> plan?', conversation_id: first.body.conversation_id },
    headers: { 'X-API-Key': ctx.user.apiKey },
  });
  assert.is(again.status, 200, again.text);
  assert.is(
    (
      await http(`${ctx.s.orch}/api/v1/agent-chat/chat/helpdesk`, {
        json: { message: 'Another topic' },
        headers: admin,
      })
    ).status,
    200,
  );
  ctx.browser = await launchBrowser();
  ctx.recorded = [];
  ctx.settled = [];
}
test.after(closeSuite);

const api = (ctx: Ctx, p: string) => http(`${ctx.s.orch}/api/v1${p}`, { headers: admin });

async function searchApi(ctx: Ctx, params: Record<string, string>) {
  const r = await api(ctx, `/knowledge/search?${new URLSearchParams(params)}`);
  assert.is(r.status, 200, r.text);
  return r.body as {
    total_matches: number;
    count: number;
    truncated: boolean;
    limit_clamped: boolean;
    limit: number;
    hits: { path: string; snippet: string; score: number; source_repo: string; category: string }[];
  };
}

/** Fill the search form and send it; the summary line once it shows `summary`; the hits' paths. */
async function search(
  page: Page,
  form: { q: string; scope?: string; match?: 'any' | 'all'; limit?: string },
  summary: string,
): Promise<string[]> {
  await page.getByLabel('Search for').fill(form.q);
  await page.getByLabel('Scope').selectOption(form.scope ?? '');
  await page.getByLabel('Match').selectOption(form.match ?? 'any');
  await page.getByLabel('Hits at most').fill(form.limit ?? '');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.locator('.search-summary').getByText(summary, { exact: true }).waitFor();
  return page.locator('ol.hits > li > a').allTextContents();
}

test('search: scope, match any and all, a truncated result and a clamped limit, each as the API answers', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.user);
  await nav(page).getByRole('link', { name: 'Estate knowledge' }).click();
  await h1(page, 'Estate knowledge');
  await page.locator('#estate-scope option', { hasText: 'Category: guides' }).waitFor({ state: 'attached' });

  const any = await searchApi(ctx, { q: 'deploy rollback', match: 'any', limit: '100' });
  assert.is(any.total_matches, 9);
  assert.equal(
    await search(page, { q: 'deploy rollback', match: 'any', limit: '100' }, '9 matches.'),
    any.hits.map((h) => h.path),
  );
  const all = await searchApi(ctx, { q: 'deploy rollback', match: 'all', limit: '100' });
  assert.is(all.total_matches, 3);
  assert.equal(
    await search(page, { q: 'deploy rollback', match: 'all', limit: '100' }, '3 matches.'),
    all.hits.map((h) => h.path),
  );
  const scoped = await searchApi(ctx, { q: 'deploy', scope: 'guides' });
  assert.equal(
    scoped.hits.map((h) => h.category),
    ['guides', 'guides'],
  );
  assert.equal(
    await search(page, { q: 'deploy', scope: 'guides' }, '2 matches.'),
    scoped.hits.map((h) => h.path),
  );
  // Truncated: 2 of 9.
  const two = await searchApi(ctx, { q: 'deploy rollback', limit: '2' });
  assert.equal([two.truncated, two.count, two.total_matches], [true, 2, 9]);
  assert.equal(
    await search(page, { q: 'deploy rollback', limit: '2' }, 'Showing 2 of 9 matches.'),
    two.hits.map((h) => h.path),
  );
  // Each hit: path, source repository, category and score, as the API has them.
  const first = page.locator('ol.hits > li').first();
  assert.match(
    (await first.textContent()) ?? '',
    `${two.hits[0]!.source_repo} · ${two.hits[0]!.category} score ${two.hits[0]!.score.toFixed(3)}`,
  );
  // Clamped: the server keeps 1-100 and says so.
  const clamped = await searchApi(ctx, { q: 'deploy', limit: '500' });
  assert.equal([clamped.limit_clamped, clamped.limit], [true, 100]);
  await search(
    page,
    { q: 'deploy', limit: '500' },
    '9 matches. The limit was clamped to 100 (the server returns 1 to 100).',
  );
  // A client check: the limit is a whole number.
  await page.getByLabel('Hits at most').fill('ten');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  assert.is(await focusOn(page, 'estate-limit'), 'estate-limit');
  assert.match((await page.locator('#estate-limit-error').textContent()) ?? '', /whole number/);
  await axeClean(page, 'estate (search)');
  await screenshots(page, 'estate');
  await context.close();
});

test('snippets: markup in a document is shown as text, the matched words in <mark>, nothing run', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.user);
  const alerts: string[] = [];
  page.on('dialog', (d) => {
    alerts.push(d.message());
    void d.dismiss();
  });
  await page.goto('/estate');
  await h1(page, 'Estate knowledge');
  const expected = (await searchApi(ctx, { q: 'mentions', scope: 'guides' })).hits[0]!;
  assert.match(expected.snippet, '<img src=x onerror=alert(2)>', "the server's snippet carries the markup");
  await search(page, { q: 'mentions', scope: 'guides' }, '1 match.');
  const snippet = page.locator('ol.hits .snippet').first();
  assert.is(await snippet.textContent(), expected.snippet.replaceAll('**', ''), 'the snippet as text, markers gone');
  assert.equal(await snippet.locator('mark').allTextContents(), ['mentions']);
  assert.is(await snippet.locator('*:not(mark)').count(), 0, 'no element but <mark> in a snippet');
  assert.is(await page.locator('main img, main script').count(), 0);
  // The document's page shows its chunk as text too.
  await page.locator('ol.hits a').first().click();
  await h1(page, 'guides/hostile.md');
  assert.is(await page.locator('ol.chunks pre').first().textContent(), HOSTILE);
  assert.is(await page.locator('main img, main script').count(), 0);
  assert.equal(alerts, [], 'nothing ran');
  await context.close();
});

test('folder ingest: batches with a result per document; failures on the server and a skipped binary; the run and the corpus after', async (ctx) => {
  const folder = path.join(ctx.dir, 'upload-estate');
  await mkdir(path.join(folder, 'runbooks'), { recursive: true });
  await mkdir(path.join(folder, 'notes'), { recursive: true });
  await mkdir(path.join(folder, 'assets'), { recursive: true });
  await writeFile(path.join(folder, 'runbooks', 'uploaded.md'), 'Uploaded runbook: deploy the uploader.');
  await writeFile(path.join(folder, 'notes', 'meeting.md'), 'Uploaded meeting notes about rollback drills.');
  await writeFile(path.join(folder, 'notes', 'empty.md'), '');
  await writeFile(path.join(folder, 'notes', 'huge.md'), 'x'.repeat(500_001));
  await writeFile(
    path.join(folder, 'assets', 'logo.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
  );
  const before = (await api(ctx, '/knowledge/corpus')).body;

  const { context, page } = await signedIn(ctx, ctx.user);
  await page.goto('/estate');
  await h1(page, 'Estate knowledge');
  await page.getByLabel('Folder', { exact: true }).setInputFiles(folder);
  assert.is(await page.getByLabel('Source repository').inputValue(), 'upload-estate', "the folder's name by default");
  await page.getByLabel('Source repository').fill('uploads');
  await page.getByRole('button', { name: 'Ingest', exact: true }).click();
  await page.locator('#ingest-progress').getByText('Ingest finished: 2 stored, 2 failed, 1 skipped.').waitFor();
  const rows = await page
    .locator('#ingest-results tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-path'),
        tr.getAttribute('data-status'),
        tr.querySelector('td:last-child')?.textContent ?? '',
      ]),
    );
  const byPath = Object.fromEntries(rows.map(([p, status, why]) => [p, [status, why]]));
  assert.equal(Object.keys(byPath).sort(), [
    'assets/logo.png',
    'notes/empty.md',
    'notes/huge.md',
    'notes/meeting.md',
    'runbooks/uploaded.md',
  ]);
  assert.equal(byPath['runbooks/uploaded.md']![0], 'created');
  assert.equal(byPath['notes/meeting.md']![0], 'created');
  assert.equal(byPath['notes/empty.md']![0], 'failed');
  assert.equal(byPath['notes/huge.md']![0], 'failed');
  assert.match(byPath['notes/huge.md']![1]!, /^content_too_long: /);
  assert.equal(byPath['assets/logo.png'], ['skipped', 'not text (binary or not UTF-8)']);
  assert.match(
    (await page.locator('#ingest-results caption').textContent()) ?? '',
    '2 created, 0 updated, 0 unchanged, 2 failed, 1 skipped',
  );

  // The API: the documents under their relative paths, the run with its two failures.
  const paths = (await api(ctx, '/knowledge/corpus/paths?source_repo=uploads')).body.paths
    .map((p: { path: string }) => p.path)
    .sort();
  assert.equal(paths, ['notes/meeting.md', 'runbooks/uploaded.md']);
  const status = (await api(ctx, '/knowledge/ingest/status')).body;
  const run = status.runs[0];
  assert.equal(
    [run.status, run.documents_submitted, run.documents_succeeded, run.documents_failed],
    ['partial', 4, 2, 2],
  );
  assert.is(status.last_incomplete_run, run.run_id);
  assert.equal(run.errors.map((e: { path: string }) => e.path).sort(), ['notes/empty.md', 'notes/huge.md']);
  // The runs list shows it, marked, with its failures per path.
  const shownRun = page.locator(`#runs tr[data-run="${run.run_id}"]`);
  await shownRun.waitFor();
  assert.match((await shownRun.locator('td').nth(1).textContent()) ?? '', 'partial (latest incomplete)');
  const failures = await shownRun.locator('.run-errors li').allTextContents();
  assert.equal(failures.map((f) => f.split(':')[0]).sort(), ['notes/empty.md', 'notes/huge.md']);
  assert.ok(failures.some((f) => f.startsWith('notes/huge.md: content_too_long')));
  // The corpus after: two more documents, a new source repository, the counts as the API has them.
  const after = (await api(ctx, '/knowledge/corpus')).body;
  assert.is(after.documents, before.documents + 2);
  await page
    .getByTestId('corpus-totals')
    .getByText(new RegExp(`^${after.documents} documents, ${after.chunks} chunks`))
    .waitFor();
  const uploads = after.by_source_repo.find((g: { key: string }) => g.key === 'uploads');
  assert.equal(
    await page
      .locator('#corpus-by-repo tr[data-key="uploads"] td')
      .allTextContents()
      .then((t) => t.slice(0, 2)),
    [String(uploads.documents), String(uploads.chunks)],
  );
  const notes = after.by_category.find((g: { key: string }) => g.key === 'notes');
  assert.equal(
    await page
      .locator('#corpus-by-category tr[data-key="notes"] td')
      .allTextContents()
      .then((t) => t.slice(0, 2)),
    [String(notes.documents), String(notes.chunks)],
  );
  await axeClean(page, 'estate (after an ingest)');
  await screenshots(page, 'estate-ingested');

  // The plain multiple-file picker: each file's path is its name, under the path given.
  await page.getByLabel('Or files').setInputFiles([path.join(folder, 'runbooks', 'uploaded.md')]);
  await page.getByLabel('Under the path').fill('/handouts/');
  await page.getByRole('button', { name: 'Ingest', exact: true }).click();
  await page.locator('#ingest-progress').getByText('Ingest finished: 1 stored, 0 failed, 0 skipped.').waitFor();
  assert.equal(
    await page
      .locator('#ingest-results tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-path'), tr.getAttribute('data-status')])),
    [['handouts/uploaded.md', 'created']],
  );
  const handout = (await api(ctx, '/knowledge/docs?category=handouts')).body.documents;
  assert.equal(
    handout.map((d: { path: string; source_repo: string }) => [d.source_repo, d.path]),
    [['uploads', 'handouts/uploaded.md']],
  );
  await context.close();
});

test("documents: a category filter, a document's chunks in order, deletion after a confirmation", async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.user);
  await page.goto('/estate');
  await h1(page, 'Estate knowledge');
  await page.locator('#docs-category option', { hasText: /^guides$/ }).waitFor({ state: 'attached' });
  await page.getByLabel('Category').selectOption('guides');
  const guides = (await api(ctx, '/knowledge/docs?category=guides')).body.documents;
  await page.getByRole('status').getByText(`${guides.length} documents in “guides”.`).waitFor();
  assert.equal(
    await page.locator('tr[data-doc] th a').allTextContents(),
    guides.map((d: { path: string }) => d.path),
  );
  const target = guides.find((d: { path: string }) => d.path === 'guides/rollback.md');
  await page.getByRole('link', { name: 'guides/rollback.md' }).click();
  await h1(page, 'guides/rollback.md');
  const detail = (await api(ctx, `/knowledge/doc/${target.id}`)).body;
  assert.equal(
    await page.locator('ol.chunks pre').allTextContents(),
    detail.chunks.map((c: { content: string }) => c.content),
  );
  assert.equal(
    await page.locator('ol.chunks > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-chunk'))),
    detail.chunks.map((c: { chunk_index: number }) => String(c.chunk_index)),
  );
  await axeClean(page, 'estate document');
  await screenshots(page, 'estate-document');

  await page.getByRole('button', { name: 'Delete document' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete this document?' });
  await dialog.waitFor();
  assert.is(await focusOn(page, 'Keep it', 'text'), 'Keep it', 'the safe answer has the focus');
  await axeClean(page, 'estate document (delete dialog)');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.is((await api(ctx, `/knowledge/doc/${target.id}`)).status, 200, 'Escape deletes nothing');
  await page.getByRole('button', { name: 'Delete document' }).click();
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await h1(page, 'Estate knowledge');
  assert.is((await api(ctx, `/knowledge/doc/${target.id}`)).status, 404);
  assert.is(await page.locator(`tr[data-doc="${target.id}"]`).count(), 0);
  await page.goto(`/estate/docs/${target.id}`);
  await h1(page, 'No such document');
  await context.close();
});

test('a readonly account reads the estate and a document with no write control', async (ctx) => {
  const { context, page } = await signedIn(ctx, ctx.reader);
  await nav(page).getByRole('link', { name: 'Estate knowledge' }).click();
  await h1(page, 'Estate knowledge');
  await page.locator('#runs').waitFor();
  assert.is(await page.getByRole('heading', { name: 'Ingest from a folder' }).count(), 0);
  assert.is(await page.locator('input[type="file"]').count(), 0);
  const total = (await searchApi(ctx, { q: 'deploy', limit: '100' })).total_matches;
  await search(page, { q: 'deploy', limit: '100' }, `${total} matches.`);
  await page.goto(`/estate/docs/${ctx.hostileId}`);
  await h1(page, 'guides/hostile.md');
  assert.is(await page.getByRole('button', { name: 'Delete document' }).count(), 0);
  assert.is(await nav(page).getByRole('link', { name: 'Conversations' }).count(), 0);
  await axeClean(page, 'estate document (readonly)');
  await page.goto('/conversations');
  await h1(page, 'Needs admin');
  assert.ok((await page.getByRole('alert').textContent())?.includes('admin role required'));
  await context.close();
});

test("conversations: the recent ones and a conversation's messages oldest first, as the API has them", async (ctx) => {
  const list = (await api(ctx, '/agent-chat/conversations')).body as {
    id: string;
    profile_slug: string;
    kind: string;
    message_count: number;
  }[];
  assert.ok(list.length >= 2);
  const { context, page } = await signedIn(ctx, ctx.admin);
  await nav(page).getByRole('link', { name: 'Conversations' }).click();
  await h1(page, 'Conversations');
  await page.locator('tr[data-conversation]').first().waitFor();
  const shown = await page
    .locator('tr[data-conversation]')
    .evaluateAll((trs) =>
      trs.map((tr) => [
        tr.getAttribute('data-conversation'),
        ...[...tr.querySelectorAll('td')].slice(0, 3).map((td) => td.textContent),
      ]),
    );
  assert.equal(
    shown,
    list.map((c) => [c.id, c.profile_slug, c.kind, String(c.message_count)]),
  );
  await axeClean(page, 'conversations');
  await screenshots(page, 'conversations');
  const chosen = list.find((c) => c.message_count === 4)!;
  await page.locator(`tr[data-conversation="${chosen.id}"] a`).click();
  await h1(page, `Conversation ${chosen.id.slice(0, 8)}`);
  const messages = (await api(ctx, `/agent-chat/conversations/${chosen.id}/messages`)).body as {
    role: string;
    content: string;
  }[];
  await page.locator('ol.messages > li').first().waitFor();
  assert.equal(
    await page.locator('ol.messages > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-role'))),
    messages.map((m) => m.role),
  );
  assert.equal(
    await page.locator('ol.messages .message-text').allTextContents(),
    messages.map((m) => m.content),
  );
  assert.is(messages[2]!.content, 'And the <b>rollback</b> plan?');
  assert.is(await page.locator('ol.messages b').count(), 0, 'a message is text');
  await axeClean(page, 'conversation');
  await screenshots(page, 'conversation');
  await page.getByRole('link', { name: 'Back to conversations' }).click();
  await h1(page, 'Conversations');
  await context.close();
});

test('the pages asked only for /auth/* and the /api/* mirrors, every write with its CSRF token', async (ctx) => {
  for (const settle of ctx.settled) await settle();
  for (const p of [
    '/api/knowledge/search?',
    '/api/knowledge/corpus',
    '/api/knowledge/docs',
    '/api/knowledge/doc/',
    '/api/knowledge/ingest/status',
    '/api/agent-chat/conversations',
  ]) {
    assert.ok(
      ctx.recorded.some((r) => r.path.startsWith(p)),
      p,
    );
  }
  assert.ok(ctx.recorded.some((r) => r.method === 'POST' && r.path === '/api/knowledge/ingest'));
  assert.ok(ctx.recorded.some((r) => r.method === 'DELETE' && r.path.startsWith('/api/knowledge/doc/')));
  assert.equal(disallowed(ctx.recorded), []);
  assert.equal(writesWithoutCsrf(ctx.recorded), []);
});

test.run();
