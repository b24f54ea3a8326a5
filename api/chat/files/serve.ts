// Serving stored bytes: a strong ETag (the content's SHA-256), If-None-Match (304), one byte
// range (206, or 416 when unsatisfiable; several ranges get the whole body), and the headers
// every served file carries: `X-Content-Type-Options: nosniff`, `Content-Security-Policy:
// sandbox`, `Cache-Control: private`, and `Content-Disposition` (attachment unless inline).

import type { Context } from 'hono';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { BlobStore } from '../../../infra/files/store.ts';

/**
 * What `serveBlob` answers, for a route's document: the bytes whole (200) or one range (206), in
 * one of `types` (the stored type; a wildcard range where any type can be stored), 304 and 416.
 */
export function blobResponses(description: string, types: readonly string[]) {
  const content = Object.fromEntries(
    types.map((type) => [type, { schema: { type: 'string' as const, format: 'binary' } }]),
  );
  return {
    200: { description, content },
    206: { description: 'the requested range (Content-Range)', content },
    304: { description: 'not modified (If-None-Match)' },
    416: { description: 'range not satisfiable (Content-Range: bytes */<size>)' },
  };
}

export interface Served {
  sha256: string;
  size: number;
  mime_type: string;
  name: string | null;
  inline: boolean;
}

const etagOf = (sha256: string) => `"${sha256}"`;

function disposition(name: string | null, inline: boolean): string | null {
  if (!name) return inline ? 'inline' : 'attachment';
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The single range a Range header asks for, 'unsatisfiable', or null for the whole body. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (!match[1] && !match[2])) return null; // several ranges or a malformed one: the whole body
  if (!match[1]) {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
  if (start >= size || (match[2] && Number(match[2]) < start)) return 'unsatisfiable';
  return { start, end };
}

export function serveBlob(
  c: Context,
  store: BlobStore,
  file: Served,
  extraHeaders: Record<string, string> = {},
): Response {
  const etag = etagOf(file.sha256);
  const headers: Record<string, string> = {
    ETag: etag,
    'Cache-Control': 'private',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': 'sandbox',
    'Accept-Ranges': 'bytes',
    ...extraHeaders,
  };
  const disp = disposition(file.name, file.inline);
  if (disp) headers['Content-Disposition'] = disp;
  const inm = c.req.header('if-none-match');
  if (inm && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*' || t.trim() === `W/${etag}`))
    return c.body(null, 304, headers);
  const ifRange = c.req.header('if-range');
  const range = !ifRange || ifRange.trim() === etag ? parseRange(c.req.header('range'), file.size) : null;
  if (range === 'unsatisfiable') return c.body(null, 416, { ...headers, 'Content-Range': `bytes */${file.size}` });
  headers['Content-Type'] = file.mime_type;
  if (file.size === 0) return c.body(new Uint8Array(0), 200, { ...headers, 'Content-Length': '0' });
  const stream = (r?: { start: number; end: number }) =>
    Readable.toWeb(store.read(file.sha256, r)) as WebReadableStream as unknown as ReadableStream;
  if (range) {
    return c.body(stream(range), 206, {
      ...headers,
      'Content-Range': `bytes ${range.start}-${range.end}/${file.size}`,
      'Content-Length': String(range.end - range.start + 1),
    });
  }
  return c.body(stream(), 200, { ...headers, 'Content-Length': String(file.size) });
}
