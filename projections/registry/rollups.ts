// Read-only rollups over the registry's read models: the summary, the rollout spread, the
// derived signals and the counts of the status view. Exact: aggregates over the current rows,
// live customers only (a deleted customer's deployments and subscriptions are left out).

import { CHANNELS, CUSTOMER_STATUSES, PRODUCTS, SUBSCRIPTION_STATUSES } from '../../domain/registry/catalog.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { day, paged, ts, type Rows } from './columns.ts';

const tally = <K extends string>(keys: readonly K[], rows: { key: string; n: number }[]): Record<K, number> => {
  const out = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  for (const r of rows) if (r.key in out) out[r.key as K] = r.n;
  return out;
};

export interface Summary {
  customers_total: number;
  customers_by_status: Record<(typeof CUSTOMER_STATUSES)[number], number>;
  paying_customers: number;
  mrr_cents: number;
  arr_cents: number;
  subscriptions_by_status: Record<(typeof SUBSCRIPTION_STATUSES)[number], number>;
  deployments_by_product: Record<(typeof PRODUCTS)[number], number>;
  deployments_by_channel: Record<(typeof CHANNELS)[number], number>;
}

/**
 * The summary computed from the rows, in one statement: what the `registry_summary` counters
 * (summary.ts) must always equal; the tests compare the two. `paying_customers` counts live
 * customers with at least one active subscription of positive MRR.
 */
export async function summaryByScan(pool: Pool): Promise<Summary> {
  const { rows } = await pool.query<{ part: string; key: string; n: string }>(`
    SELECT 'customers' AS part, status AS key, count(*)::text AS n FROM registry_customers WHERE deleted_at IS NULL GROUP BY status
    UNION ALL
    SELECT 'subscriptions', s.status, count(*)::text FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL GROUP BY s.status
    UNION ALL
    SELECT 'mrr', '', coalesce(sum(s.mrr_cents), 0)::text FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL WHERE s.status = 'active'
    UNION ALL
    SELECT 'paying', '', count(DISTINCT s.customer_id)::text FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL WHERE s.status = 'active' AND s.mrr_cents > 0
    UNION ALL
    SELECT 'product', d.product, count(*)::text FROM registry_deployments d JOIN registry_customers c ON c.id = d.customer_id AND c.deleted_at IS NULL GROUP BY d.product
    UNION ALL
    SELECT 'channel', d.channel, count(*)::text FROM registry_deployments d JOIN registry_customers c ON c.id = d.customer_id AND c.deleted_at IS NULL GROUP BY d.channel`);
  const part = (name: string) => rows.filter((r) => r.part === name).map((r) => ({ key: r.key, n: Number(r.n) }));
  const customers = tally(CUSTOMER_STATUSES, part('customers'));
  const mrr = part('mrr')[0]?.n ?? 0;
  return {
    customers_total: Object.values(customers).reduce((a, b) => a + b, 0),
    customers_by_status: customers,
    paying_customers: part('paying')[0]?.n ?? 0,
    mrr_cents: mrr,
    arr_cents: mrr * 12,
    subscriptions_by_status: tally(SUBSCRIPTION_STATUSES, part('subscriptions')),
    deployments_by_product: tally(PRODUCTS, part('product')),
    deployments_by_channel: tally(CHANNELS, part('channel')),
  };
}

export interface RolloutRow {
  product: string;
  version: string;
  channel: string;
  n: number;
}

/** Live deployments counted by (product, version, channel). */
export async function rolloutCounts(pool: Pool, product?: string): Promise<RolloutRow[]> {
  const { rows } = await pool.query<RolloutRow>(
    `SELECT d.product, d.version, d.channel, count(*)::int AS n FROM registry_deployments d
     JOIN registry_customers c ON c.id = d.customer_id AND c.deleted_at IS NULL
     ${product ? 'WHERE d.product = $1' : ''} GROUP BY d.product, d.version, d.channel`,
    product ? [product] : [],
  );
  return rows;
}

export type SignalKind = 'at_risk' | 'stale_deployment' | 'renewal_due' | 'stale_lead';
export const SIGNAL_KINDS: readonly SignalKind[] = ['at_risk', 'stale_deployment', 'renewal_due', 'stale_lead'];

export interface SignalRow {
  kind: SignalKind;
  customer_id: string;
  customer_slug: string;
  customer_name: string;
  subject_type: 'customer' | 'deployment' | 'subscription';
  subject_id: string;
  product: string | null;
  /** The date or time the signal is about: renewal date, last seen, next action date. */
  since: string | null;
}

