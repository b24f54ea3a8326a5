// POST /api/v1/knowledge/ingest and /vault, and GET /api/v1/knowledge/ingest/status, through
// real HTTP: every document attempted, failures listed one by one, whole-batch refusals that
// write nothing, unchanged re-ingests, runs.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { documentIdOf } from '../../../domain/orchestration/estate/decider.ts';
import { ingestRunStream } from '../../../domain/orchestration/streams.ts';
import { createAccount, type Account } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { admin, ADMIN_KEY, eventCount, get, ingest, vault } from './helpers.ts';

const test = suite<{ s: TestServices; readonly: Account; user: Account }>('estate ingest and runs');
test.before(async (ctx) => {
  ctx.s = await startTestApps('estate_ingest', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.readonly = await createAccount(ctx.s, ADMIN_KEY, 'readonly');
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user');
});
test.after(async ({ s }) => s?.close());

const RESPONSE_KEYS = [
  'documents',
  'failed',
  'failures',
  'results',
  'run_id',
  'run_recorded',
  'status',
  'submitted',
  'total_chunks',
];

test('a clean batch: every document created, categories from the first path segment, the run recorded', async ({
  s,
  user,
}) => {
  const r = await ingest(
    s,
    [
      {
        source_repo: 'infra',
        path: 'runbooks/deploy.md',
        content: '# Deploy\n\nShip it.',
        commit_sha: 'a1b2c3',
        metadata: { owner: 'ops' },
      },
      { source_repo: 'infra', path: 'architecture/overview.md', content: 'The big picture.' },
      { source_repo: 'handbook', path: 'README.md', content: 'Welcome.', commit_sha: null, metadata: null },
    ],
    { 'X-API-Key': user.apiKey },
  );
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), RESPONSE_KEYS);
  assert.equal(
    { ...r.body, run_id: 'x', results: [] },
    {
      submitted: 3,
      documents: 3,
      failed: 0,
      status: 'ok',
      total_chunks: 3,
      failures: [],
      run_id: 'x',
      run_recorded: true,
      results: [],
    },
  );
  assert.equal(r.body.results, [
    {
      index: 0,
      path: 'runbooks/deploy.md',
      status: 'created',
      document_id: documentIdOf('infra', 'runbooks/deploy.md'),
      chunks: 1,
    },
    {
      index: 1,
      path: 'architecture/overview.md',
      status: 'created',
      document_id: documentIdOf('infra', 'architecture/overview.md'),
      chunks: 1,
    },
    { index: 2, path: 'README.md', status: 'created', document_id: documentIdOf('handbook', 'README.md'), chunks: 1 },
  ]);
  const doc = await get(s, `/api/v1/knowledge/doc/${r.body.results[0].document_id}`);
  assert.is(doc.status, 200);
  assert.is(doc.body.document.category, 'runbooks');
  assert.is(doc.body.document.commit_sha, 'a1b2c3');
  assert.equal(doc.body.document.metadata, { owner: 'ops' });
  assert.is(
    (await get(s, `/api/v1/knowledge/doc/${documentIdOf('handbook', 'README.md')}`)).body.document.category,
    'README.md',
  );

  const status = await get(s, '/api/v1/knowledge/ingest/status');
  assert.is(status.status, 200);
  const run = status.body.runs.find((x: { run_id: string }) => x.run_id === r.body.run_id);
  assert.equal(Object.keys(run).sort(), [
    'actor',
    'chunks_written',
    'documents_failed',
    'documents_submitted',
    'documents_succeeded',
    'ended_at',
    'errors',
    'kind',
    'run_id',
    'started_at',
    'status',
  ]);
  assert.equal(
    { ...run, started_at: 't', ended_at: 't' },
    {
      run_id: r.body.run_id,
      kind: 'ingest',
      documents_submitted: 3,
      documents_succeeded: 3,
      documents_failed: 0,
      chunks_written: 3,
      status: 'ok',
      errors: [],
      started_at: 't',
      ended_at: 't',
      actor: user.username,
    },
  );
  assert.ok(Date.parse(run.started_at) <= Date.parse(run.ended_at));
});

