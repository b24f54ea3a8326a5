// The chunking rule (domain/orchestration/estate/chunking.ts): structure-aware, at most 2,000
// characters, deterministic, and bounded in count so a document's offsets fit in one event.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  chunkBounds,
  chunkTexts,
  MAX_CHUNK_CHARS,
  MIN_SECTION_CHARS,
} from '../../../domain/orchestration/estate/chunking.ts';

const test = suite('estate chunking');

const chunks = (content: string) => chunkTexts(content, chunkBounds(content).flat());
const words = (n: number, word = 'lorem') => Array.from({ length: n }, (_, i) => `${word}${i % 10}`).join(' ');

test('a short document is one chunk, trimmed; whitespace-only content has none', () => {
  assert.equal(chunks('  \n\nHello world.\n\n'), ['Hello world.']);
  assert.equal(chunks(' \n\t\n '), []);
  assert.equal(chunks(''), []);
});

test('paragraphs pack together up to the limit, blank lines kept between them', () => {
  const para = words(50); // about 350 characters
  const content = Array.from({ length: 12 }, () => para).join('\n\n');
  const out = chunks(content);
  assert.ok(out.length > 1);
  for (const c of out) assert.ok(c.length <= MAX_CHUNK_CHARS, `${c.length}`);
  // Never cut inside a paragraph: every chunk is whole paragraphs.
  for (const c of out) for (const p of c.split('\n\n')) assert.is(p, para);
  // Packed: a chunk plus the next paragraph would pass the limit.
  for (let i = 0; i + 1 < out.length; i++) assert.ok(out[i]!.length + 2 + para.length > MAX_CHUNK_CHARS);
});

test('a heading starts a new chunk once the current one holds a section', () => {
  const body = words(40);
  assert.ok(body.length >= MIN_SECTION_CHARS);
  const out = chunks(`# One\n\n${body}\n\n## Two\n\n${body}\n\n### Three\n\nshort`);
  assert.equal(out, [`# One\n\n${body}`, `## Two\n\n${body}`, '### Three\n\nshort']);
});

test('a small section stays with what follows (a title and its lead)', () => {
  const body = words(40);
  const out = chunks(`# Title\n\nLead.\n\n## Part\n\n${body}`);
  assert.equal(out, [`# Title\n\nLead.\n\n## Part\n\n${body}`]);
});

test('a fenced code block is one block: blank lines and # lines inside it do not split it', () => {
  const code = '```sh\n# not a heading\necho one\n\necho two\n```';
  const out = chunks(`${words(40)}\n\n${code}\n\n# After\n\n${words(40)}`);
  assert.ok(
    out.some((c) => c.includes(code)),
    JSON.stringify(out),
  );
  assert.ok(out.every((c) => !c.startsWith('# not a heading')));
  // ~~~ fences too, and a fence closes only with the same character, at least as long.
  const tilde = '~~~~\nx\n~~~\n```\ny\n~~~~';
  assert.equal(chunks(tilde), [tilde]);
  // An unclosed fence runs to the end.
  assert.equal(chunks('```\nopen\n\n# still code'), ['```\nopen\n\n# still code']);
});

test('a block longer than the limit is cut at line breaks, then whitespace, then hard', () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
  const out = chunks(lines);
  assert.ok(out.length >= 2);
  for (const c of out) {
    assert.ok(c.length <= MAX_CHUNK_CHARS);
    assert.ok(c.startsWith('line '), c.slice(0, 20));
  }
  const spaced = words(1000);
  for (const c of chunks(spaced)) assert.ok(/^lorem\d/.test(c) && /lorem\d$/.test(c), c.slice(-10));
  const solid = 'y'.repeat(5000);
  assert.equal(
    chunks(solid).map((c) => c.length),
    [2000, 2000, 1000],
  );
});

test('a hard cut never splits a surrogate pair', () => {
  const emoji = '😀'.repeat(1500); // 3,000 UTF-16 code units, no whitespace
  const out = chunks(emoji);
  assert.is(out.join(''), emoji);
  for (const c of out) {
    assert.ok(c.length <= MAX_CHUNK_CHARS);
    assert.is.not(c.charCodeAt(c.length - 1) >= 0xd800 && c.charCodeAt(c.length - 1) <= 0xdbff, true);
  }
});

test('deterministic, offsets within the content and in order; CRLF line ends work', () => {
  const content = `# A\r\n\r\n${words(300)}\r\n\r\n## B\r\n\r\n${words(30)}`;
  assert.equal(chunkBounds(content), chunkBounds(content));
  let last = 0;
  for (const [start, end] of chunkBounds(content)) {
    assert.ok(start >= last && end > start && end <= content.length);
    last = end;
  }
  assert.ok(chunks(content).every((c) => !c.endsWith('\r')));
});

test('the worst case stays bounded: 500,000 characters of one-line sections', () => {
  const content = '# h\nx\n'.repeat(500_000 / 6);
  const bounds = chunkBounds(content);
  assert.ok(bounds.length <= 3000, `${bounds.length} chunks`);
  // The offsets of the worst case, as an event carries them, stay far below 1 MB.
  assert.ok(JSON.stringify(bounds.flat()).length < 100_000);
  const tiny = 'a\n\n'.repeat(500_000 / 3);
  assert.ok(chunkBounds(tiny).length <= 3000);
});

test.run();
