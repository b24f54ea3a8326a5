// The estate page's pure helpers (web/console/src/estate-ingest.ts): batches of at most 500
// documents (the server's limit) and a byte budget, the snippet marks, picked files' paths, and
// which files the browser leaves out.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_CONTENT_CHARS, MAX_DOCUMENTS_PER_BATCH } from '../../../domain/orchestration/estate/decider.ts';
import * as ingest from '../../../web/console/src/estate-ingest.ts';

const test = suite('console: estate ingest helpers');

test("the server's limits", () => {
  assert.is(ingest.MAX_DOCUMENTS_PER_BATCH, MAX_DOCUMENTS_PER_BATCH);
  assert.is(ingest.MAX_CONTENT_CHARS, MAX_CONTENT_CHARS);
  assert.is(ingest.MAX_FILE_BYTES, 4 * MAX_CONTENT_CHARS);
});

test('batches: at most 500 per batch, in order, nothing lost; 1,201 files are 500 + 500 + 201', () => {
  const files = Array.from({ length: 1201 }, (_, i) => ({ i, size: 10 }));
  const out = ingest.batches(files, (f) => f.size);
  assert.equal(
    out.map((b) => b.length),
    [500, 500, 201],
  );
  assert.equal(
    out.flat().map((f) => f.i),
    files.map((f) => f.i),
  );
  assert.equal(
    ingest
      .batches(
        Array.from({ length: 500 }, () => 1),
        (n) => n,
      )
      .map((b) => b.length),
    [500],
  );
  assert.equal(
    ingest
      .batches(
        Array.from({ length: 501 }, () => 1),
        (n) => n,
      )
      .map((b) => b.length),
    [500, 1],
  );
  assert.equal(
    ingest.batches([], () => 1),
    [],
  );
});

test('batches: a byte budget too; an item over the budget goes alone; maxCount must be positive', () => {
  const out = ingest.batches([4, 4, 4, 9, 1, 1], (n) => n, { maxBytes: 8, maxCount: 500 });
  assert.equal(out, [[4, 4], [4], [9], [1, 1]]);
  assert.equal(
    ingest.batches([1, 1, 1, 1, 1], (n) => n, { maxCount: 2 }),
    [[1, 1], [1, 1], [1]],
  );
  assert.equal(
    ingest.batches([0, 0, 0], (n) => n, { maxBytes: 0, maxCount: 10 }),
    [[0, 0, 0]],
  );
  assert.throws(() => ingest.batches([1], (n) => n, { maxCount: 0 }));
  // The default byte budget splits big folders before 500 files.
  const big = Array.from({ length: 40 }, () => 1024 * 1024);
  assert.equal(
    ingest.batches(big, (n) => n).map((b) => b.length),
    [32, 8],
  );
});

test('snippet marks: ** pairs become marked parts; markup stays text; an unpaired marker is text', () => {
  assert.equal(ingest.snippetParts('the **deploy** runbook for **deploys**'), [
    { text: 'the ', mark: false },
    { text: 'deploy', mark: true },
    { text: ' runbook for ', mark: false },
    { text: 'deploys', mark: true },
  ]);
  assert.equal(ingest.snippetParts('**<script>alert(1)</script>** and <img src=x onerror=alert(1)>'), [
    { text: '<script>alert(1)</script>', mark: true },
    { text: ' and <img src=x onerror=alert(1)>', mark: false },
  ]);
  assert.equal(ingest.snippetParts('no marks'), [{ text: 'no marks', mark: false }]);
  assert.equal(ingest.snippetParts('a **b** c ** d'), [
    { text: 'a ', mark: false },
    { text: 'b', mark: true },
    { text: ' c ** d', mark: false },
  ]);
  assert.equal(ingest.snippetParts(''), []);
  assert.equal(ingest.snippetParts('****'), []);
});

test('paths relative to the picked folder; the folder name; files picked alone keep their name', () => {
  assert.is(
    ingest.relativePath({ name: 'deploy.md', webkitRelativePath: 'estate/runbooks/deploy.md' }),
    'runbooks/deploy.md',
  );
  assert.is(ingest.relativePath({ name: 'top.md', webkitRelativePath: 'estate/top.md' }), 'top.md');
  assert.is(ingest.relativePath({ name: 'alone.md', webkitRelativePath: '' }), 'alone.md');
  assert.is(ingest.relativePath({ name: 'alone.md' }), 'alone.md');
  assert.is(ingest.folderName([{ webkitRelativePath: '' }, { webkitRelativePath: 'estate/a/b.md' }]), 'estate');
  assert.is(ingest.folderName([{ webkitRelativePath: '' }]), null);
});

test('what the browser leaves out: files too large to fit; bytes that are not UTF-8 text', () => {
  assert.is(ingest.skipBeforeReading({ size: ingest.MAX_FILE_BYTES }), null);
  assert.match(ingest.skipBeforeReading({ size: ingest.MAX_FILE_BYTES + 1 }) ?? '', /larger than/);
  const utf8 = new TextEncoder();
  assert.is(ingest.textOf(utf8.encode('héllo ✓')), 'héllo ✓');
  assert.is(ingest.textOf(new Uint8Array()), '');
  assert.is(ingest.textOf(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), null);
  assert.is(ingest.textOf(new Uint8Array([0x61, 0x00, 0x62])), null);
});

test.run();
