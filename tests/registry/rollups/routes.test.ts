// The rollups through real HTTP: summary (exact counts and revenue), rollout spread, status,
// the audit event stream (who changed what, with before/after, paged by position) and the
// derived signals.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { summaryByScan } from '../../../projections/registry/rollups.ts';
import { interactive, mintToken, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, loggedEvents, startTestApps, type TestServices } from '../../support/services.ts';

const DAY = 86_400_000;
const test = suite<{ s: TestServices; admin: Interactive; api: string }>('registry rollups');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_rollups', REGISTRY_ENV);
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
  ctx.api = `${ctx.s.registry}/api/v1`;
});
test.after(async ({ s }) => s?.close());

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test('summary: customers by status, paying customers, MRR over active subscriptions, ARR, subscriptions by status, deployments by product and channel', async ({
  s,
  admin,
  api,
}) => {
  const post = async (path: string, json: unknown) => {
    const r = await http(`${api}${path}`, { headers: admin.headers, json });
    assert.is(r.status, 201, r.text);
    return r.body;
  };
  const empty = await http(`${api}/summary`, { headers: admin.headers });
  assert.is(empty.status, 200);
  assert.is(empty.body.mrr_cents, 0);
  assert.equal(empty.body.deployments_by_product, { orchestration: 0, chat: 0, registry: 0 });
  await post('/customers', { slug: 'acme', name: 'Acme', status: 'paying' });
  await post('/customers', { slug: 'bolt', name: 'Bolt', status: 'paying' });
  await post('/customers', { slug: 'cogs', name: 'Cogs', status: 'trial' });
  await post('/customers', { slug: 'dusk', name: 'Dusk', status: 'internal' });
  await post('/subscriptions', { customer_slug: 'acme', product: 'chat', status: 'active', mrr_cents: 12_345 });
  await post('/subscriptions', { customer_slug: 'acme', product: 'orchestration', status: 'active', mrr_cents: 1 });
  await post('/subscriptions', { customer_slug: 'bolt', product: 'chat', status: 'past_due', mrr_cents: 5_000 });
  await post('/subscriptions', { customer_slug: 'cogs', product: 'chat', mrr_cents: 0 });
  await post('/subscriptions', { customer_slug: 'dusk', product: 'registry', status: 'active', mrr_cents: 0 });
  await post('/subscriptions', { customer_slug: 'dusk', product: 'chat', status: 'cancelled', mrr_cents: 999 });
  await post('/deployments', { customer_slug: 'acme', product: 'chat', version: '2.0.0', channel: 'stable' });
  await post('/deployments', { customer_slug: 'bolt', product: 'chat', version: '2.1.0', channel: 'canary' });
  await post('/deployments', { customer_slug: 'cogs', product: 'orchestration', version: '1.0.0', channel: 'beta' });
  const r = await http(`${api}/summary`, { headers: admin.headers });
  assert.equal(r.body, {
    customers_total: 4,
    customers_by_status: { lead: 0, trial: 1, paying: 2, churned: 0, internal: 1 },
    paying_customers: 1,
    mrr_cents: 12_346,
    arr_cents: 148_152,
    subscriptions_by_status: { trialing: 1, active: 3, past_due: 1, cancelled: 1 },
    deployments_by_product: { orchestration: 1, chat: 2, registry: 0 },
    deployments_by_channel: { canary: 1, beta: 1, stable: 1 },
  });
  // The deleted customer leaves every figure.
  await post('/customers', { slug: 'gone', name: 'Gone', status: 'paying' });
  await post('/subscriptions', { customer_slug: 'gone', product: 'chat', status: 'active', mrr_cents: 700 });
  assert.is((await http(`${api}/summary`, { headers: admin.headers })).body.mrr_cents, 13_046);
  assert.is((await http(`${api}/customers/gone`, { method: 'DELETE', headers: admin.headers })).status, 204);
  assert.equal((await http(`${api}/summary`, { headers: admin.headers })).body, r.body);
  // The counters the route reads equal the figures computed from the rows.
  assert.equal(await summaryByScan(s.db.pool), r.body);
  const token = await mintToken(s, admin, ['customers:read']);
  assert.is((await http(`${api}/summary`, { headers: token.headers })).status, 200);
});

