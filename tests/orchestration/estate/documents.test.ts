// The corpus and its documents through real HTTP: GET corpus, corpus/paths, docs, doc/{id},
// and DELETE doc/{id}; the vault counted and listed apart.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chunkBounds, chunkTexts } from '../../../domain/orchestration/estate/chunking.ts';
import { documentIdOf } from '../../../domain/orchestration/estate/decider.ts';
import { createAccount, type Account } from '../../support/principals.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';
import { admin, ADMIN_KEY, eventCount, get, ingest, vault } from './helpers.ts';

const test = suite<{ s: TestServices; readonly: Account; user: Account }>('estate corpus and documents');

const LONG = Array.from({ length: 6 }, (_, i) => `## Part ${i}\n\n${`part ${i} words `.repeat(120)}`).join('\n\n');

test.before(async (ctx) => {
  ctx.s = await startTestApps('estate_documents', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.readonly = await createAccount(ctx.s, ADMIN_KEY, 'readonly');
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user');
});
test.after(async ({ s }) => s?.close());

test('an empty corpus', async ({ s }) => {
  const r = await get(s, '/api/v1/knowledge/corpus');
  assert.is(r.status, 200);
  assert.equal(r.body, {
    documents: 0,
    chunks: 0,
    token_estimate: 0,
    vault_documents: 0,
    vault_chunks: 0,
    last_ingest_at: null,
    by_source_repo: [],
    by_category: [],
  });
});

test('corpus: totals, by source repository and by category; the vault counted apart', async ({ s }) => {
  await ingest(s, [
    { source_repo: 'infra', path: 'runbooks/a.md', content: 'aaaa' },
    { source_repo: 'infra', path: 'runbooks/long.md', content: LONG, commit_sha: 'c0ffee' },
    { source_repo: 'handbook', path: 'runbooks/b.md', content: 'bbbb' },
    { source_repo: 'handbook', path: 'people/c.md', content: 'cccc' },
  ]);
  await vault(s, [
    { path: 'customers/x.md', content: 'secret customer notes' },
    { path: 'customers/y.md', content: 'more' },
  ]);
  const longChunks = (await get(s, `/api/v1/knowledge/doc/${documentIdOf('infra', 'runbooks/long.md')}`)).body.chunks
    .length;
  assert.ok(longChunks > 1);
  const r = await get(s, '/api/v1/knowledge/corpus');
  assert.equal(Object.keys(r.body).sort(), [
    'by_category',
    'by_source_repo',
    'chunks',
    'documents',
    'last_ingest_at',
    'token_estimate',
    'vault_chunks',
    'vault_documents',
  ]);
  assert.equal(
    [r.body.documents, r.body.chunks, r.body.vault_documents, r.body.vault_chunks],
    [4, 3 + longChunks, 2, 2],
  );
  assert.is(r.body.token_estimate, Math.ceil((12 + LONG.length) / 4));
  const strip = (groups: Array<{ key: string; documents: number; chunks: number; last_ingest_at: string }>) =>
    groups.map((g) => {
      assert.ok(Date.parse(g.last_ingest_at) <= Date.parse(r.body.last_ingest_at));
      return [g.key, g.documents, g.chunks];
    });
  assert.equal(strip(r.body.by_source_repo), [
    ['handbook', 2, 2],
    ['infra', 2, 1 + longChunks],
  ]);
  assert.equal(strip(r.body.by_category), [
    ['people', 1, 1],
    ['runbooks', 3, 2 + longChunks],
  ]);
  assert.ok(!JSON.stringify(r.body).includes('customers'), 'no vault category in the estate groups');
});

test('corpus/paths: every estate (source_repo, path); one repository; the vault only when asked', async ({ s }) => {
  const all = await get(s, '/api/v1/knowledge/corpus/paths');
  assert.is(all.status, 200);
  assert.equal(
    all.body.paths.map((p: { source_repo: string; path: string }) => `${p.source_repo}:${p.path}`),
    ['handbook:people/c.md', 'handbook:runbooks/b.md', 'infra:runbooks/a.md', 'infra:runbooks/long.md'],
  );
  assert.equal(all.body.paths[0], {
    path: 'people/c.md',
    source_repo: 'handbook',
    document_id: documentIdOf('handbook', 'people/c.md'),
  });
  const infra = await get(s, '/api/v1/knowledge/corpus/paths?source_repo=infra');
  assert.equal(
    infra.body.paths.map((p: { path: string }) => p.path),
    ['runbooks/a.md', 'runbooks/long.md'],
  );
  assert.equal((await get(s, '/api/v1/knowledge/corpus/paths?source_repo=nothing')).body, { paths: [] });
  const v = await get(s, '/api/v1/knowledge/corpus/paths?source_repo=vault');
  assert.equal(
    v.body.paths.map((p: { path: string }) => p.path),
    ['customers/x.md', 'customers/y.md'],
  );
});

test('docs: one row per document with its fields; by category; the vault with scope=vault', async ({ s }) => {
  const r = await get(s, '/api/v1/knowledge/docs');
  assert.is(r.status, 200);
  assert.is(r.body.documents.length, 4);
  const long = r.body.documents.find((d: { path: string }) => d.path === 'runbooks/long.md');
  assert.equal(Object.keys(long).sort(), [
    'category',
    'chunks',
    'commit_sha',
    'id',
    'ingested_at',
    'path',
    'source_repo',
  ]);
  assert.equal(
    { ...long, ingested_at: 't', chunks: 0 },
    {
      id: documentIdOf('infra', 'runbooks/long.md'),
      source_repo: 'infra',
      path: 'runbooks/long.md',
      category: 'runbooks',
      commit_sha: 'c0ffee',
      ingested_at: 't',
      chunks: 0,
    },
  );
  assert.ok(long.chunks > 1);
  assert.ok(!Number.isNaN(Date.parse(long.ingested_at)));
  const people = await get(s, '/api/v1/knowledge/docs?category=people');
  assert.equal(
    people.body.documents.map((d: { path: string }) => d.path),
    ['people/c.md'],
  );
  assert.equal((await get(s, '/api/v1/knowledge/docs?category=none')).body, { documents: [] });
  const v = await get(s, '/api/v1/knowledge/docs?scope=vault');
  assert.equal(
    v.body.documents.map((d: { source_repo: string }) => d.source_repo),
    ['vault', 'vault'],
  );
});

test('doc/{id}: the document and its chunks in order; 404 for an unknown or malformed id', async ({ s }) => {
  const id = documentIdOf('infra', 'runbooks/long.md');
  const r = await get(s, `/api/v1/knowledge/doc/${id}`);
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['chunks', 'document']);
  assert.equal(Object.keys(r.body.document).sort(), [
    'category',
    'chunks',
    'commit_sha',
    'content_chars',
    'content_sha256',
    'id',
    'ingested_at',
    'is_vault',
    'metadata',
    'path',
    'source_repo',
  ]);
  assert.equal(
    [r.body.document.is_vault, r.body.document.content_chars, r.body.document.chunks],
    [false, LONG.length, r.body.chunks.length],
  );
  assert.equal(
    r.body.chunks.map((c: { chunk_index: number }) => c.chunk_index),
    r.body.chunks.map((_: unknown, i: number) => i),
  );
  assert.equal(Object.keys(r.body.chunks[0]).sort(), ['chunk_id', 'chunk_index', 'content']);
  assert.ok(r.body.chunks[0].content.startsWith('## Part 0'));
  assert.ok(r.body.chunks.every((c: { content: string }) => c.content.length <= 2000 && LONG.includes(c.content)));
  const unknown = await get(s, '/api/v1/knowledge/doc/00000000-0000-4000-8000-000000000000');
  assert.equal([unknown.status, unknown.body], [404, { error: 'document_not_found', message: 'no such document' }]);
  // A malformed id is refused by the route (DocIdParam is a UUID) with the same status and code.
  for (const bad of ['not-a-uuid', '1']) {
    const missing = await get(s, `/api/v1/knowledge/doc/${bad}`);
    assert.equal([missing.status, missing.body.error], [404, 'document_not_found'], bad);
  }
});

