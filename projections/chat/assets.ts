// Gated space assets (`chat_space_assets`: every icon, banner and voice background ever set,
// the current one per space and kind flagged) and custom emoji (`chat_emojis`).

import type { AssetEvent, AssetKind, AssetScope } from '../../domain/chat/assets/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatAssetsProjection = defineProjection<AssetEvent>({
  name: 'chat_assets',
  handles: ['SpaceAssetUploaded', 'EmojiAdded', 'EmojiRemoved'],
  tables: ['chat_space_assets', 'chat_emojis'],
  async apply(event, tx) {
    switch (event.type) {
      case 'SpaceAssetUploaded': {
        const e = event.data;
        await tx.query('UPDATE chat_space_assets SET current = false WHERE space_id = $1 AND kind = $2 AND current', [
          e.space_id,
          e.kind,
        ]);
        await tx.query(
          `INSERT INTO chat_space_assets (filename, scope, space_id, community_id, kind, sha256, mime_type, size, created_by, created_at, current)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, true) ON CONFLICT DO NOTHING`,
          [e.filename, e.scope, e.space_id, e.community_id, e.kind, e.sha256, e.mime_type, e.size, e.by, e.at],
        );
        return;
      }
      case 'EmojiAdded': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_emojis (id, community_id, name, sha256, mime_type, size, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
          [e.emoji_id, e.community_id, e.name, e.sha256, e.mime_type, e.size, e.by, e.at],
        );
        return;
      }
      case 'EmojiRemoved':
        await tx.query('DELETE FROM chat_emojis WHERE id = $1', [event.data.emoji_id]);
        return;
    }
  },
});

export interface AssetRow {
  filename: string;
  scope: AssetScope;
  space_id: string;
  community_id: string;
  kind: AssetKind;
  sha256: string;
  mime_type: string;
  size: number;
  created_at: Date;
}
const ASSET_COLUMNS =
  'filename, scope, space_id, community_id, kind, sha256, mime_type, size::float8 AS size, created_at';

/** A current asset by its file name, of the given scope. */
export async function assetByFilename(db: Pool, scope: AssetScope, filename: string): Promise<AssetRow | null> {
  const { rows } = await db.query<AssetRow>(
    `SELECT ${ASSET_COLUMNS} FROM chat_space_assets WHERE filename = $1 AND scope = $2 AND current`,
    [filename, scope],
  );
  return rows[0] ?? null;
}

export async function currentAssets(db: Pool, spaceId: string): Promise<AssetRow[]> {
  const { rows } = await db.query<AssetRow>(
    `SELECT ${ASSET_COLUMNS} FROM chat_space_assets WHERE space_id = $1 AND current ORDER BY kind`,
    [spaceId],
  );
  return rows;
}

export interface EmojiRow {
  id: string;
  community_id: string;
  name: string;
  sha256: string;
  mime_type: string;
  size: number;
  created_by: string;
  created_at: Date;
}
const EMOJI_COLUMNS = 'id, community_id, name, sha256, mime_type, size::float8 AS size, created_by, created_at';

export async function emojiById(db: Pool, id: string): Promise<EmojiRow | null> {
  return (await db.query<EmojiRow>(`SELECT ${EMOJI_COLUMNS} FROM chat_emojis WHERE id = $1`, [id])).rows[0] ?? null;
}

export async function communityEmojis(db: Pool, communityId: string): Promise<EmojiRow[]> {
  return (
    await db.query<EmojiRow>(`SELECT ${EMOJI_COLUMNS} FROM chat_emojis WHERE community_id = $1 ORDER BY name`, [
      communityId,
    ])
  ).rows;
}
