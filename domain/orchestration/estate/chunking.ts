// How an estate document is cut into chunks: deterministic, structure-aware, pure.
//
// The rule:
// 1. Blocks. The content is read line by line into blocks: a fenced code block (from a line
//    opening with ``` or ~~~ to the line closing it with the same character, at least as long,
//    or the end of the document) is one block; an ATX heading line (`#` to `######`) is one
//    block; a run of other non-blank lines is a paragraph block. Blank lines only separate.
// 2. Long blocks. A block longer than MAX_CHUNK_CHARS is cut into pieces of at most that many
//    characters: at the last line break of the window if it lies in its second half, else at
//    the last whitespace there, else at the limit itself (never between the two halves of a
//    surrogate pair).
// 3. Packing. Blocks are packed in order: a block joins the current chunk while the chunk, from
//    its first block's start to this block's end, stays within MAX_CHUNK_CHARS. A heading starts
//    a new chunk once the current one holds at least MIN_SECTION_CHARS (smaller sections, such as
//    a title and its one-line lead, stay with what follows).
// 4. A chunk is the exact slice of the content it spans, trimmed of surrounding whitespace; the
//    blank lines between its blocks stay in it. Whitespace-only content has no chunks.
//
// Chunks are stored as [start, end) offsets in UTF-16 code units (JavaScript string indices).
// Every chunk except one closed by a heading spans, with the next block, more than
// MAX_CHUNK_CHARS; one closed by a heading spans at least MIN_SECTION_CHARS. So a document of n
// characters has at most about n / MIN_SECTION_CHARS + 2n / MAX_CHUNK_CHARS + 1 chunks (about
// 3,000 for 500,000 characters), which keeps the offsets of any document far below an event's
// 1 MB limit.

export const MAX_CHUNK_CHARS = 2000;
export const MIN_SECTION_CHARS = 200;
/** Version of the rule above; events record it so a future rule can be told apart. */
export const CHUNKING_VERSION = 1;

interface Block {
  start: number;
  end: number;
  heading: boolean;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const BLANK = /^\s*$/;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isWhitespace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13 || code === 12 || code === 11 || code === 0xa0;
}

/** The lines of `content` as [start, end) without their line break. */
function* lines(content: string): Generator<[number, number]> {
  let start = 0;
  while (start <= content.length) {
    const nl = content.indexOf('\n', start);
    const stop = nl === -1 ? content.length : nl;
    const end = stop > start && content.charCodeAt(stop - 1) === 13 ? stop - 1 : stop;
    yield [start, end];
    if (nl === -1) return;
    start = nl + 1;
  }
}

function blocksOf(content: string): Block[] {
  const blocks: Block[] = [];
  let paragraph: Block | null = null;
  let fence: { char: string; length: number; block: Block } | null = null;
  const closeParagraph = () => {
    if (paragraph) blocks.push(paragraph);
    paragraph = null;
  };
  for (const [start, end] of lines(content)) {
    const line = content.slice(start, end);
    if (fence) {
      fence.block.end = end;
      const close = FENCE.exec(line);
      if (
        close &&
        close[1]![0] === fence.char &&
        close[1]!.length >= fence.length &&
        BLANK.test(line.slice(close[0].length))
      ) {
        blocks.push(fence.block);
        fence = null;
      }
      continue;
    }
    const open = FENCE.exec(line);
    if (open) {
      closeParagraph();
      fence = { char: open[1]![0]!, length: open[1]!.length, block: { start, end, heading: false } };
      continue;
    }
    if (BLANK.test(line)) {
      closeParagraph();
      continue;
    }
    if (HEADING.test(line)) {
      closeParagraph();
      blocks.push({ start, end, heading: true });
      continue;
    }
    if (paragraph) (paragraph as Block).end = end;
    else paragraph = { start, end, heading: false };
  }
  if (fence) blocks.push(fence.block);
  closeParagraph();
  return blocks;
}

/** Cut a block longer than the limit into pieces within it (rule 2). */
function split(content: string, block: Block): Block[] {
  const pieces: Block[] = [];
  let start = block.start;
  while (block.end - start > MAX_CHUNK_CHARS) {
    const limit = start + MAX_CHUNK_CHARS;
    const half = start + MAX_CHUNK_CHARS / 2;
    let cut = content.lastIndexOf('\n', limit - 1) + 1;
    if (cut <= half) {
      cut = -1;
      for (let i = limit - 1; i > half; i--) {
        if (isWhitespace(content.charCodeAt(i))) {
          cut = i + 1;
          break;
        }
      }
    }
    if (cut <= half) cut = isHighSurrogate(content.charCodeAt(limit - 1)) ? limit - 1 : limit;
    pieces.push({ start, end: cut, heading: pieces.length === 0 && block.heading });
    start = cut;
  }
  pieces.push({ start, end: block.end, heading: pieces.length === 0 && block.heading });
  return pieces;
}

/** [start, end) of `content` without its leading and trailing whitespace; null when nothing is left. */
function trimmed(content: string, start: number, end: number): [number, number] | null {
  while (start < end && isWhitespace(content.charCodeAt(start))) start++;
  while (end > start && isWhitespace(content.charCodeAt(end - 1))) end--;
  return end > start ? [start, end] : null;
}

/** The chunks of `content` as [start, end) offsets, in order. */
export function chunkBounds(content: string): Array<[number, number]> {
  const chunks: Array<[number, number]> = [];
  let current: { start: number; end: number } | null = null;
  const close = () => {
    const span = current && trimmed(content, current.start, current.end);
    if (span) chunks.push(span);
    current = null;
  };
  for (const block of blocksOf(content).flatMap((b) => (b.end - b.start > MAX_CHUNK_CHARS ? split(content, b) : [b]))) {
    const span = trimmed(content, block.start, block.end);
    if (!span) continue;
    const [start, end] = span;
    if (current) {
      const open: { start: number; end: number } = current;
      const sectionBreak = block.heading && open.end - open.start >= MIN_SECTION_CHARS;
      if (!sectionBreak && end - open.start <= MAX_CHUNK_CHARS) {
        open.end = end;
        continue;
      }
      close();
    }
    current = { start, end };
  }
  close();
  return chunks;
}

/** The chunk texts of `content` for offsets from `chunkBounds` (flat or paired). */
export function chunkTexts(content: string, bounds: ReadonlyArray<number>): string[] {
  const texts: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i += 2) texts.push(content.slice(bounds[i], bounds[i + 1]));
  return texts;
}
