// Reading a multipart upload as a stream (`@fastify/busboy`), never buffered: one `file` part
// goes through SHA-256 into a temp file of the blob store; small text fields come alongside. The
// request body is counted too: past its limit the upload stops with 413, whatever Content-Length
// said (a declared one over the limit is refused before a byte is read, by the body-limit family).
// Any failure (too large, malformed, aborted by the client) removes the temp file. The OpenAPI
// form of such a body, for the routes that take one: multipartBody.

import { Busboy, type BusboyInstance } from '@fastify/busboy';
import type { Context } from 'hono';
import { Readable, Transform } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import type { FilesystemBlobStore, Received } from '../../../infra/files/store.ts';
import { TooLargeError } from '../../../infra/files/store.ts';
import { ApiError } from '../../shared/http-errors.ts';

/** An error in the chat body form carrying a machine-readable `code`. */
export const coded = (
  status: ConstructorParameters<typeof ApiError>[0],
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
) => new ApiError(status, code, message, { code, ...extra });

type StringProperty = { type: 'string'; format?: string; pattern?: string };
/** The OpenAPI form of a streamed multipart body: documented, never validated (or buffered) by a middleware. */
export const multipartBody = (description: string, properties: Record<string, StringProperty>) => ({
  required: true,
  description,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object' as const,
        properties: { file: { type: 'string', format: 'binary' } as StringProperty, ...properties },
        required: ['file'],
      },
    },
  },
});

export interface Upload {
  file: Received & { name: string };
  fields: Record<string, string>;
}

/** The request body as a Node stream: the socket's own request when served (no web-stream round trip), else the web body. */
function bodyStream(c: Context): Readable {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (incoming instanceof Readable) return incoming;
  const body = c.req.raw.body;
  if (!body) throw coded(400, 'validation_failed', 'a multipart/form-data body with a file part is required');
  return Readable.fromWeb(body as import('node:stream/web').ReadableStream);
}

/** Bytes of a refused upload read and dropped, so the client can read its answer; past this the connection is closed. */
const DRAIN_MAX = 64 * 1024 * 1024;

function drain(source: Readable): void {
  if (source.readableEnded || source.destroyed) return;
  let dropped = 0;
  source.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_MAX) source.destroy();
  });
  source.resume();
}

const cleanName = (name: string) => (name.replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim() || 'file').slice(0, 255);

/**
 * Receive one `file` part (at most `maxFileBytes`, else `tooLarge`) and the named text fields, in
 * a body of at most `maxBodyBytes`.
 */
export async function receiveUpload(
  c: Context,
  store: FilesystemBlobStore,
  options: {
    maxFileBytes: number;
    maxBodyBytes: number;
    fields: string[];
    tooLarge: () => ApiError;
  },
): Promise<Upload> {
  const contentType = c.req.header('content-type') ?? '';
  if (!/^multipart\/form-data/i.test(contentType))
    throw coded(400, 'validation_failed', 'a multipart/form-data body with a file part is required');
  const source = bodyStream(c);
  let bodyBytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bodyBytes += chunk.length;
      if (bodyBytes > options.maxBodyBytes)
        return done(
          coded(413, 'payload_too_large', `request body exceeds this route's limit of ${options.maxBodyBytes} bytes`, {
            limit_bytes: options.maxBodyBytes,
          }),
        );
      done(null, chunk);
    },
  });
  let busboy: BusboyInstance;
  try {
    busboy = Busboy({
      headers: { 'content-type': contentType },
      limits: { fields: 20, fieldSize: 4096, parts: 30, headerPairs: 50 },
    });
  } catch {
    throw coded(400, 'validation_failed', 'malformed multipart/form-data body');
  }
  const fields: Record<string, string> = {};
  let received: Promise<Upload['file']> | null = null;
  let failure = null as Error | null; // (set in the callbacks below: not narrowed to null here)
  let current: Readable | null = null;
  let finished = () => {};
  // What a stream or the store rejects with is an Error; anything else is wrapped so it can be thrown.
  const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));
  const fail = (error: unknown) => {
    failure ??= asError(error);
    finished();
    if (current && !current.readableEnded) current.destroy(new Error('upload stopped'));
    source.unpipe(counter);
    counter.unpipe(busboy);
    counter.destroy();
    drain(source);
    busboy.removeAllListeners('file');
    busboy.on('file', (_f: string, s: Readable) => s.resume());
  };

  const done = new Promise<void>((resolve) => {
    finished = resolve;
    busboy.on('file', (field: string, stream: Readable, filename: string) => {
      stream.on('error', () => {}); // failures are handled where the stream is consumed
      if (field !== 'file' || received) {
        stream.resume();
        fail(coded(400, 'validation_failed', 'exactly one file part, named file, is expected'));
        return;
      }
      current = stream;
      received = store
        .receive(stream, options.maxFileBytes)
        .then((r) => ({ ...r, name: cleanName(filename ?? 'file') }));
      received.catch((error) => {
        stream.resume();
        fail(error instanceof TooLargeError ? options.tooLarge() : error);
      });
    });
    busboy.on('field', (name: string, value: string) => {
      if (options.fields.includes(name)) fields[name] = value;
    });
    busboy.on('finish', () => resolve());
    busboy.on('error', (error: unknown) => {
      fail(coded(400, 'validation_failed', `malformed multipart/form-data body: ${(error as Error).message}`));
      resolve();
    });
    counter.on('error', (error) => {
      fail(error);
      resolve();
    });
    source.on('error', (error) => {
      fail(error);
      resolve();
    });
    source.on('aborted', () => {
      fail(new Error('upload aborted'));
      resolve();
    });
    source.on('close', () => {
      if (!source.readableEnded) {
        fail(new Error('upload aborted'));
        resolve();
      }
    });
  });
  source.pipe(counter).pipe(busboy);
  await done;
  const file = received
    ? await (received as Promise<Upload['file']>).catch((error: unknown) => {
        failure ??= asError(error);
        return null;
      })
    : null;
  if (failure) {
    if (file) await store.discard(file);
    throw failure;
  }
  if (!file) throw coded(400, 'validation_failed', 'a file part named file is required');
  return { file, fields };
}

const RASTER = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/apng',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/tiff',
]);

/** Whether a type is shown inline (raster images, audio, video); everything else downloads as an attachment. */
export const inlineType = (mime: string) => RASTER.has(mime) || mime.startsWith('audio/') || mime.startsWith('video/');
export const isRasterImage = (mime: string) => RASTER.has(mime);

/** The MIME type from the bytes (`file-type`), else text/plain for clean UTF-8 text, else application/octet-stream. */
export async function sniff(head: Buffer): Promise<{ mime: string; ext: string }> {
  const found = await fileTypeFromBuffer(head);
  if (found) return { mime: found.mime, ext: found.ext };
  if (looksLikeSvg(head)) return { mime: 'image/svg+xml', ext: 'svg' };
  if (head.length && isText(head)) return { mime: 'text/plain', ext: 'txt' };
  return { mime: 'application/octet-stream', ext: 'bin' };
}

function looksLikeSvg(head: Buffer): boolean {
  return /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg[^>]*>\s*)?<svg[\s>]/i.test(head.toString('utf8'));
}

function isText(head: Buffer): boolean {
  // A cut multibyte sequence at the end of the head is fine.
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head);
  const bad = (text.slice(0, -1).match(/[\u0000-\u0008\u000e-\u001f\ufffd]/g) ?? []).length;
  return bad === 0;
}
