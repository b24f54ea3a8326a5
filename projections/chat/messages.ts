// Messages of every channel (`chat_messages`, ciphertext as the client sent it; plaintext only
// for webhook messages), every version of an edited message (`chat_message_versions`, oldest
// first), mentions (`chat_mentions`, for unread counts) and read cursors (`chat_read_cursors`).
// A channel's order is the log's: each message keeps the position of its MessagePosted, so
// paging by `before` has no ties, gaps or repeats, and a rebuild gives the same order.

import type { PurgeEvent } from '../../domain/chat/admin/events.ts';
import type { MessageEvent, ReadCursorEvent } from '../../domain/chat/messages/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

async function applyOne(event: Recorded<MessageEvent | ReadCursorEvent | PurgeEvent>, tx: PoolClient): Promise<void> {
  switch (event.type) {
    case 'MessagePosted': {
      const e = event.data;
      const { commit, prepare } = event.position;
      await tx.query(
        `INSERT INTO chat_messages (id, channel_id, sender_id, ciphertext, kind, thread_root_id, mentions, via_webhook, has_file, created_at, log_commit, log_prepare,
          webhook_username, webhook_avatar_url, file_ids, scheduled_for)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING`,
        [
          e.message_id,
          e.channel_id,
          e.sender_id,
          e.ciphertext,
          e.kind,
          e.thread_root_id,
          e.mentions,
          e.via_webhook,
          e.has_file,
          e.at,
          commit.toString(),
          prepare.toString(),
          e.webhook?.username ?? null,
          e.webhook?.avatar_url ?? null,
          e.file_ids ?? [],
          e.scheduled_for ?? null,
        ],
      );
      await tx.query(
        'INSERT INTO chat_message_versions (message_id, version, ciphertext, created_at) VALUES ($1, 1, $2, $3) ON CONFLICT DO NOTHING',
        [e.message_id, e.ciphertext, e.at],
      );
      if (e.mentions.length) {
        await tx.query(
          `INSERT INTO chat_mentions (message_id, user_id, channel_id, log_commit, log_prepare) SELECT $1, u, $2, $3, $4 FROM unnest($5::uuid[]) AS u ON CONFLICT DO NOTHING`,
          [e.message_id, e.channel_id, commit.toString(), prepare.toString(), e.mentions],
        );
      }
      return;
    }
    case 'MessageEdited': {
      const e = event.data;
      await tx.query('UPDATE chat_messages SET ciphertext = $2, edited_at = $3 WHERE id = $1', [
        e.message_id,
        e.ciphertext,
        e.at,
      ]);
      await tx.query(
        `INSERT INTO chat_message_versions (message_id, version, ciphertext, created_at)
        SELECT $1, coalesce(max(version), 0) + 1, $2, $3 FROM chat_message_versions WHERE message_id = $1`,
        [e.message_id, e.ciphertext, e.at],
      );
      return;
    }
    case 'MessageDeleted':
      // The read model forgets the body; the log keeps what was posted (it is append-only).
      await tx.query(`UPDATE chat_messages SET deleted_at = $2, ciphertext = '' WHERE id = $1`, [
        event.data.message_id,
        event.data.at,
      ]);
      await tx.query('DELETE FROM chat_message_versions WHERE message_id = $1', [event.data.message_id]);
      await tx.query('DELETE FROM chat_mentions WHERE message_id = $1', [event.data.message_id]);
      return;
    case 'MessageQuarantined':
    case 'MessageUnquarantined':
      await tx.query('UPDATE chat_messages SET quarantined_at = $2 WHERE id = $1', [
        event.data.message_id,
        event.type === 'MessageQuarantined' ? event.data.at : null,
      ]);
      return;
    case 'Purged': {
      // Hard delete: the rows go; the event says what went, never what it said.
      const { target_type, target_id } = event.data;
      const where =
        target_type === 'message' ? 'id = $1' : target_type === 'user_messages' ? 'sender_id = $1' : 'channel_id = $1';
      const ids = (
        await tx.query<{ id: string }>(`DELETE FROM chat_messages WHERE ${where} RETURNING id`, [target_id])
      ).rows.map((r) => r.id);
      await tx.query('DELETE FROM chat_message_versions WHERE message_id = ANY($1::uuid[])', [ids]);
      await tx.query('DELETE FROM chat_mentions WHERE message_id = ANY($1::uuid[])', [ids]);
      await tx.query(
        'DELETE FROM chat_read_cursors WHERE message_id = ANY($1::uuid[])' +
          (target_type === 'channel' ? ' OR channel_id = $2' : ''),
        target_type === 'channel' ? [ids, target_id] : [ids],
      );
      return;
    }
    case 'ReadCursorMoved': {
      const e = event.data;
      await tx.query(
        `INSERT INTO chat_read_cursors (channel_id, user_id, message_id, log_commit, log_prepare, updated_at)
        SELECT $1, $2, m.id, m.log_commit, m.log_prepare, $4 FROM chat_messages m WHERE m.id = $3
        ON CONFLICT (channel_id, user_id) DO UPDATE SET message_id = EXCLUDED.message_id, log_commit = EXCLUDED.log_commit, log_prepare = EXCLUDED.log_prepare, updated_at = EXCLUDED.updated_at`,
        [e.channel_id, e.user_id, e.message_id, e.at],
      );
      return;
    }
  }
}