test('re-ingesting unchanged content writes nothing (unchanged); changed content replaces the chunks (updated)', async ({
  s,
}) => {
  const docs = [
    {
      source_repo: 'infra',
      path: 'services/api.md',
      content: `# API\n\n${'alpha '.repeat(500)}\n\n# More\n\n${'beta '.repeat(300)}`,
    },
    { source_repo: 'infra', path: 'services/db.md', content: 'Postgres.' },
  ];
  const first = await ingest(s, docs);
  assert.is(first.status, 200);
  assert.equal(
    first.body.results.map((x: { status: string }) => x.status),
    ['created', 'created'],
  );
  const before = await eventCount(s, 'EstateDocumentIngested');
  const again = await ingest(s, [{ ...docs[0]!, commit_sha: 'changed-commit-only' }, docs[1]!]);
  assert.is(again.status, 200);
  assert.equal(
    again.body.results.map((x: { status: string }) => x.status),
    ['unchanged', 'unchanged'],
  );
  assert.is(again.body.status, 'ok');
  assert.is(again.body.documents, 2);
  assert.is(again.body.total_chunks, first.body.total_chunks);
  assert.is(await eventCount(s, 'EstateDocumentIngested'), before, 'an unchanged document wrote an event');
  const run = (await get(s, '/api/v1/knowledge/ingest/status')).body.runs.find(
    (x: { run_id: string }) => x.run_id === again.body.run_id,
  );
  assert.is(run.chunks_written, 0);
  assert.is(run.documents_succeeded, 2);

  const changed = await ingest(s, [{ ...docs[1]!, content: 'MySQL now.\n\nAnd a second paragraph.' }]);
  assert.equal(
    changed.body.results.map((x: { status: string }) => x.status),
    ['updated'],
  );
  const doc = await get(s, `/api/v1/knowledge/doc/${documentIdOf('infra', 'services/db.md')}`);
  assert.equal(
    doc.body.chunks.map((c: { content: string }) => c.content),
    ['MySQL now.\n\nAnd a second paragraph.'],
  );
});

test('every document is attempted: each bad one is listed with its reason, the others are stored', async ({ s }) => {
  const ok = (path: string) => ({ source_repo: 'mixed', path, content: `content of ${path}` });
  const batch = [
    ok('good/one.md'),
    { source_repo: 'mixed', path: 'too/long.md', content: 'x'.repeat(500_001) },
    { source_repo: 'mixed', path: 'empty/one.md', content: '' },
    { source_repo: 'mixed', path: 'blank/one.md', content: ' \n\t ' },
    { source_repo: 'mixed', path: '/absolute.md', content: 'x' },
    { source_repo: 'mixed', path: 'a/../b.md', content: 'x' },
    { source_repo: 'mixed', path: 'a//b.md', content: 'x' },
    { source_repo: 'mixed', path: '', content: 'x' },
    { source_repo: 'vault', path: 'reserved/one.md', content: 'x' },
    { source_repo: 'Vault', path: 'reserved/two.md', content: 'x' },
    ok('good/one.md'),
    { source_repo: 'mixed', path: 'unknown/field.md', content: 'x', title: 'nope' },
    { source_repo: 'mixed', path: 'missing/content.md' },
    { source_repo: 'mixed', path: 42, content: 'x' },
    { source_repo: 'mixed', path: 'nul/content.md', content: 'a\u0000b' },
    { source_repo: 'mixed', path: 'big/metadata.md', content: 'x', metadata: { blob: 'm'.repeat(20_000) } },
    { source_repo: '', path: 'no/repo.md', content: 'x' },
    'not an object',
    { source_repo: 'mixed', path: 'nul/metadata.md', content: 'x', metadata: { note: 'a\u0000b' } },
    { source_repo: 'mixed', path: 'literal/escape.md', content: 'x', metadata: { note: 'the text \\u0000 is fine' } },
    ok('good/two.md'),
  ];
  const stored = [0, 19, 20];
  const before = await eventCount(s, 'EstateDocumentIngested');
  const r = await ingest(s, batch);
  assert.is(r.status, 200, r.text);
  assert.is(r.body.submitted, batch.length);
  assert.is(r.body.documents, stored.length);
  assert.is(r.body.failed, batch.length - stored.length);
  assert.is(r.body.status, 'partial');
  assert.is(await eventCount(s, 'EstateDocumentIngested'), before + stored.length);
  const reasons = Object.fromEntries(r.body.failures.map((f: { index: number; error: string }) => [f.index, f.error]));
  assert.equal(reasons, {
    1: 'content_too_long',
    2: 'empty_content',
    3: 'empty_content',
    4: 'invalid_path',
    5: 'invalid_path',
    6: 'invalid_path',
    7: 'invalid_path',
    8: 'reserved_source_repo',
    9: 'reserved_source_repo',
    10: 'duplicate_in_batch',
    11: 'validation_failed',
    12: 'validation_failed',
    13: 'validation_failed',
    14: 'validation_failed',
    15: 'metadata_too_large',
    16: 'invalid_source_repo',
    17: 'validation_failed',
    18: 'validation_failed',
  });
  for (const f of r.body.failures) {
    assert.equal(Object.keys(f).sort(), ['error', 'index', 'message', 'path']);
    assert.type(f.message, 'string');
  }
  assert.is(r.body.failures.find((f: { index: number }) => f.index === 1).path, 'too/long.md');
  assert.is(r.body.failures.find((f: { index: number }) => f.index === 13).path, null);
  assert.equal(
    r.body.results.map((x: { status: string }) => x.status),
    batch.map((_, i) => (stored.includes(i) ? 'created' : 'failed')),
  );
  assert.equal(r.body.results[1], { index: 1, path: 'too/long.md', status: 'failed', document_id: null, chunks: 0 });
  // Exactly 500,000 characters is allowed.
  const edge = await ingest(s, [{ source_repo: 'mixed', path: 'edge/max.md', content: 'y '.repeat(250_000) }]);
  assert.is(edge.body.status, 'ok', edge.text);
  assert.ok(edge.body.total_chunks >= 250);
});

