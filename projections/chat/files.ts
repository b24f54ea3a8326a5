// Uploaded files (`chat_files`: metadata, quarantine, deletion) and blocked content hashes
// (`chat_blocked_hashes`). The bytes are blobs on disk named by SHA-256 (infra/files/); a file
// whose hash is blocked reads as quarantined even before its own FileQuarantined arrives (an
// upload racing the block).

import type { BlockedHashEvent, FileEvent } from '../../domain/chat/files/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatFilesProjection = defineProjection<FileEvent | BlockedHashEvent>({
  name: 'chat_files',
  handles: ['FileUploaded', 'FileDeleted', 'FileQuarantined', 'FileUnquarantined', 'HashBlocked', 'HashUnblocked'],
  tables: ['chat_files', 'chat_blocked_hashes'],
  async apply(event, tx) {
    switch (event.type) {
      case 'FileUploaded': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_files (id, name, size, mime_type, sha256, channel_id, uploader_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
          [e.file_id, e.name, e.size, e.mime_type, e.sha256, e.channel_id, e.uploader_id, e.at],
        );
        return;
      }
      case 'FileDeleted':
        await tx.query('UPDATE chat_files SET deleted_at = $2 WHERE id = $1', [event.data.file_id, event.data.at]);
        return;
      case 'FileQuarantined':
        await tx.query(
          'UPDATE chat_files SET quarantined = true, quarantine_reason = $2, quarantined_at = $3 WHERE id = $1',
          [event.data.file_id, event.data.reason, event.data.at],
        );
        return;
      case 'FileUnquarantined':
        await tx.query(
          'UPDATE chat_files SET quarantined = false, quarantine_reason = NULL, quarantined_at = NULL WHERE id = $1',
          [event.data.file_id],
        );
        return;
      case 'HashBlocked': {
        const e = event.data;
        await tx.query(
          'INSERT INTO chat_blocked_hashes (id, sha256, reason, created_by, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
          [e.id, e.sha256, e.reason, e.by, e.at],
        );
        return;
      }
      case 'HashUnblocked':
        await tx.query('DELETE FROM chat_blocked_hashes WHERE id = $1', [event.data.id]);
        return;
    }
  },
});

export interface FileRow {
  id: string;
  name: string;
  size: number;
  mime_type: string;
  sha256: string;
  channel_id: string | null;
  uploader_id: string;
  created_at: Date;
  /** Quarantined by an admin, or its hash is blocked. */
  quarantined: boolean;
  quarantine_reason: string | null;
}

const COLUMNS = `f.id, f.name, f.size::float8 AS size, f.mime_type, f.sha256, f.channel_id, f.uploader_id, f.created_at,
  (f.quarantined OR EXISTS (SELECT 1 FROM chat_blocked_hashes b WHERE b.sha256 = f.sha256)) AS quarantined,
  coalesce(f.quarantine_reason, CASE WHEN EXISTS (SELECT 1 FROM chat_blocked_hashes b WHERE b.sha256 = f.sha256) THEN 'blocked_hash' END) AS quarantine_reason`;

/** A live (not deleted) file, quarantined or not. */
export async function fileById(db: Pool, id: string): Promise<FileRow | null> {
  const { rows } = await db.query<FileRow>(
    `SELECT ${COLUMNS} FROM chat_files f WHERE f.id = $1 AND f.deleted_at IS NULL`,
    [id],
  );
  return rows[0] ?? null;
}

/** Bytes the user's live files hold (the quota's early check; the uploads stream decides). */
export async function usedBytes(db: Pool, userId: string): Promise<number> {
  const { rows } = await db.query<{ used: number }>(
    'SELECT coalesce(sum(size), 0)::float8 AS used FROM chat_files WHERE uploader_id = $1 AND deleted_at IS NULL',
    [userId],
  );
  return rows[0]!.used;
}

export async function isBlocked(db: Pool, sha256: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM chat_blocked_hashes WHERE sha256 = $1', [sha256])).rowCount! > 0;
}

/** Live files with this content (to quarantine when it is blocked). */
export async function filesWithHash(db: Pool, sha256: string): Promise<FileRow[]> {
  const { rows } = await db.query<FileRow>(
    `SELECT ${COLUMNS} FROM chat_files f WHERE f.sha256 = $1 AND f.deleted_at IS NULL ORDER BY f.created_at, f.id`,
    [sha256],
  );
  return rows;
}

