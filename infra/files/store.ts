// The storage port for uploaded bytes, and its filesystem adapter (CHATSVC_FILES_DIR):
// content-addressed blobs named by their SHA-256, never rewritten. An upload streams through the
// hash into a temp file (never held in memory) and is renamed into place; when the blob is
// there already the existing one is kept (dedup) and the temp file removed. A failed or aborted
// upload removes its temp file, so it leaves nothing.
//
// Blobs no live record refers to are removed by `sweep` once they have been unreferenced (and
// untouched) for 24 hours; temp files an interrupted process left behind go after an hour. A
// blob's modification time is when it was last written or touched: a store whose blobs no record
// refers to (link-preview images) touches a blob when it is used and sweeps by that alone.

import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** Bytes kept from the start of an upload to recognise its type. */
export const HEAD_BYTES = 4100;
export const UNREFERENCED_GRACE_MS = 24 * 60 * 60 * 1000;
const TEMP_GRACE_MS = 60 * 60 * 1000;
const SHA256 = /^[0-9a-f]{64}$/;

export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes`);
  }
}

export interface Received {
  /** The temp file holding the bytes until `commit` or `discard`. */
  temp: string;
  sha256: string;
  size: number;
  /** The first HEAD_BYTES bytes (type detection). */
  head: Buffer;
}

export interface BlobStore {
  /** Stream `source` into a temp file through SHA-256; more than `maxBytes` throws TooLargeError (and leaves nothing). */
  receive(source: Readable, maxBytes: number): Promise<Received>;
  /** Move a received upload into place under its hash (an existing blob is kept). */
  commit(received: Received): Promise<void>;
  discard(received: Received): Promise<void>;
  /** The blob's bytes, or a range of them (inclusive `end`). */
  read(sha256: string, range?: { start: number; end: number }): Readable;
  exists(sha256: string): Promise<boolean>;
  /** Remove blobs unreferenced and untouched for `graceMs` (default 24 h), and stale temp files; returns the blobs removed. */
  sweep(now: Date, referenced: (sha256: string) => Promise<boolean>, graceMs?: number): Promise<string[]>;
}

export class FilesystemBlobStore implements BlobStore {
  private readonly blobs: string;
  private readonly tmp: string;
  private ready: Promise<void> | null = null;

  constructor(readonly dir: string) {
    this.blobs = path.join(dir, 'blobs');
    this.tmp = path.join(dir, 'tmp');
  }

  private ensure(): Promise<void> {
    this.ready ??= Promise.all([
      mkdir(this.blobs, { recursive: true, mode: 0o700 }),
      mkdir(this.tmp, { recursive: true, mode: 0o700 }),
    ]).then(() => undefined);
    return this.ready;
  }

  pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error('not a SHA-256 hex digest');
    return path.join(this.blobs, sha256.slice(0, 2), sha256);
  }

  async receive(source: Readable, maxBytes: number): Promise<Received> {
    await this.ensure();
    const temp = path.join(this.tmp, randomUUID());
    const hash = createHash('sha256');
    const headParts: Buffer[] = [];
    let headLength = 0;
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new TooLargeError(maxBytes));
        hash.update(chunk);
        if (headLength < HEAD_BYTES) {
          const part = chunk.subarray(0, HEAD_BYTES - headLength);
          headParts.push(Buffer.from(part));
          headLength += part.length;
        }
        done(null, chunk);
      },
    });
    // A source destroyed before it got here may never say so again (no 'close'): refuse it now.
    if (source.destroyed) throw new Error('upload aborted');
    try {
      await pipeline(source, meter, createWriteStream(temp, { mode: 0o600, highWaterMark: 1024 * 1024 }));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return { temp, sha256: hash.digest('hex'), size, head: Buffer.concat(headParts) };
  }

  /** `now`: the time to record as the blob's last use (a store swept by use passes its clock's). */
  async commit(received: Received, now?: Date): Promise<void> {
    const target = this.pathOf(received.sha256);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    if (await this.exists(received.sha256)) {
      // Dedup: the blob stays as it is; touching it keeps a sweep from taking it now.
      await this.touch(received.sha256, now ?? new Date());
      await rm(received.temp, { force: true });
      return;
    }
    await rename(received.temp, target);
    if (now) await this.touch(received.sha256, now);
  }

  /** Record a use of the blob (its modification time), unless one within `unlessWithinMs` is recorded already; a missing blob is no error. */
  async touch(sha256: string, now: Date, unlessWithinMs = 0): Promise<void> {
    const file = this.pathOf(sha256);
    if (unlessWithinMs > 0) {
      const info = await stat(file).catch(() => null);
      if (!info || now.getTime() - info.mtimeMs < unlessWithinMs) return;
    }
    await utimes(file, now, now).catch(() => {});
  }

  async discard(received: Received): Promise<void> {
    await rm(received.temp, { force: true });
  }

  read(sha256: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.pathOf(sha256), { ...(range ?? {}), highWaterMark: 256 * 1024 });
  }

  /** The first HEAD_BYTES bytes of a blob (its type), its size and last use, or null when it is not there. */
  async head(sha256: string): Promise<{ head: Buffer; size: number; modified: Date } | null> {
    let handle: import('node:fs/promises').FileHandle | null = null;
    try {
      handle = await open(this.pathOf(sha256), 'r');
      const { size, mtime } = await handle.stat();
      const buffer = Buffer.alloc(Math.min(HEAD_BYTES, size));
      await handle.read(buffer, 0, buffer.length, 0);
      return { head: buffer, size, modified: mtime };
    } catch {
      return null;
    } finally {
      await handle?.close();
    }
  }

  async exists(sha256: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(sha256))).isFile();
    } catch {
      return false;
    }
  }

  async sweep(
    now: Date,
    referenced: (sha256: string) => Promise<boolean>,
    graceMs = UNREFERENCED_GRACE_MS,
  ): Promise<string[]> {
    await this.ensure();
    const removed: string[] = [];
    for (const name of await readdir(this.tmp)) {
      const file = path.join(this.tmp, name);
      const info = await stat(file).catch(() => null);
      if (info && now.getTime() - info.mtimeMs > TEMP_GRACE_MS) await rm(file, { force: true });
    }
    for (const prefix of await readdir(this.blobs)) {
      const sub = path.join(this.blobs, prefix);
      for (const name of await readdir(sub).catch(() => [] as string[])) {
        if (!SHA256.test(name)) continue;
        const file = path.join(sub, name);
        const info = await stat(file).catch(() => null);
        if (!info || now.getTime() - info.mtimeMs < graceMs) continue;
        if (await referenced(name)) continue;
        // Touched while we asked (a dedup upload, a use): it stays.
        if ((await stat(file).catch(() => null))?.mtimeMs !== info.mtimeMs) continue;
        await rm(file, { force: true });
        removed.push(name);
      }
    }
    return removed;
  }

  /** Temp files present now (tests: an aborted upload leaves none). */
  async temps(): Promise<string[]> {
    await this.ensure();
    return readdir(this.tmp);
  }
}