test('rollout (deployments:read): per product, deployments per version and channel, share on the newest version', async ({
  s,
  admin,
  api,
}) => {
  for (const [customer_slug, version, channel] of [
    ['acme', '2.10.0', 'canary'],
    ['cogs', '2.9.1', 'stable'],
    ['dusk', '2.10.0-rc.1', 'beta'],
  ]) {
    assert.is(
      (
        await http(`${api}/deployments`, {
          headers: admin.headers,
          json: { customer_slug, product: 'chat', version, channel },
        })
      ).status,
      201,
    );
  }
  const token = await mintToken(s, admin, ['deployments:read']);
  const r = await http(`${api}/summary/rollout`, { headers: token.headers });
  assert.is(r.status, 200);
  const chat = r.body.products.find((p: { product: string }) => p.product === 'chat');
  assert.is(chat.total, 5);
  assert.is(chat.newest_version, '2.10.0');
  assert.is(chat.newest_version_share, 0.2);
  assert.equal(
    chat.versions.map((v: { version: string }) => v.version),
    ['2.10.0', '2.10.0-rc.1', '2.9.1', '2.1.0', '2.0.0'],
  );
  assert.equal(chat.channels, { canary: 2, beta: 1, stable: 2 });
  assert.equal(chat.versions[0].channels, { canary: 1, beta: 0, stable: 0 });
  const registry = r.body.products.find((p: { product: string }) => p.product === 'registry');
  assert.equal(registry, {
    product: 'registry',
    total: 0,
    newest_version: null,
    newest_version_share: 0,
    versions: [],
    channels: { canary: 0, beta: 0, stable: 0 },
  });
  const one = await http(`${api}/summary/rollout?product=orchestration`, { headers: token.headers });
  assert.equal(
    one.body.products.map((p: { product: string }) => p.product),
    ['orchestration'],
  );
  assert.is(one.body.products[0].newest_version_share, 1);
  assert.is((await http(`${api}/summary/rollout?product=crm`, { headers: token.headers })).status, 422);
  const customersOnly = await mintToken(s, admin, ['customers:read']);
  assert.is((await http(`${api}/summary/rollout`, { headers: customersOnly.headers })).status, 403);
});

test('status: database, log head, projection lag, counts, last change time', async ({ s, admin, api }) => {
  const r = await http(`${api}/status`, { headers: admin.headers });
  assert.is(r.status, 200);
  assert.is(r.body.status, 'ok');
  assert.is(r.body.database, 'ok');
  assert.match(r.body.log_head_position, /^\d+\/\d+$/);
  const names = r.body.projections.map((p: { name: string }) => p.name).sort();
  assert.equal(names, [
    'registry_audit',
    'registry_customers',
    'registry_deployments',
    'registry_sessions',
    'registry_subscriptions',
    'registry_summary',
    'registry_tokens',
    'registry_trend',
  ]);
  for (const p of r.body.projections) assert.is(p.lag_events, 0, p.name);
  assert.equal(r.body.counts, { customers: 4, deployments: 6, subscriptions: 6, contacts: 0, active_tokens: 3 });
  const changes = await loggedEvents(s, {
    eventTypes: ['CustomerDeleted', 'DeploymentRegistered', 'RegistryTokenCreated'],
  });
  assert.is(
    r.body.last_change_at,
    changes
      .map((e) => e.data.at as string)
      .sort()
      .at(-1),
  );
});

test('events: newest first, each with position, type, stream, actor, at and (updates) before/after; filters; paged by position', async ({
  s,
  admin,
  api,
}) => {
  const token = await mintToken(s, admin, ['customers:read', 'customers:write']);
  assert.is(
    (
      await http(`${api}/customers/acme`, {
        method: 'PATCH',
        headers: token.headers,
        json: { notes: 'vip', status: 'churned' },
      })
    ).status,
    200,
  );
  const r = await http(`${api}/events?limit=3`, { headers: token.headers });
  assert.is(r.status, 200);
  const [latest] = r.body.items;
  assert.equal(Object.keys(latest).sort(), [
    'actor',
    'at',
    'changes',
    'customer_slug',
    'data',
    'position',
    'stream',
    'type',
  ]);
  assert.is(latest.type, 'CustomerUpdated');
  assert.match(latest.stream, /^registry\.customer-/);
  assert.equal(latest.actor, { kind: 'service', id: `token:${token.id}` });
  assert.equal(latest.changes, {
    notes: { before: null, after: 'vip' },
    status: { before: 'paying', after: 'churned' },
  });
  assert.is(r.body.items[1].type, 'RegistryTokenCreated');
  assert.is(r.body.items[1].data.token_hash, undefined, 'no token hash in the audit stream');
  assert.is(r.body.next_before, r.body.items[2].position);
  const next = await http(`${api}/events?limit=3&before=${encodeURIComponent(r.body.next_before)}`, {
    headers: token.headers,
  });
  assert.is(next.body.items.length, 3);
  const all = await http(`${api}/events?limit=200`, { headers: token.headers });
  assert.equal(
    next.body.items.map((e: { position: string }) => e.position),
    all.body.items.slice(3, 6).map((e: { position: string }) => e.position),
  );
  assert.is(all.body.next_before, null);
  const acme = await http(`${api}/events?customer=acme&limit=200`, { headers: token.headers });
  assert.ok(acme.body.items.length >= 5);
  assert.ok(acme.body.items.every((e: { customer_slug: string }) => e.customer_slug === 'acme'));
  assert.ok(
    acme.body.items.some((e: { type: string }) => e.type === 'DeploymentRegistered'),
    'deployments and subscriptions name their customer',
  );
  const typed = await http(`${api}/events?type=SubscriptionCreated&limit=200`, { headers: token.headers });
  assert.is(typed.body.items.length, 7);
  assert.is((await http(`${api}/events?type=Nope`, { headers: token.headers })).status, 422);
  assert.is((await http(`${api}/events?before=yesterday`, { headers: token.headers })).status, 422);
  assert.ok((await loggedEvents(s, { eventTypes: ['RegistryTokenUsed'] })).length > 0);
  assert.not.ok(
    all.body.items.some((e: { type: string }) => e.type === 'RegistryTokenUsed'),
    'token uses are not changes',
  );
});