export const chatMessagesProjection = defineProjection<MessageEvent | ReadCursorEvent | PurgeEvent>({
  name: 'chat_messages',
  handles: [
    'MessagePosted',
    'MessageEdited',
    'MessageDeleted',
    'MessageQuarantined',
    'MessageUnquarantined',
    'ReadCursorMoved',
    'Purged',
  ],
  tables: ['chat_messages', 'chat_message_versions', 'chat_mentions', 'chat_read_cursors'],
  apply: applyOne,
  batchStatement(events) {
    // Posts dominate: a run of them without mentions, webhook, files or schedule is two inserts,
    // which the engine sends with the checkpoint move as one statement (the two are independent:
    // a version row needs no message row written first).
    const posts = events.filter((e) => e.type === 'MessagePosted') as Recorded<
      Extract<MessageEvent, { type: 'MessagePosted' }>
    >[];
    if (
      posts.length !== events.length ||
      posts.some((p) => p.data.mentions.length || p.data.webhook || p.data.file_ids?.length || p.data.scheduled_for)
    )
      return null;
    const col = <T>(f: (p: (typeof posts)[number]) => T) => posts.map(f);
    return {
      writes: [
        `INSERT INTO chat_messages (id, channel_id, sender_id, ciphertext, kind, thread_root_id, via_webhook, has_file, created_at, log_commit, log_prepare)
        SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::uuid[], $7::boolean[], $8::boolean[], $9::timestamptz[], $10::bigint[], $11::bigint[])
        ON CONFLICT DO NOTHING`,
        `INSERT INTO chat_message_versions (message_id, version, ciphertext, created_at)
        SELECT m, 1, c, t FROM unnest($1::uuid[], $4::text[], $9::timestamptz[]) AS x(m, c, t) ON CONFLICT DO NOTHING`,
      ],
      values: [
        col((p) => p.data.message_id),
        col((p) => p.data.channel_id),
        col((p) => p.data.sender_id),
        col((p) => p.data.ciphertext),
        col((p) => p.data.kind),
        col((p) => p.data.thread_root_id),
        col((p) => p.data.via_webhook),
        col((p) => p.data.has_file),
        col((p) => p.data.at),
        col((p) => p.position.commit.toString()),
        col((p) => p.position.prepare.toString()),
      ],
    };
  },
});

export interface MessageRow {
  id: string;
  channel_id: string;
  sender_id: string;
  ciphertext: string;
  kind: string;
  thread_root_id: string | null;
  via_webhook: boolean;
  has_file: boolean;
  file_ids: string[];
  created_at: Date;
  edited_at: Date | null;
  webhook_username: string | null;
  webhook_avatar_url: string | null;
  /** When a scheduled message was scheduled for (delivered late, it differs from created_at); null for others. */
  scheduled_for: Date | null;
}