test('a refused document whose path holds a NUL or a lone surrogate: the run is still recorded, those characters as U+FFFD', async ({
  s,
}) => {
  const batch = [
    { source_repo: 'odd', path: 'nul\u0000/path.md', content: 'x' },
    { source_repo: 'odd', path: 'lone\ud800/path.md', content: 'a\u0000b' },
    { source_repo: 'odd', path: 'fine/path.md', content: 'stored' },
    // Lone surrogates in the fields that go into the document's event: refused one by one.
    { source_repo: 'odd', path: 'lone\udc00/only.md', content: 'fine' },
    { source_repo: 'odd\ud800', path: 'repo/lone.md', content: 'fine' },
    { source_repo: 'odd', path: 'sha/lone.md', content: 'fine', commit_sha: 'abc\ud800' },
    { source_repo: 'odd', path: 'metadata/lone.md', content: 'fine', metadata: { note: 'x\udbff' } },
    {
      source_repo: 'odd',
      path: 'metadata/pair.md',
      content: 'fine \ud83d\ude00',
      metadata: { note: 'a pair \ud83d\ude00 is fine' },
    },
  ];
  const r = await ingest(s, batch);
  assert.is(r.status, 200, r.text);
  assert.equal([r.body.documents, r.body.failed, r.body.run_recorded], [2, 6, true]);
  assert.equal(
    r.body.failures.slice(2).map((f: { error: string }) => f.error),
    ['invalid_path', 'invalid_source_repo', 'validation_failed', 'validation_failed'],
  );
  assert.not.ok(s.logLines.some((l) => /estate_run_record_failed|estate_ingest_write_failed/.test(l)));
  const [run] = await s.platform.store.readStream(ingestRunStream(r.body.run_id));
  assert.equal((run!.data.errors as { path: string }[]).map((e) => e.path).slice(0, 3), [
    'nul\uFFFD/path.md',
    'lone\uFFFD/path.md',
    'lone\uFFFD/only.md',
  ]);
});

test('a document too large to be valid is skipped unread (document_too_large), the rest stored', async ({ s }) => {
  const r = await ingest(s, [
    { source_repo: 'mixed', path: 'huge/one.md', content: 'z'.repeat(5 * 1024 * 1024) },
    { source_repo: 'mixed', path: 'small/after-huge.md', content: 'fine' },
  ]);
  assert.is(r.status, 200);
  assert.equal(
    r.body.failures.map((f: { path: string; error: string }) => [f.path, f.error]),
    [['huge/one.md', 'document_too_large']],
  );
  assert.is(r.body.results[1].status, 'created');
});

