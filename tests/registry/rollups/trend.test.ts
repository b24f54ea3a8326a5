// The trend, as of each month end from the log's history: figures for a past month never change
// when data changes later (the injected clock moves across month ends), a month without events
// carries the totals over with no new or churned customers, and the month in progress matches
// the summary exactly.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { interactive, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const test = suite<{ s: TestServices; admin: Interactive }>('registry trend');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_trend', REGISTRY_ENV);
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
});
test.after(async ({ s }) => s?.close());

/** Move the clock to the second day of the next month (UTC). */
function toNextMonth(s: TestServices): void {
  const now = s.clock.now();
  const target = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2, 12);
  s.clock.advance(target - now.getTime());
}

type Point = {
  month: string;
  complete: boolean;
  mrr_cents: number;
  arr_cents: number;
  customers_total: number;
  customers_by_status: Record<string, number>;
  new_customers: number;
  churned_customers: number;
  month_end: string;
};

async function trend(s: TestServices, admin: Interactive, months = 12): Promise<Point[]> {
  const r = await http(`${s.registry}/api/v1/summary/trend?months=${months}`, { headers: admin.headers });
  assert.is(r.status, 200, r.text);
  return r.body.months;
}

test('past months stay as they were when data changes after their end', async ({ s, admin }) => {
  const post = (path: string, json: unknown) => http(`${s.registry}/api/v1${path}`, { headers: admin.headers, json });
  const patch = (path: string, json: unknown) =>
    http(`${s.registry}/api/v1${path}`, { method: 'PATCH', headers: admin.headers, json });

  // Month 0: two customers, one active subscription.
  assert.is((await post('/customers', { slug: 'acme', name: 'Acme', status: 'paying' })).status, 201);
  assert.is((await post('/customers', { slug: 'bolt', name: 'Bolt' })).status, 201);
  const sub = (
    await post('/subscriptions', { customer_slug: 'acme', product: 'chat', status: 'active', mrr_cents: 10_000 })
  ).body;
  assert.is((await post('/subscriptions', { customer_slug: 'bolt', product: 'chat', mrr_cents: 0 })).status, 201);
  const m0 = (await trend(s, admin)).at(-1)!;
  assert.is(m0.complete, false);
  assert.is(m0.mrr_cents, 10_000);
  assert.is(m0.arr_cents, 120_000);
  assert.is(m0.new_customers, 2);
  assert.is(m0.customers_by_status.paying, 1);
  assert.is(m0.customers_by_status.lead, 1);
  assert.is(m0.customers_total, 2);

  // Month 1: revenue doubles, bolt churns, a new customer arrives.
  toNextMonth(s);
  assert.is((await patch(`/subscriptions/${sub.id}`, { mrr_cents: 20_000 })).status, 200);
  assert.is((await patch('/customers/bolt', { status: 'churned' })).status, 200);
  assert.is((await post('/customers', { slug: 'cogs', name: 'Cogs', status: 'trial' })).status, 201);
  const after1 = await trend(s, admin);
  const [closed0, running1] = after1.slice(-2);
  assert.is(closed0!.month, m0.month);
  assert.is(closed0!.complete, true);
  assert.is(closed0!.month_end.slice(0, 7), m0.month);
  assert.match(closed0!.month_end, /T23:59:59\.999Z$/);
  const { month_end: _a, complete: _b, ...m0Figures } = m0;
  const { month_end: _c, complete: _d, ...closed0Figures } = closed0!;
  assert.equal(closed0Figures, m0Figures, "month 0 is unchanged by month 1's changes");
  assert.is(running1!.mrr_cents, 20_000);
  assert.is(running1!.churned_customers, 1);
  assert.is(running1!.new_customers, 1);
  assert.equal(running1!.customers_by_status, { lead: 0, trial: 1, paying: 1, churned: 1, internal: 0 });

  // Month 2 passes without an event; month 3: acme is deleted.
  toNextMonth(s);
  toNextMonth(s);
  assert.is(
    (await http(`${s.registry}/api/v1/customers/acme`, { method: 'DELETE', headers: admin.headers })).status,
    204,
  );
  const after3 = await trend(s, admin);
  const [c0, c1, c2, r3] = after3.slice(-4);
  assert.equal({ ...c0, month_end: '', complete: false }, { ...closed0!, month_end: '', complete: false });
  assert.equal(
    { ...c1, month_end: '', complete: false },
    { ...running1!, month_end: '', complete: false },
    'month 1 as it was while running',
  );
  assert.is(c2!.mrr_cents, 20_000, 'a quiet month carries the totals');
  assert.is(c2!.new_customers, 0);
  assert.is(c2!.churned_customers, 0);
  assert.equal(c2!.customers_by_status, running1!.customers_by_status);
  assert.is(r3!.mrr_cents, 0, "a deleted customer's revenue leaves the month it was deleted in");
  assert.is(r3!.customers_total, 2);
  assert.is(r3!.churned_customers, 0, 'a deletion is not a churn');

  // The month in progress is exactly the summary.
  const summary = (await http(`${s.registry}/api/v1/summary`, { headers: admin.headers })).body;
  assert.is(r3!.mrr_cents, summary.mrr_cents);
  assert.equal(r3!.customers_by_status, summary.customers_by_status);
  // Months before the first event are zeros; the window is `months` long, oldest first.
  const twelve = await trend(s, admin, 12);
  assert.is(twelve.length, 12);
  assert.is(twelve[0]!.mrr_cents, 0);
  assert.is(twelve[0]!.customers_total, 0);
  assert.ok(twelve.every((p, i) => i === 0 || p.month > twelve[i - 1]!.month));
  assert.is((await trend(s, admin, 2)).length, 2);
});

test('months: default 12, 1-60, otherwise 422; customers:read', async ({ s, admin }) => {
  const r = await http(`${s.registry}/api/v1/summary/trend`, { headers: admin.headers });
  assert.is(r.body.months.length, 12);
  assert.ok(Date.parse(r.body.as_of) > 0);
  for (const months of ['0', '61', 'x', '1.5'])
    assert.is(
      (await http(`${s.registry}/api/v1/summary/trend?months=${months}`, { headers: admin.headers })).status,
      422,
      months,
    );
  assert.is(
    (await http(`${s.registry}/api/v1/summary/trend?months=60`, { headers: admin.headers })).body.months.length,
    60,
  );
});

test.run();