/** The row a MessagePosted writes, as a read of it gives it back (a use case that posted need not read it). */
export function postedRow(e: Extract<MessageEvent, { type: 'MessagePosted' }>['data']): MessageRow {
  return {
    id: e.message_id,
    channel_id: e.channel_id,
    sender_id: e.sender_id,
    ciphertext: e.ciphertext,
    kind: e.kind,
    thread_root_id: e.thread_root_id,
    via_webhook: e.via_webhook,
    has_file: e.has_file,
    file_ids: e.file_ids ?? [],
    created_at: new Date(e.at),
    edited_at: null,
    webhook_username: e.webhook?.username ?? null,
    webhook_avatar_url: e.webhook?.avatar_url ?? null,
    scheduled_for: e.scheduled_for ? new Date(e.scheduled_for) : null,
  };
}

/** The columns of a MessageRow, from `chat_messages m` (every query that shows messages selects these). */
export const MESSAGE_COLUMNS =
  'm.id, m.channel_id, m.sender_id, m.ciphertext, m.kind, m.thread_root_id, m.via_webhook, m.has_file, m.file_ids, m.created_at, m.edited_at, ' +
  'm.webhook_username, m.webhook_avatar_url, m.scheduled_for';

/** A live (not deleted) message of the channel. */
export async function messageIn(db: Pool, channelId: string, messageId: string): Promise<MessageRow | null> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m WHERE m.id = $1 AND m.channel_id = $2 AND m.deleted_at IS NULL AND m.quarantined_at IS NULL`,
    [messageId, channelId],
  );
  return rows[0] ?? null;
}

/**
 * Newest first, `limit` of them, older than `before` when given (a message of this channel,
 * deleted or not); undefined when `before` is not one of this channel's messages.
 */
export async function messagesPage(
  db: Pool,
  channelId: string,
  before: string | null,
  limit: number,
): Promise<MessageRow[] | undefined> {
  if (before) {
    // Two statements: with the position as constants the row comparison is an index condition.
    const at = await db.query<{ c: string; p: string }>(
      'SELECT log_commit::text AS c, log_prepare::text AS p FROM chat_messages WHERE id = $1 AND channel_id = $2',
      [before, channelId],
    );
    const position = at.rows[0];
    if (!position) return undefined;
    const { rows } = await db.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m WHERE m.channel_id = $1 AND (m.log_commit, m.log_prepare) < ($2::bigint, $3::bigint) AND m.deleted_at IS NULL AND m.quarantined_at IS NULL
       ORDER BY m.log_commit DESC, m.log_prepare DESC LIMIT $4`,
      [channelId, position.c, position.p, limit],
    );
    return rows;
  }
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m WHERE m.channel_id = $1 AND m.deleted_at IS NULL AND m.quarantined_at IS NULL ORDER BY m.log_commit DESC, m.log_prepare DESC LIMIT $2`,
    [channelId, limit],
  );
  return rows;
}

export async function messageVersions(
  db: Pool,
  messageId: string,
): Promise<{ version: number; ciphertext: string; created_at: Date }[]> {
  const { rows } = await db.query<{ version: number; ciphertext: string; created_at: Date }>(
    'SELECT version, ciphertext, created_at FROM chat_message_versions WHERE message_id = $1 ORDER BY version',
    [messageId],
  );
  return rows;
}

/** Replies to a root, oldest first. */
export async function threadReplies(db: Pool, channelId: string, rootId: string): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m WHERE m.thread_root_id = $1 AND m.channel_id = $2 AND m.deleted_at IS NULL AND m.quarantined_at IS NULL ORDER BY m.log_commit, m.log_prepare`,
    [rootId, channelId],
  );
  return rows;
}

export async function lastPostedAt(db: Pool, channelId: string, userId: string): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date }>(
    'SELECT created_at AS at FROM chat_messages WHERE channel_id = $1 AND sender_id = $2 ORDER BY created_at DESC LIMIT 1',
    [channelId, userId],
  );
  return rows[0]?.at ?? null;
}

export interface SearchFilters {
  q: string | null;
  sender: string | null;
  before: Date | null;
  after: Date | null;
  has_file: boolean | null;
  limit: number;
}