/** Whether any live file still refers to the blob (the sweeper keeps it then). */
export async function blobReferenced(db: Pool, sha256: string): Promise<boolean> {
  const files = await db.query('SELECT 1 FROM chat_files WHERE sha256 = $1 AND deleted_at IS NULL LIMIT 1', [sha256]);
  if (files.rowCount) return true;
  const assets = await db.query(
    'SELECT 1 FROM chat_space_assets WHERE sha256 = $1 AND current UNION ALL SELECT 1 FROM chat_emojis WHERE sha256 = $1 LIMIT 1',
    [sha256],
  );
  return assets.rowCount! > 0;
}

/**
 * Which of `ids` the poster may attach in `channelId`: live, not quarantined, and either uploaded
 * to this channel or the poster's own upload without a channel (a file of another channel stays
 * with that channel's members).
 */
export async function attachableFiles(db: Pool, ids: string[], posterId: string, channelId: string): Promise<string[]> {
  if (!ids.length) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT f.id FROM chat_files f WHERE f.id = ANY($1::uuid[]) AND f.deleted_at IS NULL AND NOT f.quarantined
       AND NOT EXISTS (SELECT 1 FROM chat_blocked_hashes b WHERE b.sha256 = f.sha256) AND (f.channel_id = $3 OR (f.channel_id IS NULL AND f.uploader_id = $2))`,
    [ids, posterId, channelId],
  );
  return rows.map((r) => r.id);
}

export interface FileListFilter {
  uploader_id: string | null;
  quarantined: boolean | null;
  limit: number;
  offset: number;
}

/** Every live file, newest first (admin). */
export async function listFiles(db: Pool, f: FileListFilter): Promise<{ files: FileRow[]; total: number }> {
  const where = `f.deleted_at IS NULL AND ($1::uuid IS NULL OR f.uploader_id = $1)
    AND ($2::boolean IS NULL OR (f.quarantined OR EXISTS (SELECT 1 FROM chat_blocked_hashes b WHERE b.sha256 = f.sha256)) = $2)`;
  const [page, count] = await Promise.all([
    db.query<FileRow>(
      `SELECT ${COLUMNS} FROM chat_files f WHERE ${where} ORDER BY f.created_at DESC, f.id LIMIT $3 OFFSET $4`,
      [f.uploader_id, f.quarantined, f.limit, f.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM chat_files f WHERE ${where}`, [
      f.uploader_id,
      f.quarantined,
    ]),
  ]);
  return { files: page.rows, total: count.rows[0]!.n };
}

export interface StorageStats {
  file_count: number;
  total_bytes: number;
  blob_count: number;
  blob_bytes: number;
  quarantined_count: number;
  blocked_hash_count: number;
  uploader_count: number;
}

export async function storageStats(db: Pool): Promise<StorageStats> {
  const { rows } = await db.query<StorageStats>(`SELECT
    (SELECT count(*)::int FROM chat_files WHERE deleted_at IS NULL) AS file_count,
    (SELECT coalesce(sum(size), 0)::float8 FROM chat_files WHERE deleted_at IS NULL) AS total_bytes,
    (SELECT count(*)::int FROM (SELECT DISTINCT sha256 FROM chat_files WHERE deleted_at IS NULL) x) AS blob_count,
    (SELECT coalesce(sum(size), 0)::float8 FROM (SELECT DISTINCT ON (sha256) size FROM chat_files WHERE deleted_at IS NULL ORDER BY sha256) x) AS blob_bytes,
    (SELECT count(*)::int FROM chat_files f WHERE f.deleted_at IS NULL AND (f.quarantined OR EXISTS (SELECT 1 FROM chat_blocked_hashes b WHERE b.sha256 = f.sha256))) AS quarantined_count,
    (SELECT count(*)::int FROM chat_blocked_hashes) AS blocked_hash_count,
    (SELECT count(DISTINCT uploader_id)::int FROM chat_files WHERE deleted_at IS NULL) AS uploader_count`);
  return rows[0]!;
}

export interface BlockedHashRow {
  id: string;
  sha256: string;
  reason: string | null;
  created_by: string;
  created_at: Date;
}

export async function blockedHashes(db: Pool): Promise<BlockedHashRow[]> {
  return (
    await db.query<BlockedHashRow>(
      'SELECT id, sha256, reason, created_by, created_at FROM chat_blocked_hashes ORDER BY created_at DESC, id',
    )
  ).rows;
}

export async function blockedHashById(db: Pool, id: string): Promise<BlockedHashRow | null> {
  return (
    (
      await db.query<BlockedHashRow>(
        'SELECT id, sha256, reason, created_by, created_at FROM chat_blocked_hashes WHERE id = $1',
        [id],
      )
    ).rows[0] ?? null
  );
}
