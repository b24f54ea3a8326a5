// Customers through real HTTP: create (slug rules, 409 on a taken slug, default status),
// list (pagination, status filter), detail, update (no slug, changes before/after in the log),
// delete (interactive admin only, history kept), and the 422 validation family.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventCount, interactive, mintToken, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, loggedEvents, startTestApps, type TestServices } from '../../support/services.ts';
import { customerStream } from '../../../domain/registry/streams.ts';

const test = suite<{ s: TestServices; admin: Interactive; url: string }>('registry customers');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_customers', REGISTRY_ENV);
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
  ctx.url = `${ctx.s.registry}/api/v1/customers`;
});
test.after(async ({ s }) => s?.close());

test('create: 201 with the full customer, generated id and timestamps; status defaults to lead', async ({
  s,
  admin,
  url,
}) => {
  const r = await http(url, {
    headers: admin.headers,
    json: {
      slug: 'acme',
      name: 'Acme Inc',
      primary_email: 'ops@acme.test',
      next_action_date: '2026-01-15',
      pipeline_stage: 'qualified',
    },
  });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), [
    'created_at',
    'id',
    'name',
    'next_action',
    'next_action_date',
    'notes',
    'pipeline_stage',
    'primary_email',
    'slug',
    'source',
    'status',
    'updated_at',
  ]);
  assert.match(r.body.id, /^[0-9a-f-]{36}$/);
  assert.is(r.body.status, 'lead');
  assert.is(r.body.next_action_date, '2026-01-15');
  assert.is(r.body.created_at, r.body.updated_at);
  assert.ok(Date.parse(r.body.created_at) > 0);
  const created = await loggedEvents(s, { eventTypes: ['CustomerCreated'] });
  assert.is(created.length, 1);
  assert.is(created[0]!.stream, customerStream(r.body.id));
});

test('create: a taken slug is 409; the slug pattern and length are enforced (422); nothing written on a refusal', async ({
  s,
  admin,
  url,
}) => {
  const before = await eventCount(s);
  const taken = await http(url, { headers: admin.headers, json: { slug: 'acme', name: 'Other' } });
  assert.is(taken.status, 409);
  assert.is(taken.body.error.code, 'customer_slug_taken');
  assert.type(taken.body.error.message, 'string');
  for (const slug of ['Acme', '-acme', 'ac me', 'acme_co', 'a'.repeat(64), '', 'é']) {
    const r = await http(url, { headers: admin.headers, json: { slug, name: 'X' } });
    assert.is(r.status, 422, slug);
    assert.is(r.body.error.code, 'validation_failed');
    assert.match(r.body.error.message, /slug/);
  }
  assert.is((await http(url, { headers: admin.headers, json: { slug: 'a'.repeat(63), name: 'Long' } })).status, 201);
  const after = await eventCount(s);
  assert.is(after - before, 2, 'only the 63-character slug wrote (its reservation and its creation)');
});

test('validation: missing name, unknown fields, unknown status, bad e-mail or date, malformed JSON: 422', async ({
  s,
  admin,
  url,
}) => {
  const before = await eventCount(s);
  for (const body of [
    { slug: 'v1' },
    { slug: 'v1', name: '' },
    { slug: 'v1', name: 'V', extra: 1 },
    { slug: 'v1', name: 'V', status: 'vip' },
    { slug: 'v1', name: 'V', primary_email: 'nope' },
    { slug: 'v1', name: 'V', next_action_date: '15/01/2026' },
    { slug: 7, name: 'V' },
  ]) {
    const r = await http(url, { headers: admin.headers, json: body });
    assert.is(r.status, 422, JSON.stringify(body));
    assert.is(r.body.error.code, 'validation_failed');
  }
  const malformed = await http(url, {
    headers: { ...admin.headers, 'content-type': 'application/json' },
    body: '{"slug": ',
  });
  assert.is(malformed.status, 422);
  assert.is(malformed.body.error.code, 'invalid_json');
  const media = await http(url, {
    headers: { ...admin.headers, 'content-type': 'text/plain' },
    body: '{"slug":"x","name":"x"}',
  });
  assert.is(media.status, 415);
  assert.is(await eventCount(s), before);
});

