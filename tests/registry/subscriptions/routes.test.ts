// Subscriptions through real HTTP: create (status default trialing, mrr_cents a non-negative
// integer, customer must exist), list with ?status= and ?product=, update (status, mrr_cents,
// renewal_date) with subscriptions:write, and a customer's list.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventCount, interactive, mintToken, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { subscriptionStream } from '../../../domain/registry/streams.ts';

const test = suite<{ s: TestServices; admin: Interactive; url: string }>('registry subscriptions');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_subscriptions', REGISTRY_ENV);
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
  ctx.url = `${ctx.s.registry}/api/v1/subscriptions`;
  assert.is(
    (
      await http(`${ctx.s.registry}/api/v1/customers`, {
        headers: ctx.admin.headers,
        json: { slug: 'acme', name: 'Acme' },
      })
    ).status,
    201,
  );
});
test.after(async ({ s }) => s?.close());

test('create: 201; status defaults to trialing, mrr_cents to 0 (complimentary); billing references kept', async ({
  admin,
  url,
}) => {
  const r = await http(url, {
    headers: admin.headers,
    json: {
      customer_slug: 'acme',
      product: 'chat',
      renewal_date: '2027-01-01',
      stripe_customer_id: 'cus_1',
      stripe_subscription_id: 'sub_1',
    },
  });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), [
    'created_at',
    'customer_id',
    'customer_slug',
    'id',
    'mrr_cents',
    'product',
    'renewal_date',
    'status',
    'stripe_customer_id',
    'stripe_subscription_id',
    'updated_at',
  ]);
  assert.is(r.body.status, 'trialing');
  assert.is(r.body.mrr_cents, 0);
  assert.is(r.body.renewal_date, '2027-01-01');
  assert.is(r.body.stripe_subscription_id, 'sub_1');
});

test('create: mrr_cents must be a non-negative integer; unknown status, product or customer 422; nothing written', async ({
  s,
  admin,
  url,
}) => {
  const before = await eventCount(s);
  for (const mrr_cents of [-1, 1.5, '100', null, 1e20]) {
    const r = await http(url, { headers: admin.headers, json: { customer_slug: 'acme', product: 'chat', mrr_cents } });
    assert.is(r.status, 422, String(mrr_cents));
    assert.match(r.body.error.message, /mrr_cents/);
  }
  for (const body of [
    { customer_slug: 'acme', product: 'chat', status: 'paused' },
    { customer_slug: 'acme', product: 'crm' },
    { customer_slug: 'acme' },
    { customer_slug: 'acme', product: 'chat', renewal_date: 'soon' },
  ]) {
    assert.is((await http(url, { headers: admin.headers, json: body })).status, 422, JSON.stringify(body));
  }
  const ghost = await http(url, { headers: admin.headers, json: { customer_slug: 'ghost', product: 'chat' } });
  assert.is(ghost.status, 422);
  assert.is(ghost.body.error.code, 'unknown_customer');
  assert.is(await eventCount(s), before);
});

test('update with subscriptions:write: status, mrr_cents, renewal_date; each change an event with before and after', async ({
  s,
  admin,
  url,
}) => {
  const token = await mintToken(s, admin, ['subscriptions:write', 'subscriptions:read']);
  const created = await http(url, {
    headers: token.headers,
    json: { customer_slug: 'acme', product: 'orchestration', mrr_cents: 5000, status: 'active' },
  });
  assert.is(created.status, 201);
  const id = created.body.id;
  const r = await http(`${url}/${id}`, {
    method: 'PATCH',
    headers: token.headers,
    json: { mrr_cents: 7500, status: 'past_due', renewal_date: '2026-12-31' },
  });
  assert.is(r.status, 200);
  assert.is(r.body.mrr_cents, 7500);
  assert.is(r.body.status, 'past_due');
  const { rows } = await s.db.pool.query(`SELECT stream_id, data FROM events WHERE type = 'SubscriptionUpdated'`);
  assert.is(rows[0].stream_id, subscriptionStream(id));
  assert.equal(rows[0].data.changes, {
    mrr_cents: { before: 5000, after: 7500 },
    status: { before: 'active', after: 'past_due' },
    renewal_date: { before: null, after: '2026-12-31' },
  });
  for (const body of [{ mrr_cents: -5 }, { mrr_cents: 2.5 }, { status: 'paused' }, { product: 'chat' }, {}]) {
    assert.is(
      (await http(`${url}/${id}`, { method: 'PATCH', headers: token.headers, json: body })).status,
      422,
      JSON.stringify(body),
    );
  }
  assert.is(
    (
      await http(`${url}/00000000-0000-4000-8000-00000000dead`, {
        method: 'PATCH',
        headers: token.headers,
        json: { status: 'active' },
      })
    ).status,
    404,
  );
  assert.is((await http(`${url}/${id}`, { headers: token.headers })).body.status, 'past_due');
  const reader = await mintToken(s, admin, ['subscriptions:read']);
  assert.is(
    (await http(`${url}/${id}`, { method: 'PATCH', headers: reader.headers, json: { status: 'active' } })).status,
    403,
  );
});

test("list: ?status= and ?product= filters, pagination; a customer's subscriptions", async ({ s, admin, url }) => {
  const all = await http(url, { headers: admin.headers });
  assert.is(all.body.total, 2);
  assert.equal(
    (await http(`${url}?status=past_due`, { headers: admin.headers })).body.items.map(
      (x: { product: string }) => x.product,
    ),
    ['orchestration'],
  );
  assert.equal(
    (await http(`${url}?product=chat`, { headers: admin.headers })).body.items.map((x: { status: string }) => x.status),
    ['trialing'],
  );
  assert.is((await http(`${url}?status=paused`, { headers: admin.headers })).status, 422);
  const mine = await http(`${s.registry}/api/v1/customers/acme/subscriptions?status=trialing`, {
    headers: admin.headers,
  });
  assert.is(mine.status, 200);
  assert.is(mine.body.total, 1);
  assert.is((await http(`${url}?limit=1`, { headers: admin.headers })).body.items.length, 1);
});

test.run();