/**
 * Messages of channels the user is a member of (one channel when `channelId` is given), newest
 * first. `q` is full-text over plaintext (webhook) messages only: the server cannot read
 * ciphertext, so with `q` only plaintext messages can match; the other filters apply to all.
 */
export async function searchMessages(
  db: Pool,
  userId: string,
  channelId: string | null,
  f: SearchFilters,
): Promise<MessageRow[]> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM chat_messages m
     WHERE m.channel_id IN (SELECT cm.channel_id FROM chat_channel_members cm JOIN chat_channels ch ON ch.id = cm.channel_id AND ch.deleted_at IS NULL WHERE cm.user_id = $1)
       AND ($2::uuid IS NULL OR m.channel_id = $2) AND m.deleted_at IS NULL AND m.quarantined_at IS NULL
       AND ($3::text IS NULL OR (m.via_webhook AND to_tsvector('english', m.ciphertext) @@ plainto_tsquery('english', $3)))
       AND ($4::uuid IS NULL OR m.sender_id = $4) AND ($5::timestamptz IS NULL OR m.created_at < $5) AND ($6::timestamptz IS NULL OR m.created_at > $6)
       AND ($7::boolean IS NULL OR m.has_file = $7)
     ORDER BY m.log_commit DESC, m.log_prepare DESC LIMIT $8`,
    [userId, channelId, f.q, f.sender, f.before, f.after, f.has_file, f.limit],
  );
  return rows;
}

export async function pinnedMessages(
  db: Pool,
  channelId: string,
): Promise<(MessageRow & { pinned_by: string; pinned_at: Date })[]> {
  const { rows } = await db.query<MessageRow & { pinned_by: string; pinned_at: Date }>(
    `SELECT ${MESSAGE_COLUMNS}, p.pinned_by, p.pinned_at FROM chat_pins p JOIN chat_messages m ON m.id = p.message_id AND m.deleted_at IS NULL AND m.quarantined_at IS NULL
     WHERE p.channel_id = $1 ORDER BY p.pinned_at, p.message_id`,
    [channelId],
  );
  return rows;
}

export async function readCursors(
  db: Pool,
  channelId: string,
): Promise<{ user_id: string; message_id: string; updated_at: Date }[]> {
  const { rows } = await db.query<{ user_id: string; message_id: string; updated_at: Date }>(
    `SELECT r.user_id, r.message_id, r.updated_at FROM chat_read_cursors r JOIN chat_channel_members m ON m.channel_id = r.channel_id AND m.user_id = r.user_id
     WHERE r.channel_id = $1 ORDER BY r.user_id`,
    [channelId],
  );
  return rows;
}

/** Per channel the user belongs to: messages from others after their read cursor, and mentions of them among those. */
export async function unreadCounts(
  db: Pool,
  userId: string,
): Promise<{ channel_id: string; unread_count: number; mention_count: number; last_read_message_id: string | null }[]> {
  const { rows } = await db.query<{
    channel_id: string;
    unread_count: number;
    mention_count: number;
    last_read_message_id: string | null;
  }>(
    `SELECT cm.channel_id, r.message_id AS last_read_message_id,
       (SELECT count(*)::int FROM chat_messages m WHERE m.channel_id = cm.channel_id AND m.deleted_at IS NULL AND m.quarantined_at IS NULL AND m.sender_id <> $1
          AND (r.log_commit IS NULL OR (m.log_commit, m.log_prepare) > (r.log_commit, r.log_prepare))) AS unread_count,
       (SELECT count(*)::int FROM chat_mentions x WHERE x.user_id = $1 AND x.channel_id = cm.channel_id
          AND (r.log_commit IS NULL OR (x.log_commit, x.log_prepare) > (r.log_commit, r.log_prepare))) AS mention_count
     FROM chat_channel_members cm JOIN chat_channels ch ON ch.id = cm.channel_id AND ch.deleted_at IS NULL
     LEFT JOIN chat_read_cursors r ON r.channel_id = cm.channel_id AND r.user_id = cm.user_id
     WHERE cm.user_id = $1 ORDER BY cm.channel_id`,
    [userId],
  );
  return rows;
}