test('content the database refuses to store fails its own document only (store_failed), logged without the content', async ({
  s,
}) => {
  // Contents are stored a group per statement; the group's failure must not fail its neighbours.
  await s.db.pool.query(`CREATE FUNCTION refuse_blob() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    IF NEW.content LIKE '%refuse me%' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER refuse_blob BEFORE INSERT ON blobs FOR EACH ROW EXECUTE FUNCTION refuse_blob()`);
  try {
    const batch = ['stored/a.md', 'refused/b.md', 'stored/c.md'].map((path) => ({
      source_repo: 'store',
      path,
      content: path.startsWith('refused') ? 'please refuse me' : `the content of ${path}`,
    }));
    const before = await eventCount(s, 'EstateDocumentIngested');
    const r = await ingest(s, batch);
    assert.is(r.status, 200, r.text);
    assert.equal([r.body.status, r.body.documents, r.body.failed], ['partial', 2, 1]);
    assert.equal(
      r.body.failures.map((f: { index: number; path: string; error: string }) => [f.index, f.path, f.error]),
      [[1, 'refused/b.md', 'store_failed']],
    );
    assert.equal(
      r.body.results.map((x: { status: string }) => x.status),
      ['created', 'failed', 'created'],
    );
    assert.is(await eventCount(s, 'EstateDocumentIngested'), before + 2);
    const logged = s.logLines.filter((l) => l.includes('estate_blob_write_failed'));
    assert.is(logged.length, 1);
    assert.not.match(logged[0]!, /please refuse me/);
  } finally {
    await s.db.pool.query('DROP TRIGGER refuse_blob ON blobs; DROP FUNCTION refuse_blob()');
  }
});

test('an event the log refuses fails its own document only (store_failed): the rest of its append group is stored', async ({
  s,
}) => {
  // Documents' events go in groups of 25 per log transaction; a refused group is retried a
  // document at a time.
  await s.db.pool.query(`CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    IF NEW.data->>'path' = 'refused/e-7.md' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_event()`);
  try {
    const batch = Array.from({ length: 30 }, (_, i) => ({
      source_repo: 'appends',
      path: i === 7 ? 'refused/e-7.md' : `stored/e-${i}.md`,
      content: `the secret content of document ${i}`,
    }));
    const before = await eventCount(s, 'EstateDocumentIngested');
    const r = await ingest(s, batch);
    assert.is(r.status, 200, r.text);
    assert.equal([r.body.status, r.body.documents, r.body.failed], ['partial', 29, 1]);
    assert.equal(
      r.body.failures.map((f: { index: number; path: string; error: string }) => [f.index, f.path, f.error]),
      [[7, 'refused/e-7.md', 'store_failed']],
    );
    assert.ok(
      r.body.results.every(
        (x: { index: number; status: string }, i: number) => x.status === (i === 7 ? 'failed' : 'created'),
      ),
    );
    assert.is(await eventCount(s, 'EstateDocumentIngested'), before + 29);
    // Read-your-writes: the stored documents are listed at once, the refused one is not.
    const paths = (await get(s, '/api/v1/knowledge/corpus/paths?source_repo=appends')).body.paths.map(
      (p: { path: string }) => p.path,
    );
    assert.is(paths.length, 29);
    assert.not.ok(paths.includes('refused/e-7.md'));
    const logged = s.logLines.filter((l) => l.includes('estate_ingest_write_failed'));
    assert.is(logged.length, 1);
    assert.not.match(logged[0]!, /secret content/);
  } finally {
    await s.db.pool.query('DROP TRIGGER refuse_event ON events; DROP FUNCTION refuse_event()');
  }
});

test('all failing: status failed, nothing stored, and it becomes the last incomplete run', async ({ s }) => {
  const r = await ingest(s, [
    { source_repo: 'x', path: 'a.md', content: '' },
    { source_repo: 'x', path: '../b.md', content: 'b' },
  ]);
  assert.is(r.status, 200);
  assert.equal([r.body.status, r.body.documents, r.body.failed, r.body.total_chunks], ['failed', 0, 2, 0]);
  const status = await get(s, '/api/v1/knowledge/ingest/status');
  assert.is(status.body.last_incomplete_run, r.body.run_id);
  assert.is(status.body.runs[0].run_id, r.body.run_id, 'newest first');
  assert.equal(
    status.body.runs[0].errors.map((e: { error: string }) => e.error),
    ['empty_content', 'invalid_path'],
  );
  // A later clean run does not clear it: the latest run that was not ok is still this one.
  await ingest(s, [{ source_repo: 'x', path: 'c.md', content: 'c' }]);
  assert.is((await get(s, '/api/v1/knowledge/ingest/status')).body.last_incomplete_run, r.body.run_id);
});

