// The trend read model (`registry_trend`): month-end figures computed from the log's history.
//
// Running totals (MRR over active subscriptions of live customers, customers by status, and the
// month's new and churned customers) follow the log event by event, each event counted in the
// month of its `at`. When the first event of a later month arrives, every month from the
// running one up to the month before it is closed: its figures are copied into
// `registry_trend_months` and never written again. So a past month never changes when data
// changes later, and reading twelve months is twelve rows. An event whose `at` falls in a month
// already closed (a writer that read the clock just before midnight and appended just after)
// counts from the running month on: the past stays as it was published.
//
// Months are calendar months in UTC. "New" counts customers created in the month; "churned"
// counts customers whose status moved to `churned` in it (deleting a customer removes it from
// the totals but is not a churn).

import { CUSTOMER_STATUSES, type CustomerStatus, type SubscriptionStatus } from '../../domain/registry/catalog.ts';
import type { CustomerEvent } from '../../domain/registry/customers/events.ts';
import type { SubscriptionEvent } from '../../domain/registry/subscriptions/events.ts';
import type { Pool, PoolClient } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

type TrendEvent =
  Extract<CustomerEvent, { type: 'CustomerCreated' | 'CustomerUpdated' | 'CustomerDeleted' }> | SubscriptionEvent;

export interface MonthFigures {
  mrr_cents: number;
  by_status: Record<CustomerStatus, number>;
  new_customers: number;
  churned_customers: number;
}

interface State extends MonthFigures {
  /** YYYY-MM-01 of the running month. */
  month: string;
}

/** `YYYY-MM-01` of an ISO instant, in UTC. */
export const monthOf = (at: string | Date) => `${new Date(at).toISOString().slice(0, 7)}-01`;