export const STALE_DEPLOYMENT_DAYS = 14;
export const RENEWAL_WINDOW_DAYS = 30;

/**
 * Derived signals at `now`: a `past_due` subscription (at_risk); a deployment not seen for 14
 * days, or never seen and registered more than 14 days ago (stale_deployment); a renewal date
 * from today to 30 days ahead, on a subscription not cancelled (renewal_due); a lead whose next
 * action date has passed (stale_lead). Dates compare in UTC.
 */
export async function signals(
  pool: Pool,
  now: Date,
  filter: { kind?: SignalKind },
  page: { limit: number; offset: number },
): Promise<Rows<SignalRow>> {
  const parts: Record<SignalKind, string> = {
    at_risk: `SELECT 'at_risk' AS kind, c.id AS customer_id, c.slug AS customer_slug, c.name AS customer_name, 'subscription' AS subject_type, s.id AS subject_id, s.product, ${day('s.renewal_date', 'since')}
      FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL WHERE s.status = 'past_due'`,
    stale_deployment: `SELECT 'stale_deployment' AS kind, c.id AS customer_id, c.slug AS customer_slug, c.name AS customer_name, 'deployment' AS subject_type, d.id AS subject_id, d.product, ${ts('coalesce(d.last_seen_at, d.first_deployed_at)', 'since')}
      FROM registry_deployments d JOIN registry_customers c ON c.id = d.customer_id AND c.deleted_at IS NULL
      WHERE coalesce(d.last_seen_at, d.first_deployed_at) < $1::timestamptz - interval '${STALE_DEPLOYMENT_DAYS} days'`,
    renewal_due: `SELECT 'renewal_due' AS kind, c.id AS customer_id, c.slug AS customer_slug, c.name AS customer_name, 'subscription' AS subject_type, s.id AS subject_id, s.product, ${day('s.renewal_date', 'since')}
      FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL
      WHERE s.status <> 'cancelled' AND s.renewal_date BETWEEN ($1::timestamptz AT TIME ZONE 'UTC')::date AND ($1::timestamptz AT TIME ZONE 'UTC')::date + ${RENEWAL_WINDOW_DAYS}`,
    stale_lead: `SELECT 'stale_lead' AS kind, c.id AS customer_id, c.slug AS customer_slug, c.name AS customer_name, 'customer' AS subject_type, c.id AS subject_id, NULL AS product, ${day('c.next_action_date', 'since')}
      FROM registry_customers c WHERE c.deleted_at IS NULL AND c.status = 'lead' AND c.next_action_date < ($1::timestamptz AT TIME ZONE 'UTC')::date`,
  };
  const chosen = filter.kind ? [parts[filter.kind]] : SIGNAL_KINDS.map((k) => parts[k]);
  const union = chosen.map((p) => `(${p})`).join(' UNION ALL ');
  // The union reads the clock as $1, unless no chosen part does (at_risk alone): PostgreSQL
  // refuses a parameter that no part of the statement types.
  const params = chosen.some((p) => p.includes('$1')) ? [now] : [];
  return paged<SignalRow>(pool, '*', `FROM (${union}) x`, { sql: '', params }, 'kind, customer_slug, subject_id', page);
}

export interface RegistryCounts {
  customers: number;
  deployments: number;
  subscriptions: number;
  contacts: number;
  active_tokens: number;
}

export async function registryCounts(pool: Pool, now: Date): Promise<RegistryCounts> {
  const { rows } = await pool.query<RegistryCounts>(
    `SELECT
    (SELECT count(*)::int FROM registry_customers WHERE deleted_at IS NULL) AS customers,
    (SELECT count(*)::int FROM registry_deployments d JOIN registry_customers c ON c.id = d.customer_id AND c.deleted_at IS NULL) AS deployments,
    (SELECT count(*)::int FROM registry_subscriptions s JOIN registry_customers c ON c.id = s.customer_id AND c.deleted_at IS NULL) AS subscriptions,
    (SELECT count(*)::int FROM registry_contacts t JOIN registry_customers c ON c.id = t.customer_id AND c.deleted_at IS NULL) AS contacts,
    (SELECT count(*)::int FROM registry_tokens WHERE revoked_at IS NULL AND expires_at > $1) AS active_tokens`,
    [now],
  );
  return rows[0]!;
}