test('a 500-document batch with a mix of failures', async ({ s }) => {
  const batch = Array.from({ length: 500 }, (_, i) => {
    if (i % 50 === 7) return { source_repo: 'bulk', path: `bad/${i}/../x.md`, content: 'x' };
    if (i % 50 === 13) return { source_repo: 'bulk', path: `empty/${i}.md`, content: '   ' };
    if (i % 50 === 21) return { source_repo: 'vault', path: `vault/${i}.md`, content: 'x' };
    if (i % 50 === 33) return { source_repo: 'bulk', path: `dup/${i - 1}.md`, content: 'x' };
    return {
      source_repo: 'bulk',
      path: i % 50 === 32 ? `dup/${i}.md` : `docs/${i}.md`,
      content: `# Doc ${i}\n\nParagraph ${i} about bulk ingest.`,
    };
  });
  const before = await eventCount(s);
  const r = await ingest(s, batch);
  assert.is(r.status, 200, r.text.slice(0, 300));
  assert.equal([r.body.submitted, r.body.documents, r.body.failed, r.body.status], [500, 460, 40, 'partial']);
  assert.is(r.body.results.length, 500);
  assert.is(r.body.total_chunks, 460);
  const counts: Record<string, number> = {};
  for (const f of r.body.failures) counts[f.error] = (counts[f.error] ?? 0) + 1;
  assert.equal(counts, { invalid_path: 10, empty_content: 10, reserved_source_repo: 10, duplicate_in_batch: 10 });
  // One event per stored document and one for the run.
  assert.is((await eventCount(s)) - before, 461);
  const corpus = await get(s, '/api/v1/knowledge/corpus');
  assert.is(corpus.body.by_source_repo.find((g: { key: string }) => g.key === 'bulk').documents, 460);
});

