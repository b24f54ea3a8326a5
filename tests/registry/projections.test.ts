// The registry's read models: replaying the log into them from scratch (`orchard rebuild`)
// gives exactly what the live projections built, row for row, the closed trend months included.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { registryProjections } from '../../projections/registry/index.ts';
import { summaryByScan } from '../../projections/registry/rollups.ts';
import { summary } from '../../projections/registry/summary.ts';
import { interactive, mintToken, REGISTRY_ENV } from '../support/registry.ts';
import { http, startTestApps, type TestServices } from '../support/services.ts';

const TABLES: Record<string, string> = {
  registry_customers: 'id',
  registry_contacts: 'id',
  registry_touchpoints: 'id',
  registry_agreements: 'id',
  registry_usage: 'id',
  registry_deployments: 'id',
  registry_subscriptions: 'id',
  registry_tokens: 'id',
  registry_sessions: 'session_hash',
  registry_trend_customers: 'customer_id',
  registry_trend_subscriptions: 'subscription_id',
  registry_trend_state: 'id',
  registry_trend_months: 'month',
  registry_summary_customers: 'customer_id',
  registry_summary_subscriptions: 'subscription_id',
  registry_summary_deployments: 'deployment_id',
  registry_summary_counters: 'metric, key',
  registry_audit: 'commit_pos, prepare_pos',
};

const test = suite<{ s: TestServices }>('registry projections');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_projections', REGISTRY_ENV);
});
test.after(async ({ s }) => s?.close());

test('rebuilding every registry projection from the log reproduces the live read models', async ({ s }) => {
  const admin = await interactive(s, 'ada', 'admin');
  const api = `${s.registry}/api/v1`;
  const send = async (method: string, path: string, json?: unknown) => {
    const r = await http(`${api}${path}`, { method, headers: admin.headers, json });
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
    return r.body;
  };
  await send('POST', '/customers', { slug: 'acme', name: 'Acme', status: 'paying' });
  await send('POST', '/leads', { name: 'Bolt', email: 'b@bolt.test' });
  const sub = await send('POST', '/subscriptions', {
    customer_slug: 'acme',
    product: 'chat',
    status: 'active',
    mrr_cents: 900,
  });
  const dep = await send('POST', '/deployments', { customer_slug: 'acme', product: 'chat', version: '1.0.0' });
  await send('POST', '/customers/acme/contacts', { name: 'Cy', email: 'cy@acme.test' });
  await send('POST', '/customers/acme/touchpoints', {
    kind: 'call',
    summary: 'hi',
    occurred_at: '2026-01-01T00:00:00Z',
    contact_email: 'cy@acme.test',
  });
  await send('POST', '/customers/acme/agreements', { kind: 'msa', title: 'MSA', signed_at: '2026-01-01' });
  await send('POST', '/customers/acme/usage', {
    product: 'chat',
    metric: 'seats',
    quantity: 3,
    period_start: '2026-01-01T00:00:00Z',
    period_end: '2026-02-01T00:00:00Z',
  });
  s.clock.advance(40 * 86_400_000);
  await send('PATCH', `/subscriptions/${sub.id}`, { mrr_cents: 1200 });
  await send('PATCH', `/deployments/${dep.id}`, { version: '1.1.0' });
  await send('PATCH', '/customers/bolt', { status: 'churned' });
  await send('DELETE', '/customers/bolt');
  const token = await mintToken(s, admin, ['customers:read']);
  assert.is((await http(`${api}/customers`, { headers: token.headers })).status, 200);
  await send('DELETE', `/admin/tokens/${token.id}`);

  // The summary's counters equal the figures computed from the rows, after updates and a deletion.
  assert.equal(await summary(s.db.pool), await summaryByScan(s.db.pool));

  // One table at a time: a connection each would be many on a shared server.
  const snapshot = async () => {
    const out: Record<string, unknown[]> = {};
    for (const [t, key] of Object.entries(TABLES))
      out[t] = (await s.db.pool.query(`SELECT * FROM ${t} ORDER BY ${key}`)).rows;
    return out;
  };
  const live = await snapshot();
  for (const [table, rows] of Object.entries(live))
    if (table !== 'registry_sessions') assert.ok((rows as unknown[]).length > 0, table);
  await s.platform.engine.stop();
  for (const projection of registryProjections) {
    const applied = await s.platform.engine.rebuild(projection.name);
    if (projection.name !== 'registry_sessions') assert.ok(applied > 0, projection.name);
  }
  assert.equal(await snapshot(), live);
});

test.run();
