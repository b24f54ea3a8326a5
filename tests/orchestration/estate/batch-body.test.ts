// The streamed batch body reader (api/orchestration/estate/batch-body.ts): elements arrive one
// at a time whatever the network chunking, and every malformed or oversized body is refused.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { batchElements, type BatchElement, type BatchLimits } from '../../../api/orchestration/estate/batch-body.ts';
import { ApiError } from '../../../api/shared/http-errors.ts';

const test = suite('estate batch body');

const LIMITS: BatchLimits = { key: 'documents', maxBytes: 1 << 20, maxElements: 5, maxElementBytes: 1000 };

function streamOf(text: string, pieceSize = Infinity): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      const size = Math.min(pieceSize, bytes.length - at);
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

async function read(text: string, pieceSize = Infinity, limits = LIMITS): Promise<BatchElement[]> {
  const out: BatchElement[] = [];
  for await (const element of batchElements(streamOf(text, pieceSize), limits)) out.push(element);
  return out;
}

async function refusal(text: string, limits = LIMITS): Promise<ApiError> {
  try {
    await read(text, 7, limits);
  } catch (error) {
    assert.instance(error, ApiError);
    return error as ApiError;
  }
  throw new Error(`not refused: ${text.slice(0, 80)}`);
}

const BODY = JSON.stringify({
  documents: [
    { path: 'a "quoted" \\ path', content: 'x [ ] { } , "' },
    { path: 'ü/文件.md', content: '😀\n\ttab', metadata: { nested: [1, { a: null }] } },
    'just a string',
    42,
    null,
  ],
});

test('elements arrive parsed, in order, however the bytes are split', async () => {
  const whole = await read(BODY);
  assert.equal(
    whole.map((e) => ('value' in e ? e.value : e)),
    JSON.parse(BODY).documents,
  );
  assert.equal(
    whole.map((e) => e.index),
    [0, 1, 2, 3, 4],
  );
  for (const size of [1, 2, 3, 5, 13]) assert.equal(await read(BODY, size), whole);
  // Whitespace anywhere JSON allows it.
  const spaced = ' \n{ "documents" :\t[ {"a":1} ,\r\n 2 ] }\n ';
  assert.equal(
    (await read(spaced, 1)).map((e) => ('value' in e ? e.value : null)),
    [{ a: 1 }, 2],
  );
  // An escaped key is the same key.
  assert.is((await read('{"docum\\u0065nts":[1]}')).length, 1);
});

test('an element longer than maxElementBytes is skipped and reported, named by its path when it comes first', async () => {
  const big = 'z'.repeat(2000);
  const out = await read(
    JSON.stringify({
      documents: [{ path: 'big.md', content: big }, { content: big, path: 'late.md' }, { path: 'ok.md' }],
    }),
    100,
  );
  assert.equal(out[0], { index: 0, oversized: true, path: 'big.md' });
  assert.equal(out[1], { index: 1, oversized: true, path: 'late.md' });
  assert.equal(out[2], { index: 2, value: { path: 'ok.md' } });
});

test('refusals of the whole body', async () => {
  const cases: Array<[string, number, string]> = [
    ['[]', 400, 'validation_failed'],
    ['"x"', 400, 'validation_failed'],
    ['{}', 400, 'validation_failed'],
    ['{"documents": []}', 400, 'validation_failed'],
    ['{"documents": {"a": 1}}', 400, 'validation_failed'],
    ['{"documents": [1], "extra": 2}', 400, 'validation_failed'],
    ['{"other": 1}', 400, 'validation_failed'],
    ['{"documents": [1], "documents": [2]}', 400, 'validation_failed'],
    ['{"documents": [1,2,3,4,5,6]}', 400, 'validation_failed'],
    ['{"documents": [1,]}', 400, 'invalid_json'],
    ['{"documents": [1 2]}', 400, 'invalid_json'],
    ['{"documents": [{"a": }]}', 400, 'invalid_json'],
    ['{"documents": [tru]}', 400, 'invalid_json'],
    ['{"documents": [1]', 400, 'invalid_json'],
    ['{"documents": [{"a": 1}', 400, 'invalid_json'],
    ['{"documents": [1]} x', 400, 'invalid_json'],
    ['{"documents": [1]}}', 400, 'invalid_json'],
    ['', 400, 'invalid_json'],
  ];
  for (const [body, status, code] of cases) {
    const error = await refusal(body);
    assert.is(error.status, status, body);
    assert.is(error.code, code, body);
  }
  const tooMany = await refusal('{"documents": [1,2,3,4,5,6]}');
  assert.match(tooMany.message, /at most 5/);
});

test('past maxBytes: 413 with the limit, as soon as the limit is passed', async () => {
  const error = await refusal(JSON.stringify({ documents: ['x'.repeat(500), 'y'.repeat(500)] }), {
    ...LIMITS,
    maxBytes: 800,
  });
  assert.is(error.status, 413);
  assert.is(error.code, 'payload_too_large');
  assert.equal(error.extra, { limit_bytes: 800 });
});

test('no body at all is refused', async () => {
  try {
    for await (const _ of batchElements(null, LIMITS)) assert.unreachable();
  } catch (error) {
    assert.is((error as ApiError).status, 400);
  }
});

test.run();