test('whole-batch refusals write nothing: 0 or 501 documents, malformed JSON, wrong media type, too large', async ({
  s,
}) => {
  const before = await eventCount(s);
  const doc = { source_repo: 'r', path: 'p.md', content: 'c' };
  const many = await ingest(
    s,
    Array.from({ length: 501 }, (_, i) => ({ ...doc, path: `p${i}.md` })),
  );
  assert.is(many.status, 400);
  assert.is(many.body.error, 'validation_failed');
  assert.match(many.body.message, /at most 500/);
  const none = await ingest(s, []);
  assert.is(none.status, 400);
  assert.is(none.body.error, 'validation_failed');
  for (const body of [
    '{"documents": [{"source_repo": "r", "path": "p.md", "content": "c"}',
    '{"documents": [1,]}',
    'nope',
  ]) {
    const r = await http(`${s.orch}/api/v1/knowledge/ingest`, {
      headers: { ...admin, 'content-type': 'application/json' },
      body,
    });
    assert.is(r.status, 400, body);
    assert.is(r.body.error, 'invalid_json');
  }
  for (const body of [{}, { documents: 'x' }, { documents: [doc], extra: true }, [doc]]) {
    const r = await http(`${s.orch}/api/v1/knowledge/ingest`, { headers: admin, json: body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error, 'validation_failed');
  }
  const text = await http(`${s.orch}/api/v1/knowledge/ingest`, {
    headers: { ...admin, 'content-type': 'text/plain' },
    body: JSON.stringify({ documents: [doc] }),
  });
  assert.is(text.status, 415);
  assert.is(text.body.error, 'unsupported_media_type');
  const declared = await http(`${s.orch}/api/v1/knowledge/ingest`, {
    headers: { ...admin, 'content-type': 'application/json', 'content-length': String(800 * 1024 * 1024) },
    body: JSON.stringify({ documents: [doc] }),
  });
  assert.is(declared.status, 413);
  assert.equal(declared.body, {
    error: 'payload_too_large',
    message: `request body exceeds this route's limit of ${768 * 1024 * 1024} bytes`,
    limit_bytes: 768 * 1024 * 1024,
  });
  assert.is(await eventCount(s), before);
});

test('the batch routes take bodies far above the 1 MiB default (their own body family)', async ({ s }) => {
  const content = 'word '.repeat(80_000); // 400,000 characters per document
  const r = await ingest(
    s,
    Array.from({ length: 4 }, (_, i) => ({ source_repo: 'large', path: `large/${i}.md`, content: `${content}${i}` })),
  );
  assert.is(r.status, 200, r.text.slice(0, 200));
  assert.is(r.body.status, 'ok');
});

test('writes need role user: readonly is 403 insufficient_role, anonymous 401, nothing written', async ({
  s,
  readonly,
}) => {
  const before = await eventCount(s);
  const doc = { source_repo: 'r', path: 'ro.md', content: 'c' };
  for (const route of ['ingest', 'vault']) {
    const body = { documents: [route === 'vault' ? { path: 'ro.md', content: 'c' } : doc] };
    const ro = await http(`${s.orch}/api/v1/knowledge/${route}`, {
      headers: { 'X-API-Key': readonly.apiKey },
      json: body,
    });
    assert.is(ro.status, 403);
    assert.equal(ro.body, { error: 'insufficient_role', message: 'this action needs role user or higher' });
    const anonymous = await http(`${s.orch}/api/v1/knowledge/${route}`, { json: body });
    assert.is(anonymous.status, 401);
    assert.is(anonymous.body.message, 'missing X-API-Key header');
  }
  assert.is(await eventCount(s), before);
  // Reading the runs needs a key only.
  assert.is((await get(s, '/api/v1/knowledge/ingest/status', { 'X-API-Key': readonly.apiKey })).status, 200);
  assert.is((await get(s, '/api/v1/knowledge/ingest/status', {})).status, 401);
});

test('vault: stored as source_repo vault, is_vault true, a run of kind vault; the vault shape is strict', async ({
  s,
}) => {
  const r = await vault(s, [
    { path: 'customers/acme.md', content: 'Acme contract renewal notes.', metadata: { customer: 'acme' } },
    { path: 'customers/globex.md', content: 'Globex notes.', source_repo: 'vault' },
    { path: '../escape.md', content: 'x' },
  ]);
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), RESPONSE_KEYS);
  assert.equal([r.body.status, r.body.documents, r.body.failed], ['partial', 1, 2]);
  assert.equal(
    r.body.failures.map((f: { error: string }) => f.error),
    ['validation_failed', 'invalid_path'],
  );
  const id = r.body.results[0].document_id;
  assert.is(id, documentIdOf('vault', 'customers/acme.md'));
  const doc = await get(s, `/api/v1/knowledge/doc/${id}`);
  assert.equal(
    [doc.body.document.source_repo, doc.body.document.is_vault, doc.body.document.category],
    ['vault', true, 'customers'],
  );
  const run = (await get(s, '/api/v1/knowledge/ingest/status')).body.runs.find(
    (x: { run_id: string }) => x.run_id === r.body.run_id,
  );
  assert.is(run.kind, 'vault');
  const again = await vault(s, [{ path: 'customers/acme.md', content: 'Acme contract renewal notes.' }]);
  assert.is(again.body.results[0].status, 'unchanged');
});

test('runs: limit defaults to 20 and is clamped to 1-200; newest first', async ({ s }) => {
  for (let i = 0; i < 22; i++) await ingest(s, [{ source_repo: 'runs', path: `r/${i}.md`, content: `run ${i}` }]);
  const page = async (q: string) => (await get(s, `/api/v1/knowledge/ingest/status${q}`)).body;
  assert.is((await page('')).runs.length, 20);
  assert.is((await page('?limit=0')).runs.length, 1);
  assert.is((await page('?limit=-5')).runs.length, 1);
  assert.is((await page('?limit=3')).runs.length, 3);
  assert.is((await page('?limit=abc')).runs.length, 20);
  const all = (await page('?limit=1000')).runs;
  assert.ok(all.length > 22 && all.length <= 200);
  const ends = all.map((x: { ended_at: string }) => Date.parse(x.ended_at));
  assert.equal(
    ends,
    [...ends].sort((a: number, b: number) => b - a),
  );
  assert.equal(Object.keys(await page('')).sort(), ['last_incomplete_run', 'runs']);
});

test.run();
