// A multipart upload written to a real socket from a generated body (never held whole in
// memory): `size` bytes of a repeating 1 MiB block that starts with random bytes, so each
// upload is new content. For the upload suites and the files bench.

import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';

export interface StreamUploadOptions {
  /** Content-Length to declare: the true length (default), a number, or null (chunked). */
  declared?: number | null;
  /** Destroy the socket once this many file bytes are written. */
  abortAfter?: number;
  /** Hash what is sent (the client's SHA-256 of the file). */
  hash?: boolean;
  filename?: string;
}

export interface StreamUploadResult {
  status: number;
  text: string;
  body: any;
  sha256: string | null;
  aborted: boolean;
}

export function streamUpload(
  url: string,
  token: string,
  size: number,
  options: StreamUploadOptions = {},
): Promise<StreamUploadResult> {
  const boundary = `----orchard${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${options.filename ?? 'big.bin'}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const block = Buffer.alloc(1024 * 1024, 0x5a);
  randomBytes(32).copy(block);
  const hash = options.hash ? createHash('sha256') : null;
  const total = head.length + size + tail.length;
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': `multipart/form-data; boundary=${boundary}`,
  };
  const declared = options.declared === undefined ? total : options.declared;
  if (declared !== null) headers['content-length'] = String(declared);
  return new Promise((resolve, reject) => {
    let answered = false;
    let aborted = false;
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let body: unknown = null;
        try {
          body = JSON.parse(text);
        } catch {
          body = null;
        }
        resolve({ status: res.statusCode!, text, body, sha256: hash ? hash.digest('hex') : null, aborted });
      });
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (aborted) resolve({ status: 0, text: '', body: null, sha256: null, aborted });
      else if (!answered) reject(error);
    });
    req.write(head);
    let sent = 0;
    const pump = () => {
      while (!answered && sent < size) {
        if (options.abortAfter !== undefined && sent >= options.abortAfter) {
          aborted = true;
          req.destroy();
          return;
        }
        const piece = block.subarray(0, Math.min(block.length, size - sent));
        hash?.update(piece);
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', pump);
      }
      if (!answered) req.end(tail);
    };
    pump();
  });
}
