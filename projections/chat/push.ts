// Web-push subscriptions (`chat_push_subscriptions`): the endpoint and keys stay sealed here as
// in the events; the push sender opens them when it sends. A deleted account's go with it.

import type { AccountEvent } from '../../domain/chat/accounts/events.ts';
import type { PushSubscriptionEvent } from '../../domain/chat/push/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const chatPushSubscriptionsProjection = defineProjection<
  PushSubscriptionEvent | Extract<AccountEvent, { type: 'AccountDeleted' }>
>({
  name: 'chat_push_subscriptions',
  handles: ['PushSubscriptionAdded', 'PushSubscriptionRemoved', 'AccountDeleted'],
  tables: ['chat_push_subscriptions'],
  async apply(event, tx) {
    switch (event.type) {
      case 'PushSubscriptionAdded': {
        const d = event.data;
        await tx.query(
          `INSERT INTO chat_push_subscriptions (id, user_id, endpoint_sealed, keys_sealed, origin, created_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, endpoint_sealed = EXCLUDED.endpoint_sealed, keys_sealed = EXCLUDED.keys_sealed, origin = EXCLUDED.origin, created_at = EXCLUDED.created_at`,
          [d.subscription_id, d.user_id, d.endpoint_sealed, d.keys_sealed, d.origin, d.at],
        );
        return;
      }
      case 'PushSubscriptionRemoved':
        await tx.query('DELETE FROM chat_push_subscriptions WHERE id = $1 AND user_id = $2', [
          event.data.subscription_id,
          event.data.user_id,
        ]);
        return;
      case 'AccountDeleted':
        await tx.query('DELETE FROM chat_push_subscriptions WHERE user_id = $1', [event.data.user_id]);
        return;
    }
  },
});

export interface PushSubscriptionRow {
  id: string;
  user_id: string;
  endpoint_sealed: string;
  keys_sealed: string;
  origin: string;
  created_at: Date;
}

/** A user's subscriptions, oldest first. */
export async function pushSubscriptionsOf(db: Pool, userId: string): Promise<PushSubscriptionRow[]> {
  const { rows } = await db.query<PushSubscriptionRow>(
    'SELECT * FROM chat_push_subscriptions WHERE user_id = $1 ORDER BY created_at, id',
    [userId],
  );
  return rows;
}

/** The subscriptions of these users who may still be reached (not deleted, not suspended). */
export async function pushSubscriptionsFor(db: Pool, userIds: string[]): Promise<PushSubscriptionRow[]> {
  if (!userIds.length) return [];
  const { rows } = await db.query<PushSubscriptionRow>(
    `SELECT s.* FROM chat_push_subscriptions s JOIN chat_users u ON u.id = s.user_id
     WHERE s.user_id = ANY($1::uuid[]) AND u.deleted_at IS NULL AND u.suspended_at IS NULL ORDER BY s.user_id, s.id`,
    [userIds],
  );
  return rows;
}