test('signals: at_risk, stale_deployment (14 days), renewal_due (30 days), stale_lead, each with the customer and the reason', async ({
  s,
  admin,
  api,
}) => {
  const now = s.clock.now().getTime();
  const post = async (path: string, json: unknown) =>
    assert.is((await http(`${api}${path}`, { headers: admin.headers, json })).status, 201);
  await post('/customers', { slug: 'lazy', name: 'Lazy Lead', next_action_date: day(now - 2 * DAY) });
  await post('/customers', { slug: 'keen', name: 'Keen Lead', next_action_date: day(now + 2 * DAY) });
  await post('/subscriptions', {
    customer_slug: 'cogs',
    product: 'orchestration',
    status: 'active',
    mrr_cents: 100,
    renewal_date: day(now + 10 * DAY),
  });
  await post('/subscriptions', {
    customer_slug: 'cogs',
    product: 'registry',
    status: 'active',
    mrr_cents: 100,
    renewal_date: day(now + 45 * DAY),
  });
  await post('/subscriptions', {
    customer_slug: 'dusk',
    product: 'orchestration',
    status: 'cancelled',
    renewal_date: day(now + 5 * DAY),
  });
  await post('/deployments', {
    customer_slug: 'keen',
    product: 'registry',
    version: '1',
    last_seen_at: new Date(now - 15 * DAY).toISOString(),
  });
  await post('/deployments', {
    customer_slug: 'keen',
    product: 'registry',
    version: '1',
    last_seen_at: new Date(now - 13 * DAY).toISOString(),
  });
  const r = await http(`${api}/signals`, { headers: admin.headers });
  assert.is(r.status, 200);
  const seen = r.body.items.map((i: { kind: string; customer: { slug: string } }) => `${i.kind}:${i.customer.slug}`);
  assert.equal(seen, ['at_risk:bolt', 'renewal_due:cogs', 'stale_deployment:keen', 'stale_lead:lazy']);
  assert.is(r.body.total, 4);
  const risk = r.body.items[0];
  assert.equal(risk.customer, { slug: 'bolt', name: 'Bolt' });
  assert.is(risk.reason, 'chat subscription is past_due');
  assert.is(risk.subject.type, 'subscription');
  assert.match(r.body.items[1].reason, /orchestration subscription renews on \d{4}-\d\d-\d\d/);
  assert.match(r.body.items[2].reason, /registry deployment not seen since/);
  assert.match(r.body.items[3].reason, /next action was due/);
  assert.equal(
    (await http(`${api}/signals?kind=stale_lead`, { headers: admin.headers })).body.items.map(
      (i: { customer: { slug: string } }) => i.customer.slug,
    ),
    ['lazy'],
  );
  assert.is((await http(`${api}/signals?kind=gloomy`, { headers: admin.headers })).status, 422);
  // A kind that does not read the clock, with paging.
  const risky = await http(`${api}/signals?kind=at_risk&limit=5&offset=0`, { headers: admin.headers });
  assert.is(risky.status, 200, risky.text);
  assert.equal(
    risky.body.items.map((i: { customer: { slug: string } }) => i.customer.slug),
    ['bolt'],
  );
  assert.is(risky.body.total, 1);
  // Time passes: the other deployment goes stale too, and the lead's action falls due.
  s.clock.advance(3 * DAY);
  const later = await http(`${api}/signals?kind=stale_deployment`, { headers: admin.headers });
  assert.is(later.body.total, 2);
  assert.is((await http(`${api}/signals?kind=stale_lead`, { headers: admin.headers })).body.total, 2);
});

test.run();