test('DELETE doc/{id}: 204, the document and its chunks go, an event records it; then 404', async ({ s, user }) => {
  const id = documentIdOf('handbook', 'people/c.md');
  const before = await eventCount(s, 'EstateDocumentDeleted');
  const r = await http(`${s.orch}/api/v1/knowledge/doc/${id}`, {
    method: 'DELETE',
    headers: { 'X-API-Key': user.apiKey },
  });
  assert.is(r.status, 204);
  assert.is(r.text, '');
  assert.is(await eventCount(s, 'EstateDocumentDeleted'), before + 1);
  assert.match(await logText(s), new RegExp(`orch.estate_document-${id} EstateDocumentDeleted`));
  assert.is((await get(s, `/api/v1/knowledge/doc/${id}`)).status, 404);
  const { rows } = await s.db.pool.query('SELECT count(*)::int AS n FROM estate_chunks WHERE document_id = $1', [id]);
  assert.is(rows[0].n, 0);
  const corpus = await get(s, '/api/v1/knowledge/corpus');
  assert.is(corpus.body.documents, 3);
  assert.ok(!corpus.body.by_category.some((g: { key: string }) => g.key === 'people'));
  const again = await http(`${s.orch}/api/v1/knowledge/doc/${id}`, { method: 'DELETE', headers: admin });
  assert.is(again.status, 404);
  assert.is(again.body.error, 'document_not_found');
  assert.is(
    (await http(`${s.orch}/api/v1/knowledge/doc/not-a-uuid`, { method: 'DELETE', headers: admin })).body.error,
    'document_not_found',
  );
  assert.is(await eventCount(s, 'EstateDocumentDeleted'), before + 1);
  // A vault document is deleted the same way.
  const vaultId = documentIdOf('vault', 'customers/y.md');
  assert.is(
    (await http(`${s.orch}/api/v1/knowledge/doc/${vaultId}`, { method: 'DELETE', headers: admin })).status,
    204,
  );
  assert.is((await get(s, '/api/v1/knowledge/corpus')).body.vault_documents, 1);
});

