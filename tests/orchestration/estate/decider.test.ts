// The estate deciders, given/when/then: documents (create, update, unchanged, delete) and runs.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  categoryOf,
  documentIdOf,
  estateDocumentDecider,
  ingestRunDecider,
  isReservedRepo,
  pathProblem,
  runStatus,
  type EstateDocumentCommand,
  type IngestRunCommand,
} from '../../../domain/orchestration/estate/decider.ts';
import type { EstateDocumentEvent } from '../../../domain/orchestration/estate/events.ts';
import { spec } from '../../support/given-when-then.ts';

const test = suite('estate deciders');
const document = spec(estateDocumentDecider);
const run = spec(ingestRunDecider);

const ID = documentIdOf('infra', 'runbooks/deploy.md');
const AT = '2026-01-01T00:00:00.000Z';
const RUN = '00000000-0000-4000-8000-0000000000aa';

const ingest = (
  sha: string,
  extra: Partial<Extract<EstateDocumentCommand, { type: 'IngestDocument' }>> = {},
): EstateDocumentCommand => ({
  type: 'IngestDocument',
  document_id: ID,
  run_id: RUN,
  source_repo: 'infra',
  path: 'runbooks/deploy.md',
  is_vault: false,
  commit_sha: 'abc123',
  metadata: { owner: 'ops' },
  content_sha256: sha,
  content_chars: 42,
  chunks: [0, 42],
  at: AT,
  ...extra,
});

const ingested = (sha: string, previous: string | null): EstateDocumentEvent => ({
  type: 'EstateDocumentIngested',
  data: {
    document_id: ID,
    run_id: RUN,
    source_repo: 'infra',
    path: 'runbooks/deploy.md',
    category: 'runbooks',
    is_vault: false,
    commit_sha: 'abc123',
    metadata: { owner: 'ops' },
    content_sha256: sha,
    content_chars: 42,
    chunks: [0, 42],
    chunking: 1,
    previous_content_sha256: previous,
    at: AT,
  },
});

const deleted: EstateDocumentEvent = {
  type: 'EstateDocumentDeleted',
  data: { document_id: ID, source_repo: 'infra', path: 'runbooks/deploy.md', is_vault: false, at: AT },
};

test('document ids derive from (source_repo, path): stable, distinct, UUID-shaped (version 8)', () => {
  assert.is(documentIdOf('infra', 'a/b.md'), documentIdOf('infra', 'a/b.md'));
  assert.is.not(documentIdOf('infra', 'a/b.md'), documentIdOf('infra2', 'a/b.md'));
  assert.is.not(documentIdOf('a', 'b\nc'), documentIdOf('a\nb', 'c'));
  assert.match(documentIdOf('x', 'y'), /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('a new document is ingested with its category (the first path segment) and no previous content', () => {
  document([])
    .when(ingest('a'.repeat(64)))
    .then([ingested('a'.repeat(64), null)]);
  assert.is(categoryOf('README.md'), 'README.md');
});

test('the same content again writes nothing; new content replaces, naming the old', () => {
  document([ingested('a'.repeat(64), null)])
    .when(ingest('a'.repeat(64), { commit_sha: 'other' }))
    .then([]);
  document([ingested('a'.repeat(64), null)])
    .when(ingest('b'.repeat(64)))
    .then([ingested('b'.repeat(64), 'a'.repeat(64))]);
});

test('after a delete, the same key is created afresh', () => {
  document([ingested('a'.repeat(64), null), deleted])
    .when(ingest('a'.repeat(64)))
    .then([ingested('a'.repeat(64), null)]);
});

test('delete: the document goes; a missing one is not_found', () => {
  document([ingested('a'.repeat(64), null)])
    .when({ type: 'DeleteDocument', at: AT })
    .then([deleted]);
  document([]).when({ type: 'DeleteDocument', at: AT }).thenError('document_not_found');
  document([ingested('a'.repeat(64), null), deleted])
    .when({ type: 'DeleteDocument', at: AT })
    .thenError('document_not_found');
});

test("refused: an id that is not the key's, and a document without chunks", () => {
  document([])
    .when(ingest('a'.repeat(64), { document_id: documentIdOf('other', 'x') }))
    .thenError('document_id_mismatch');
  document([])
    .when(ingest('a'.repeat(64), { chunks: [] }))
    .thenError('empty_content');
});

const record = (over: Partial<IngestRunCommand> = {}): IngestRunCommand => ({
  type: 'RecordIngestRun',
  run_id: RUN,
  kind: 'ingest',
  documents_submitted: 3,
  documents_succeeded: 2,
  documents_failed: 1,
  chunks_written: 5,
  status: 'partial',
  errors: [{ path: 'x', error: 'empty_content', message: 'content is empty' }],
  started_at: AT,
  ended_at: AT,
  actor: 'admin',
  actor_id: null,
  ...over,
});

test('a run is recorded once, with a status that follows from its counts', () => {
  run([])
    .when(record())
    .then((events) => {
      assert.is(events.length, 1);
      assert.is(events[0]!.data.status, 'partial');
    });
  const { type: _t, ...data } = record();
  run([{ type: 'EstateIngestRunRecorded', data }])
    .when(record())
    .then([]);
  run([])
    .when(record({ status: 'ok' }))
    .thenError('run_status_mismatch');
  run([])
    .when(record({ documents_failed: 2 }))
    .thenError('run_counts_mismatch');
});

test('run status: ok without failures, failed when nothing was stored, partial otherwise', () => {
  assert.is(runStatus(3, 0), 'ok');
  assert.is(runStatus(0, 2), 'failed');
  assert.is(runStatus(1, 2), 'partial');
});

test('paths: relative, / separated, no empty, . or .. segments, no control characters', () => {
  for (const ok of ['a.md', 'runbooks/deploy.md', 'a/b/c d.md', 'ünïcode/文件.md'])
    assert.is(pathProblem(ok), null, ok);
  for (const bad of [
    '',
    '/abs.md',
    'a//b',
    'a/',
    '../x',
    'a/./b',
    'a\\b',
    'a\tb',
    'a\u0000b',
    'a\uD800b',
    ' a/b',
    'x'.repeat(1025),
  ]) {
    assert.type(pathProblem(bad), 'string', JSON.stringify(bad));
  }
  assert.ok(isReservedRepo('vault') && isReservedRepo(' Vault ') && !isReservedRepo('vaults'));
});

test.run();
