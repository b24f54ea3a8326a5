// Content-addressed blobs (DESIGN.md "Shared mechanisms", large payloads): text stored under the
// SHA-256 of its UTF-8 bytes, written before the event that refers to it (a claim check), never
// updated. Events stay small; a projection replaying the log reads the blobs back.

import { createHash } from 'node:crypto';
import type { Pool, PoolClient } from './db/pool.ts';

/** The blob key of `text`: hex SHA-256 of its UTF-8 encoding (how PostgreSQL stores it). */
export function blobKey(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Store `text` under its key (a no-op when it is there already); returns the key. */
export async function putBlob(db: Pool, text: string, key = blobKey(text)): Promise<string> {
  // Look first: re-ingesting unchanged content then sends only the key, not the content.
  const present = await db.query('SELECT 1 FROM blobs WHERE sha256 = $1', [key]);
  if (present.rowCount) return key;
  await db.query('INSERT INTO blobs (sha256, content, chars) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING', [key, text, text.length]);
  return key;
}

/** The blobs under `keys`; a missing one is an error (an event pointing at nothing). */
export async function readBlobs(db: Pool | PoolClient, keys: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(keys)];
  const found = new Map<string, string>();
  if (unique.length === 0) return found;
  const { rows } = await db.query<{ sha256: string; content: string }>('SELECT sha256, content FROM blobs WHERE sha256 = ANY($1::text[])', [unique]);
  for (const row of rows) found.set(row.sha256, row.content);
  const missing = unique.filter((k) => !found.has(k));
  if (missing.length) throw new Error(`missing blob(s): ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}`);
  return found;
}