test('list: items, total, limit (default 50, max 200), offset; filter by status; unknown status 422', async ({
  admin,
  url,
}) => {
  for (const [slug, status] of [
    ['beta-co', 'trial'],
    ['gamma-co', 'paying'],
    ['delta-co', 'paying'],
    ['eps-co', 'churned'],
  ] as const) {
    assert.is((await http(url, { headers: admin.headers, json: { slug, name: slug, status } })).status, 201);
  }
  const all = await http(url, { headers: admin.headers });
  assert.is(all.status, 200);
  assert.equal(Object.keys(all.body).sort(), ['items', 'limit', 'offset', 'total']);
  assert.is(all.body.limit, 50);
  assert.is(all.body.offset, 0);
  assert.is(all.body.total, all.body.items.length);
  assert.is(all.body.total, 6);
  const paying = await http(`${url}?status=paying`, { headers: admin.headers });
  assert.equal(
    paying.body.items.map((c: { slug: string }) => c.slug),
    ['delta-co', 'gamma-co'],
  );
  assert.is(paying.body.total, 2);
  const paged = await http(`${url}?limit=2&offset=1`, { headers: admin.headers });
  assert.is(paged.body.items.length, 2);
  assert.is(paged.body.total, 6);
  assert.is(paged.body.items[0].slug, all.body.items[1].slug);
  assert.is((await http(`${url}?limit=5000`, { headers: admin.headers })).body.limit, 200);
  assert.is((await http(`${url}?limit=0`, { headers: admin.headers })).body.limit, 1);
  const bad = await http(`${url}?status=vip`, { headers: admin.headers });
  assert.is(bad.status, 422);
  assert.match(bad.body.error.message, /status/);
});

test('detail: deployments, subscriptions, contacts and counts; unknown slug 404', async ({ s, admin, url }) => {
  const base = s.registry;
  assert.is(
    (
      await http(`${base}/api/v1/deployments`, {
        headers: admin.headers,
        json: { customer_slug: 'acme', product: 'chat', version: '1.2.0' },
      })
    ).status,
    201,
  );
  assert.is(
    (
      await http(`${base}/api/v1/subscriptions`, {
        headers: admin.headers,
        json: { customer_slug: 'acme', product: 'chat', mrr_cents: 9900, status: 'active' },
      })
    ).status,
    201,
  );
  assert.is(
    (
      await http(`${url}/acme/contacts`, {
        headers: admin.headers,
        json: { name: 'Bo', email: 'bo@acme.test', role: 'billing' },
      })
    ).status,
    201,
  );
  assert.is(
    (
      await http(`${url}/acme/touchpoints`, {
        headers: admin.headers,
        json: { kind: 'call', summary: 'kickoff', occurred_at: '2026-01-02T10:00:00Z' },
      })
    ).status,
    201,
  );
  const r = await http(`${url}/acme`, { headers: admin.headers });
  assert.is(r.status, 200);
  assert.is(r.body.slug, 'acme');
  assert.is(r.body.deployments.length, 1);
  assert.is(r.body.deployments[0].product, 'chat');
  assert.is(r.body.subscriptions[0].mrr_cents, 9900);
  assert.is(r.body.contacts[0].email, 'bo@acme.test');
  assert.equal(r.body.counts, {
    deployments: 1,
    subscriptions: 1,
    contacts: 1,
    touchpoints: 1,
    agreements: 0,
    usage_records: 0,
  });
  const missing = await http(`${url}/nope`, { headers: admin.headers });
  assert.is(missing.status, 404);
  assert.is(missing.body.error.code, 'customer_not_found');
});

