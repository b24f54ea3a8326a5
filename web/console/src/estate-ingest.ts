// Pure helpers of the estate knowledge page (no DOM, unit-tested in
// tests/orchestration/console/estate-ingest.test.ts): the search snippet's marks, the paths of
// picked files, which files the browser leaves out, and the batches of a folder ingest.

/** The server's batch limit (domain/orchestration/estate/decider.ts MAX_DOCUMENTS_PER_BATCH). */
export const MAX_DOCUMENTS_PER_BATCH = 500;
/** The server's content limit in characters (MAX_CONTENT_CHARS). */
export const MAX_CONTENT_CHARS = 500_000;
/**
 * Bytes per batch the console sends at most (the server reads up to 768 MiB as a stream; smaller
 * requests keep the browser's memory and each request's time modest).
 */
export const MAX_BATCH_BYTES = 32 * 1024 * 1024;
/**
 * A file larger than this cannot be within MAX_CONTENT_CHARS (no character takes more than 4 bytes
 * of UTF-8), so the browser skips it without reading it. Smaller files are sent, and the server
 * fails those still too long (content_too_long), each in its own result.
 */
export const MAX_FILE_BYTES = 4 * MAX_CONTENT_CHARS;

export interface SnippetPart {
  text: string;
  mark: boolean;
}

/**
 * A search snippet into text parts: the server (ts_headline with StartSel=** and StopSel=**)
 * puts each matched word between `**` and `**`, so the parts between markers alternate plain,
 * marked, plain... An unpaired last marker is kept as text. The parts are rendered as text nodes
 * and <mark> elements, never as HTML. (A document whose own text has `**` can shift the marks;
 * it is still shown as text.)
 */
export function snippetParts(snippet: string): SnippetPart[] {
  const pieces = snippet.split('**');
  const parts: SnippetPart[] = [];
  const push = (text: string, mark: boolean) => {
    if (text === '') return;
    const last = parts.at(-1);
    if (last && last.mark === mark) last.text += text;
    else parts.push({ text, mark });
  };
  // With an even number of pieces the last marker has no partner: it and what follows are plain.
  const paired = pieces.length % 2 === 1 ? pieces.length : pieces.length - 1;
  for (let i = 0; i < paired; i++) push(pieces[i]!, i % 2 === 1);
  if (paired < pieces.length) push(`**${pieces[paired]!}`, false);
  return parts;
}

/**
 * A picked file's path relative to the picked folder: `webkitRelativePath` less its first segment
 * (the folder's own name); a file picked on its own (no relative path) is its name.
 */
export function relativePath(file: { name: string; webkitRelativePath?: string }): string {
  const full = file.webkitRelativePath ?? '';
  if (full === '') return file.name;
  const slash = full.indexOf('/');
  return slash < 0 ? full : full.slice(slash + 1);
}

/** The picked folder's name (the first segment of a relative path), the source repository's default. */
export function folderName(files: readonly { webkitRelativePath?: string }[]): string | null {
  const first = files.find((f) => (f.webkitRelativePath ?? '').includes('/'));
  return first ? first.webkitRelativePath!.split('/')[0]! : null;
}

/** Why the browser leaves a file out before reading it, or null to read it. */
export function skipBeforeReading(file: { size: number }): string | null {
  if (file.size > MAX_FILE_BYTES)
    return `larger than ${MAX_FILE_BYTES.toLocaleString('en')} bytes: cannot fit the ${MAX_CONTENT_CHARS.toLocaleString('en')}-character limit`;
  return null;
}

/**
 * A file's bytes as text, or null when they are not text: a NUL byte, or bytes that are not UTF-8.
 * (Empty files are text: the server fails them, content being required.)
 */
export function textOf(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Items into batches of at most `maxCount` items and `maxBytes` bytes, in order. An item larger
 * than `maxBytes` goes alone in its batch (the server judges it). An empty list is no batch.
 */
export function batches<T>(
  items: readonly T[],
  sizeOf: (item: T) => number,
  limits: { maxCount?: number; maxBytes?: number } = {},
): T[][] {
  const maxCount = limits.maxCount ?? MAX_DOCUMENTS_PER_BATCH;
  const maxBytes = limits.maxBytes ?? MAX_BATCH_BYTES;
  if (!Number.isInteger(maxCount) || maxCount < 1) throw new Error('maxCount must be a positive integer');
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Math.max(0, sizeOf(item));
    if (current.length > 0 && (current.length >= maxCount || bytes + size > maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
