// Content-addressed blobs (DESIGN.md "Shared mechanisms", large payloads): text stored under the
// SHA-256 of its UTF-8 bytes, written before the event that refers to it (a claim check), never
// updated. Events stay small; a projection replaying the log reads the blobs back.
//
// The texts this process stored lately are also kept in memory (a bounded number of characters),
// and read back from there: a projection applying the events of an ingest this process just
// took reads the blobs it just wrote. A key names one text only, so a kept copy cannot be stale.

import { createHash } from 'node:crypto';
import { textArray } from './db/binary-params.ts';
import type { Pool, PoolClient } from './db/pool.ts';

/** The blob key of `text`: hex SHA-256 of its UTF-8 encoding (how PostgreSQL stores it). */
export function blobKey(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * Texts by key, the oldest dropped once they hold more than `limit` characters (a text of over
 * a quarter of the limit is not kept: it would push out everything else).
 */
export class RecentTexts {
  private readonly texts = new Map<string, string>();
  private chars = 0;

  constructor(private readonly limit: number) {}

  get(key: string): string | undefined {
    return this.texts.get(key);
  }

  add(key: string, text: string): void {
    if (text.length > this.limit / 4 || this.texts.has(key)) return;
    this.texts.set(key, text);
    this.chars += text.length;
    for (const [oldest, old] of this.texts) {
      if (this.chars <= this.limit) break;
      this.texts.delete(oldest);
      this.chars -= old.length;
    }
  }

  clear(): void {
    this.texts.clear();
    this.chars = 0;
  }
}

/** What this process stored lately: 32 million characters (64 MB at most). */
const recent = new RecentTexts(32_000_000);

/**
 * Forget the texts kept in memory, so that `readBlobs` reads the database: for a test that a
 * rebuild reads the stored blobs. (Only tests need it: a process serves one database, and a
 * key names one text.)
 */
export const forgetRecentBlobs = () => recent.clear();

/** Store `text` under its key (a no-op when it is there already); returns the key. */
export async function putBlob(db: Pool, text: string, key = blobKey(text)): Promise<string> {
  await putBlobs(db, [{ key, text }]);
  return key;
}

/**
 * Store texts under their keys (`blobKey` of each), in one statement. Keys already stored are
 * looked up first and not sent again: re-ingesting unchanged content sends only its key.
 */
export async function putBlobs(db: Pool, blobs: { key: string; text: string }[]): Promise<void> {
  const keys = [...new Set(blobs.map((b) => b.key))];
  if (keys.length === 0) return;
  const present = await db.query<{ sha256: string }>('SELECT sha256 FROM blobs WHERE sha256 = ANY($1::text[])', [keys]);
  const stored = new Set(present.rows.map((r) => r.sha256));
  const missing = new Map<string, string>();
  for (const { key, text } of blobs) if (!stored.has(key)) missing.set(key, text);
  if (missing.size > 0) {
    const texts = [...missing.values()];
    await db.query(
      `INSERT INTO blobs (sha256, content, chars) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
       ON CONFLICT (sha256) DO NOTHING`,
      [[...missing.keys()], textArray(texts), texts.map((t) => t.length)],
    );
  }
  for (const { key, text } of blobs) recent.add(key, text);
}

/** The blobs under `keys`; a missing one is an error (an event pointing at nothing). */
export async function readBlobs(db: Pool | PoolClient, keys: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(keys)];
  const found = new Map<string, string>();
  const wanted: string[] = [];
  for (const key of unique) {
    const text = recent.get(key);
    if (text === undefined) wanted.push(key);
    else found.set(key, text);
  }
  if (wanted.length === 0) return found;
  const { rows } = await db.query<{ sha256: string; content: string }>(
    'SELECT sha256, content FROM blobs WHERE sha256 = ANY($1::text[])',
    [wanted],
  );
  for (const row of rows) found.set(row.sha256, row.content);
  const missing = wanted.filter((k) => !found.has(k));
  if (missing.length)
    throw new Error(`missing blob(s): ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}`);
  return found;
}