test('update: any field but slug; the event carries each field before and after; a no-op writes nothing', async ({
  s,
  admin,
  url,
}) => {
  const r = await http(`${url}/acme`, {
    method: 'PATCH',
    headers: admin.headers,
    json: { status: 'paying', notes: 'signed', next_action_date: null },
  });
  assert.is(r.status, 200);
  assert.is(r.body.status, 'paying');
  assert.is(r.body.notes, 'signed');
  assert.is(r.body.next_action_date, null);
  assert.ok(r.body.updated_at > r.body.created_at);
  const updated = await loggedEvents(s, { eventTypes: ['CustomerUpdated'] });
  assert.equal(updated.at(-1)!.data.changes, {
    status: { before: 'lead', after: 'paying' },
    notes: { before: null, after: 'signed' },
    next_action_date: { before: '2026-01-15', after: null },
  });
  const before = await eventCount(s);
  assert.is(
    (await http(`${url}/acme`, { method: 'PATCH', headers: admin.headers, json: { status: 'paying' } })).status,
    200,
  );
  assert.is(await eventCount(s), before);
  for (const body of [{ slug: 'acme2' }, {}, { status: 'vip' }, { name: '' }]) {
    const bad = await http(`${url}/acme`, { method: 'PATCH', headers: admin.headers, json: body });
    assert.is(bad.status, 422, JSON.stringify(body));
  }
  assert.is((await http(`${url}/nope`, { method: 'PATCH', headers: admin.headers, json: { notes: 'x' } })).status, 404);
  assert.is(await eventCount(s), before);
});

test('delete: interactive admin only (a token, even with customers:write, gets 403); the history stays; the slug stays taken', async ({
  s,
  admin,
  url,
}) => {
  assert.is((await http(url, { headers: admin.headers, json: { slug: 'doomed', name: 'Doomed' } })).status, 201);
  const token = await mintToken(s, admin, ['customers:read', 'customers:write']);
  const byToken = await http(`${url}/doomed`, { method: 'DELETE', headers: token.headers });
  assert.is(byToken.status, 403);
  assert.is(byToken.body.error.code, 'interactive_admin_only');
  const reader = await interactive(s, 'rita', 'readonly');
  assert.is((await http(`${url}/doomed`, { method: 'DELETE', headers: reader.headers })).status, 403);
  const noCsrf = await http(`${url}/doomed`, {
    method: 'DELETE',
    headers: { ...admin.headers, 'x-csrf-token': 'forged' },
  });
  assert.is(noCsrf.status, 403);
  assert.is(noCsrf.body.error.code, 'csrf_failed');
  const r = await http(`${url}/doomed`, { method: 'DELETE', headers: admin.headers });
  assert.is(r.status, 204);
  assert.is((await http(`${url}/doomed`, { headers: admin.headers })).status, 404);
  assert.is((await http(`${url}/doomed`, { method: 'DELETE', headers: admin.headers })).status, 404);
  assert.is(
    (await http(`${url}/doomed`, { method: 'PATCH', headers: admin.headers, json: { notes: 'x' } })).status,
    404,
  );
  assert.not.ok(
    (await http(url, { headers: admin.headers })).body.items.some((c: { slug: string }) => c.slug === 'doomed'),
  );
  const doomed = (await loggedEvents(s, { streamPrefixes: ['registry.customer-'] })).filter(
    (e) => e.data.slug === 'doomed',
  );
  assert.equal(
    doomed.map((e) => e.type),
    ['CustomerCreated', 'CustomerDeleted'],
  );
  const again = await http(url, { headers: admin.headers, json: { slug: 'doomed', name: 'Again' } });
  assert.is(again.status, 409);
  const history = await http(`${s.registry}/api/v1/events?customer=doomed`, { headers: admin.headers });
  assert.equal(
    history.body.items.map((e: { type: string }) => e.type),
    ['CustomerDeleted', 'CustomerCreated'],
  );
  assert.is(history.body.items[0].actor.id, 'forward_auth:ada');
});

test.run();
