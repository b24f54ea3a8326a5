// The summary read model (`registry_summary`): the figures of GET /api/v1/summary kept as
// counters (customers by status, paying customers, MRR over active subscriptions,
// subscriptions by status, deployments by product and channel), each moved by the event that
// changes it, for live customers only. Reading the summary is then one small query whatever
// the registry's size; `summaryByScan` (rollups.ts) computes the same figures from the rows,
// and the tests hold the two equal.

import { CHANNELS, CUSTOMER_STATUSES, PRODUCTS, SUBSCRIPTION_STATUSES } from '../../domain/registry/catalog.ts';
import type { CustomerEvent } from '../../domain/registry/customers/events.ts';
import type { DeploymentEvent } from '../../domain/registry/deployments/events.ts';
import type { SubscriptionEvent } from '../../domain/registry/subscriptions/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import type { Summary } from './rollups.ts';

type SummaryEvent =
  | Extract<CustomerEvent, { type: 'CustomerCreated' | 'CustomerUpdated' | 'CustomerDeleted' }>
  | SubscriptionEvent
  | DeploymentEvent;

type Metric = 'customers' | 'subscriptions' | 'mrr' | 'paying' | 'product' | 'channel';

async function bump(tx: PoolClient, metric: Metric, key: string, delta: number): Promise<void> {
  if (delta === 0) return;
  await tx.query(
    `INSERT INTO registry_summary_counters (metric, key, n) VALUES ($1, $2, $3)
     ON CONFLICT (metric, key) DO UPDATE SET n = registry_summary_counters.n + EXCLUDED.n`,
    [metric, key, delta],
  );
}

const paying = (status: string, mrr: number) => status === 'active' && mrr > 0;

async function liveCustomer(tx: PoolClient, customerId: string): Promise<boolean> {
  const { rows } = await tx.query<{ deleted: boolean }>(
    'SELECT deleted FROM registry_summary_customers WHERE customer_id = $1',
    [customerId],
  );
  return rows[0]?.deleted === false;
}

/** A live customer's count of paying subscriptions moves by `delta`; the paying-customer count follows when it crosses zero. */
async function movePaying(tx: PoolClient, customerId: string, delta: number): Promise<void> {
  if (delta === 0) return;
  const { rows } = await tx.query<{ paying_subs: number }>(
    'UPDATE registry_summary_customers SET paying_subs = paying_subs + $2 WHERE customer_id = $1 RETURNING paying_subs',
    [customerId, delta],
  );
  const after = rows[0]?.paying_subs ?? 0;
  const before = after - delta;
  if (before <= 0 && after > 0) await bump(tx, 'paying', '', 1);
  if (before > 0 && after <= 0) await bump(tx, 'paying', '', -1);
}