test('reads need a key (any role); deleting needs role user', async ({ s, readonly }) => {
  const ro = { 'X-API-Key': readonly.apiKey };
  for (const path of [
    '/api/v1/knowledge/corpus',
    '/api/v1/knowledge/corpus/paths',
    '/api/v1/knowledge/docs',
    `/api/v1/knowledge/doc/${documentIdOf('infra', 'runbooks/a.md')}`,
  ]) {
    assert.is((await get(s, path, ro)).status, 200, path);
    const anonymous = await get(s, path, {});
    assert.is(anonymous.status, 401, path);
    assert.is(anonymous.body.error, 'unauthorized');
  }
  const before = await eventCount(s);
  const id = documentIdOf('infra', 'runbooks/a.md');
  const denied = await http(`${s.orch}/api/v1/knowledge/doc/${id}`, { method: 'DELETE', headers: ro });
  assert.is(denied.status, 403);
  assert.equal(denied.body, { error: 'insufficient_role', message: 'this action needs role user or higher' });
  assert.is((await http(`${s.orch}/api/v1/knowledge/doc/${id}`, { method: 'DELETE' })).status, 401);
  assert.is(await eventCount(s), before);
  assert.is((await get(s, `/api/v1/knowledge/doc/${id}`)).status, 200);
});

test('chunks are the exact slices of the content in any script: 2-, 3- and 4-byte characters, at chunk edges too', async ({
  s,
}) => {
  // Chunk content is cut from the blob in the database by UTF-8 byte offsets (estate.ts): every
  // width of character, on and around the edges of chunks, read back exactly.
  const words = [
    'naïve',
    'café',
    'Größe',
    '日本語のテキスト',
    'emoji 🧭🚀',
    'é́ combining',
    'plain',
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
    'Ελληνικά',
  ];
  const paragraphs = Array.from({ length: 40 }, (_, p) =>
    Array.from({ length: 30 + (p % 7) * 9 }, (_, w) => words[(p + w) % words.length]).join(' '),
  );
  const content = `# Scripts\n\n${paragraphs.join('\n\n')}\n\n${'🧭'.repeat(1500)}`;
  const r = await ingest(s, [{ source_repo: 'scripts', path: 'runbooks/scripts.md', content }]);
  assert.is(r.body.status, 'ok', r.text);
  const expected = chunkTexts(content, chunkBounds(content).flat());
  assert.ok(expected.length > 5);
  const doc = await get(s, `/api/v1/knowledge/doc/${documentIdOf('scripts', 'runbooks/scripts.md')}`);
  assert.equal(
    doc.body.chunks.map((c: { content: string }) => c.content),
    expected,
  );
});

test.run();
