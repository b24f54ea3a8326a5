// The subscriptions read model (`registry_subscriptions`): current status and revenue of each
// subscription. Subscriptions of a deleted customer stay in the table and are hidden by every
// query (and left out of the rollups).

import type { Product, SubscriptionStatus } from '../../domain/registry/catalog.ts';
import type { SubscriptionEvent } from '../../domain/registry/subscriptions/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { day, paged, ts, where, type Rows } from './columns.ts';

const PATCHABLE = new Set(['status', 'mrr_cents', 'renewal_date']);

export const subscriptionsProjection = defineProjection<SubscriptionEvent>({
  name: 'registry_subscriptions',
  handles: ['SubscriptionCreated', 'SubscriptionUpdated'],
  tables: ['registry_subscriptions'],
  async apply(event, tx) {
    if (event.type === 'SubscriptionCreated') {
      const r = event.data;
      await tx.query(
        `INSERT INTO registry_subscriptions (id, customer_id, customer_slug, product, status, mrr_cents, renewal_date, stripe_customer_id, stripe_subscription_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
        [
          r.subscription_id,
          r.customer_id,
          r.customer_slug,
          r.product,
          r.status,
          r.mrr_cents,
          r.renewal_date,
          r.stripe_customer_id,
          r.stripe_subscription_id,
          r.at,
        ],
      );
      return;
    }
    const { changes, subscription_id, at } = event.data;
    const fields = Object.keys(changes).filter((f) => PATCHABLE.has(f));
    const sets = fields.map((f, i) => `${f} = $${i + 3}`);
    await tx.query(`UPDATE registry_subscriptions SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [
      subscription_id,
      at,
      ...fields.map((f) => changes[f]!.after),
    ]);
  },
});

export interface SubscriptionRow {
  id: string;
  customer_id: string;
  customer_slug: string;
  product: Product;
  status: SubscriptionStatus;
  mrr_cents: number;
  renewal_date: string | null;
  stripe_customer_id: string | null;
  stripe_subscription_id: string | null;
  created_at: string;
  updated_at: string;
}

const SUBSCRIPTION = `s.id, s.customer_id, s.customer_slug, s.product, s.status, s.mrr_cents::float8 AS mrr_cents, ${day('s.renewal_date')},
  s.stripe_customer_id, s.stripe_subscription_id, ${ts('s.created_at')}, ${ts('s.updated_at')}`;
const LIVE = 'FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL';

export async function subscriptionById(pool: Pool, id: string): Promise<SubscriptionRow | null> {
  const { rows } = await pool.query<SubscriptionRow>(`SELECT ${SUBSCRIPTION} ${LIVE} WHERE s.id = $1`, [id]);
  return rows[0] ?? null;
}

export interface SubscriptionFilter {
  status?: SubscriptionStatus;
  product?: Product;
  customer_id?: string;
}

export async function listSubscriptions(
  pool: Pool,
  filter: SubscriptionFilter,
  page: { limit: number; offset: number },
): Promise<Rows<SubscriptionRow>> {
  const w = where([
    filter.status && ['s.status = ?', filter.status],
    filter.product && ['s.product = ?', filter.product],
    filter.customer_id && ['s.customer_id = ?', filter.customer_id],
  ]);
  return paged<SubscriptionRow>(pool, SUBSCRIPTION, LIVE, w, 's.created_at, s.id', page);
}