export const summaryProjection = defineProjection<SummaryEvent>({
  name: 'registry_summary',
  handles: [
    'CustomerCreated',
    'CustomerUpdated',
    'CustomerDeleted',
    'SubscriptionCreated',
    'SubscriptionUpdated',
    'DeploymentRegistered',
    'DeploymentUpdated',
  ],
  tables: [
    'registry_summary_customers',
    'registry_summary_subscriptions',
    'registry_summary_deployments',
    'registry_summary_counters',
  ],
  async apply(event, tx) {
    switch (event.type) {
      case 'CustomerCreated':
        await tx.query('INSERT INTO registry_summary_customers (customer_id, status) VALUES ($1, $2)', [
          event.data.customer_id,
          event.data.status,
        ]);
        await bump(tx, 'customers', event.data.status, 1);
        return;
      case 'CustomerUpdated': {
        const change = event.data.changes.status;
        if (!change) return;
        const { rows } = await tx.query<{ deleted: boolean }>(
          'UPDATE registry_summary_customers SET status = $2 WHERE customer_id = $1 RETURNING deleted',
          [event.data.customer_id, change.after],
        );
        if (rows[0]?.deleted === false) {
          await bump(tx, 'customers', String(change.before), -1);
          await bump(tx, 'customers', String(change.after), 1);
        }
        return;
      }
      case 'CustomerDeleted': {
        const id = event.data.customer_id;
        const { rows } = await tx.query<{ status: string; paying_subs: number }>(
          'UPDATE registry_summary_customers SET deleted = true WHERE customer_id = $1 AND NOT deleted RETURNING status, paying_subs',
          [id],
        );
        if (!rows[0]) return;
        await bump(tx, 'customers', rows[0].status, -1);
        if (rows[0].paying_subs > 0) await bump(tx, 'paying', '', -1);
        const subs = await tx.query<{ status: string; n: number; active_mrr: string }>(
          `SELECT status, count(*)::int AS n, sum(CASE WHEN status = 'active' THEN mrr_cents ELSE 0 END)::text AS active_mrr
           FROM registry_summary_subscriptions WHERE customer_id = $1 GROUP BY status`,
          [id],
        );
        for (const s of subs.rows) {
          await bump(tx, 'subscriptions', s.status, -s.n);
          await bump(tx, 'mrr', '', -Number(s.active_mrr));
        }
        const deps = await tx.query<{ product: string; channel: string; n: number }>(
          'SELECT product, channel, count(*)::int AS n FROM registry_summary_deployments WHERE customer_id = $1 GROUP BY product, channel',
          [id],
        );
        for (const d of deps.rows) {
          await bump(tx, 'product', d.product, -d.n);
          await bump(tx, 'channel', d.channel, -d.n);
        }
        return;
      }
      case 'SubscriptionCreated': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_summary_subscriptions (subscription_id, customer_id, status, mrr_cents) VALUES ($1, $2, $3, $4)',
          [d.subscription_id, d.customer_id, d.status, d.mrr_cents],
        );
        if (!(await liveCustomer(tx, d.customer_id))) return;
        await bump(tx, 'subscriptions', d.status, 1);
        if (d.status === 'active') await bump(tx, 'mrr', '', d.mrr_cents);
        if (paying(d.status, d.mrr_cents)) await movePaying(tx, d.customer_id, 1);
        return;
      }
      case 'SubscriptionUpdated': {
        const { changes, subscription_id, customer_id } = event.data;
        if (!changes.status && !changes.mrr_cents) return;
        const { rows } = await tx.query<{ status: string; mrr_cents: string }>(
          'SELECT status, mrr_cents::text AS mrr_cents FROM registry_summary_subscriptions WHERE subscription_id = $1',
          [subscription_id],
        );
        if (!rows[0]) return;
        const was = { status: rows[0].status, mrr: Number(rows[0].mrr_cents) };
        const now = {
          status: (changes.status?.after as string) ?? was.status,
          mrr: (changes.mrr_cents?.after as number) ?? was.mrr,
        };
        await tx.query(
          'UPDATE registry_summary_subscriptions SET status = $2, mrr_cents = $3 WHERE subscription_id = $1',
          [subscription_id, now.status, now.mrr],
        );
        if (!(await liveCustomer(tx, customer_id))) return;
        if (now.status !== was.status) {
          await bump(tx, 'subscriptions', was.status, -1);
          await bump(tx, 'subscriptions', now.status, 1);
        }
        await bump(tx, 'mrr', '', (now.status === 'active' ? now.mrr : 0) - (was.status === 'active' ? was.mrr : 0));
        await movePaying(tx, customer_id, Number(paying(now.status, now.mrr)) - Number(paying(was.status, was.mrr)));
        return;
      }
      case 'DeploymentRegistered': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_summary_deployments (deployment_id, customer_id, product, channel) VALUES ($1, $2, $3, $4)',
          [d.deployment_id, d.customer_id, d.product, d.channel],
        );
        if (!(await liveCustomer(tx, d.customer_id))) return;
        await bump(tx, 'product', d.product, 1);
        await bump(tx, 'channel', d.channel, 1);
        return;
      }
      case 'DeploymentUpdated': {
        const change = event.data.changes.channel;
        if (!change) return;
        await tx.query('UPDATE registry_summary_deployments SET channel = $2 WHERE deployment_id = $1', [
          event.data.deployment_id,
          change.after,
        ]);
        if (!(await liveCustomer(tx, event.data.customer_id))) return;
        await bump(tx, 'channel', String(change.before), -1);
        await bump(tx, 'channel', String(change.after), 1);
        return;
      }
    }
  },
});

const tally = <K extends string>(
  keys: readonly K[],
  rows: { metric: string; key: string; n: string }[],
  metric: Metric,
): Record<K, number> => {
  const out = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  for (const r of rows) if (r.metric === metric && r.key in out) out[r.key as K] = Number(r.n);
  return out;
};

/** The summary from the counters: one query. */
export async function summary(pool: Pool): Promise<Summary> {
  const { rows } = await pool.query<{ metric: string; key: string; n: string }>(
    'SELECT metric, key, n::text AS n FROM registry_summary_counters',
  );
  const single = (metric: Metric) => Number(rows.find((r) => r.metric === metric)?.n ?? 0);
  const customers = tally(CUSTOMER_STATUSES, rows, 'customers');
  const mrr = single('mrr');
  return {
    customers_total: Object.values(customers).reduce((a, b) => a + b, 0),
    customers_by_status: customers,
    paying_customers: single('paying'),
    mrr_cents: mrr,
    arr_cents: mrr * 12,
    subscriptions_by_status: tally(SUBSCRIPTION_STATUSES, rows, 'subscriptions'),
    deployments_by_product: tally(PRODUCTS, rows, 'product'),
    deployments_by_channel: tally(CHANNELS, rows, 'channel'),
  };
}
