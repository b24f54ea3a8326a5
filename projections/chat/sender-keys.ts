// Sender-key distributions per channel and member (`chat_sender_keys`, sealed). A member who
// leaves, is kicked or banned, and a deleted channel, lose theirs.

import type { PurgeEvent } from '../../domain/chat/admin/events.ts';
import type { ChannelEvent } from '../../domain/chat/channels/events.ts';
import type { SenderKeyEvent } from '../../domain/chat/sender-keys/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

type Handled =
  SenderKeyEvent | Extract<ChannelEvent, { type: 'ChannelMemberDeparted' | 'ChannelDeleted' }> | PurgeEvent;

export const chatSenderKeysProjection = defineProjection<Handled>({
  name: 'chat_sender_keys',
  handles: ['SenderKeyDistributed', 'ChannelMemberDeparted', 'ChannelDeleted', 'Purged'],
  tables: ['chat_sender_keys'],
  async apply(event, tx) {
    switch (event.type) {
      case 'SenderKeyDistributed': {
        const e = event.data;
        await tx.query(
          `INSERT INTO chat_sender_keys (channel_id, user_id, chain_id, distribution_sealed, updated_at) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT (channel_id, user_id, chain_id) DO UPDATE SET distribution_sealed = EXCLUDED.distribution_sealed, updated_at = EXCLUDED.updated_at`,
          [e.channel_id, e.user_id, e.chain_id, e.distribution_sealed, e.at],
        );
        return;
      }
      case 'ChannelMemberDeparted':
        await tx.query('DELETE FROM chat_sender_keys WHERE channel_id = $1 AND user_id = $2', [
          event.data.channel_id,
          event.data.user_id,
        ]);
        return;
      case 'ChannelDeleted':
        await tx.query('DELETE FROM chat_sender_keys WHERE channel_id = $1', [event.data.channel_id]);
        return;
      case 'Purged':
        if (event.data.target_type === 'channel')
          await tx.query('DELETE FROM chat_sender_keys WHERE channel_id = $1', [event.data.target_id]);
        return;
    }
  },
});

export async function senderKeysOf(
  db: Pool,
  channelId: string,
): Promise<{ user_id: string; chain_id: number; distribution_sealed: string; updated_at: Date }[]> {
  const { rows } = await db.query<{ user_id: string; chain_id: string; distribution_sealed: string; updated_at: Date }>(
    'SELECT user_id, chain_id::text, distribution_sealed, updated_at FROM chat_sender_keys WHERE channel_id = $1 ORDER BY user_id, updated_at, chain_id',
    [channelId],
  );
  return rows.map((r) => ({ ...r, chain_id: Number(r.chain_id) }));
}