/** The first day of the month after `month` (YYYY-MM-01). */
export function nextMonth(month: string): string {
  const d = new Date(`${month}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString().slice(0, 10);
}

const zeroStatus = (): Record<CustomerStatus, number> =>
  Object.fromEntries(CUSTOMER_STATUSES.map((s) => [s, 0])) as Record<CustomerStatus, number>;
const STATUS_COLUMNS = CUSTOMER_STATUSES.join(', ');

interface FigureRow {
  mrr_cents: string;
  new_customers: number;
  churned_customers: number;
  lead: number;
  trial: number;
  paying: number;
  churned: number;
  internal: number;
}

function figures(row: FigureRow): MonthFigures {
  const by_status = zeroStatus();
  for (const s of CUSTOMER_STATUSES) by_status[s] = row[s];
  return {
    mrr_cents: Number(row.mrr_cents),
    by_status,
    new_customers: row.new_customers,
    churned_customers: row.churned_customers,
  };
}

async function loadState(tx: PoolClient): Promise<State | null> {
  const { rows } = await tx.query<FigureRow & { month: string }>(
    `SELECT to_char(month, 'YYYY-MM-DD') AS month, mrr_cents::text AS mrr_cents, new_customers, churned_customers, ${STATUS_COLUMNS} FROM registry_trend_state WHERE id = 1`,
  );
  return rows[0] ? { month: rows[0].month, ...figures(rows[0]) } : null;
}

async function saveState(tx: PoolClient, s: State): Promise<void> {
  await tx.query(
    `INSERT INTO registry_trend_state (id, month, mrr_cents, new_customers, churned_customers, ${STATUS_COLUMNS})
     VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (id) DO UPDATE SET month = $1, mrr_cents = $2, new_customers = $3, churned_customers = $4,
       lead = $5, trial = $6, paying = $7, churned = $8, internal = $9`,
    [s.month, s.mrr_cents, s.new_customers, s.churned_customers, ...CUSTOMER_STATUSES.map((k) => s.by_status[k])],
  );
}

/** Close every month from the running one up to (not including) `month`. */
async function closeMonthsBefore(tx: PoolClient, s: State, month: string, closedAt: string): Promise<void> {
  while (s.month < month) {
    await tx.query(
      `INSERT INTO registry_trend_months (month, mrr_cents, new_customers, churned_customers, ${STATUS_COLUMNS}, closed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (month) DO NOTHING`,
      [
        s.month,
        s.mrr_cents,
        s.new_customers,
        s.churned_customers,
        ...CUSTOMER_STATUSES.map((k) => s.by_status[k]),
        closedAt,
      ],
    );
    s.month = nextMonth(s.month);
    s.new_customers = 0;
    s.churned_customers = 0;
  }
}

const contribution = (status: SubscriptionStatus | string, mrr: number) => (status === 'active' ? mrr : 0);

async function customerLive(tx: PoolClient, customerId: string): Promise<boolean> {
  const { rows } = await tx.query<{ deleted: boolean }>(
    'SELECT deleted FROM registry_trend_customers WHERE customer_id = $1',
    [customerId],
  );
  return rows[0]?.deleted === false;
}

export const trendProjection = defineProjection<TrendEvent>({
  name: 'registry_trend',
  handles: ['CustomerCreated', 'CustomerUpdated', 'CustomerDeleted', 'SubscriptionCreated', 'SubscriptionUpdated'],
  tables: ['registry_trend_customers', 'registry_trend_subscriptions', 'registry_trend_state', 'registry_trend_months'],
  async apply(event, tx) {
    const month = monthOf(event.data.at);
    const s: State = (await loadState(tx)) ?? {
      month,
      mrr_cents: 0,
      by_status: zeroStatus(),
      new_customers: 0,
      churned_customers: 0,
    };
    await closeMonthsBefore(tx, s, month, event.data.at);
    switch (event.type) {
      case 'CustomerCreated':
        await tx.query('INSERT INTO registry_trend_customers (customer_id, status) VALUES ($1, $2)', [
          event.data.customer_id,
          event.data.status,
        ]);
        s.by_status[event.data.status] += 1;
        s.new_customers += 1;
        break;
      case 'CustomerUpdated': {
        const change = event.data.changes.status;
        if (!change) return saveState(tx, s);
        const before = change.before as CustomerStatus;
        const after = change.after as CustomerStatus;
        await tx.query('UPDATE registry_trend_customers SET status = $2 WHERE customer_id = $1', [
          event.data.customer_id,
          after,
        ]);
        s.by_status[before] -= 1;
        s.by_status[after] += 1;
        if (after === 'churned') s.churned_customers += 1;
        break;
      }
      case 'CustomerDeleted': {
        const { rows } = await tx.query<{ status: CustomerStatus; active_mrr: string }>(
          `UPDATE registry_trend_customers SET deleted = true WHERE customer_id = $1 AND NOT deleted
           RETURNING status, (SELECT coalesce(sum(mrr_cents), 0)::text FROM registry_trend_subscriptions WHERE customer_id = $1 AND status = 'active') AS active_mrr`,
          [event.data.customer_id],
        );
        if (rows[0]) {
          s.by_status[rows[0].status] -= 1;
          s.mrr_cents -= Number(rows[0].active_mrr);
        }
        break;
      }
      case 'SubscriptionCreated': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_trend_subscriptions (subscription_id, customer_id, status, mrr_cents) VALUES ($1, $2, $3, $4)',
          [d.subscription_id, d.customer_id, d.status, d.mrr_cents],
        );
        if (await customerLive(tx, d.customer_id)) s.mrr_cents += contribution(d.status, d.mrr_cents);
        break;
      }
      case 'SubscriptionUpdated': {
        const { changes, subscription_id, customer_id } = event.data;
        if (!changes.status && !changes.mrr_cents) return saveState(tx, s);
        const { rows } = await tx.query<{ status: string; mrr_cents: string }>(
          'SELECT status, mrr_cents::text AS mrr_cents FROM registry_trend_subscriptions WHERE subscription_id = $1',
          [subscription_id],
        );
        const was = { status: rows[0]?.status ?? 'cancelled', mrr: Number(rows[0]?.mrr_cents ?? 0) };
        const now = {
          status: (changes.status?.after as string) ?? was.status,
          mrr: (changes.mrr_cents?.after as number) ?? was.mrr,
        };
        await tx.query(
          'UPDATE registry_trend_subscriptions SET status = $2, mrr_cents = $3 WHERE subscription_id = $1',
          [subscription_id, now.status, now.mrr],
        );
        if (await customerLive(tx, customer_id))
          s.mrr_cents += contribution(now.status, now.mrr) - contribution(was.status, was.mrr);
        break;
      }
    }
    await saveState(tx, s);
  },
});

// --- queries ---------------------------------------------------------------------------------

export interface TrendMonth extends MonthFigures {
  /** YYYY-MM-01 */
  month: string;
  /** Closed months are final; the running month and later ones follow the log. */
  closed: boolean;
}

/**
 * Figures for each month from `first` to `last` (YYYY-MM-01, inclusive): closed months as they
 * were closed; months before the log's first registry event as zeros; the running month and any
 * later month with the running totals (a later month has had no event yet, so nothing new).
 */
export async function trendMonths(pool: Pool, first: string, last: string): Promise<TrendMonth[]> {
  const [closed, state] = await Promise.all([
    pool.query<FigureRow & { month: string }>(
      `SELECT to_char(month, 'YYYY-MM-DD') AS month, mrr_cents::text AS mrr_cents, new_customers, churned_customers, ${STATUS_COLUMNS}
       FROM registry_trend_months WHERE month BETWEEN $1 AND $2`,
      [first, last],
    ),
    pool.query<FigureRow & { month: string }>(
      `SELECT to_char(month, 'YYYY-MM-DD') AS month, mrr_cents::text AS mrr_cents, new_customers, churned_customers, ${STATUS_COLUMNS} FROM registry_trend_state WHERE id = 1`,
    ),
  ]);
  const byMonth = new Map(closed.rows.map((r) => [r.month, figures(r)]));
  const running = state.rows[0] ? { month: state.rows[0].month, ...figures(state.rows[0]) } : null;
  const out: TrendMonth[] = [];
  for (let month = first; month <= last; month = nextMonth(month)) {
    const done = byMonth.get(month);
    if (done) out.push({ month, closed: true, ...done });
    else if (!running || month < running.month)
      out.push({ month, closed: false, mrr_cents: 0, by_status: zeroStatus(), new_customers: 0, churned_customers: 0 });
    else {
      const quiet = month !== running.month;
      out.push({
        month,
        closed: false,
        mrr_cents: running.mrr_cents,
        by_status: { ...running.by_status },
        new_customers: quiet ? 0 : running.new_customers,
        churned_customers: quiet ? 0 : running.churned_customers,
      });
    }
  }
  return out;
}
