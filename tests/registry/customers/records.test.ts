// What is filed under a customer, through real HTTP: contacts, touchpoints, agreements, usage,
// and lead capture (slug derivation, -2/-3 de-duplication, the same e-mail answered with 200).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventCount, interactive, mintToken, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const test = suite<{ s: TestServices; admin: Interactive; url: string }>('registry customer records and leads');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_records', REGISTRY_ENV);
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
  ctx.url = `${ctx.s.registry}/api/v1/customers/acme`;
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

test('contacts: name and email required, role defaults to other, one contact per e-mail (409), unknown customer 404', async ({
  s,
  admin,
  url,
}) => {
  const r = await http(`${url}/contacts`, { headers: admin.headers, json: { name: 'Cy', email: 'cy@acme.test' } });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), ['created_at', 'email', 'id', 'last_contacted_at', 'name', 'role']);
  assert.is(r.body.role, 'other');
  assert.is(r.body.last_contacted_at, null);
  const before = await eventCount(s);
  const dup = await http(`${url}/contacts`, {
    headers: admin.headers,
    json: { name: 'Cy again', email: 'CY@acme.test' },
  });
  assert.is(dup.status, 409);
  assert.is(dup.body.error.code, 'contact_exists');
  for (const body of [
    { name: 'X' },
    { email: 'x@acme.test' },
    { name: 'X', email: 'x@acme.test', role: 'ceo' },
    { name: 'X', email: 'nope' },
  ]) {
    assert.is(
      (await http(`${url}/contacts`, { headers: admin.headers, json: body })).status,
      422,
      JSON.stringify(body),
    );
  }
  assert.is(
    (
      await http(`${s.registry}/api/v1/customers/nope/contacts`, {
        headers: admin.headers,
        json: { name: 'X', email: 'x@acme.test' },
      })
    ).status,
    404,
  );
  assert.is(await eventCount(s), before);
});

test("touchpoints: kind, summary, occurred_at required; newest first; filter by kind; a contact's e-mail moves its last_contacted_at", async ({
  s,
  admin,
  url,
}) => {
  const log = (body: object) => http(`${url}/touchpoints`, { headers: admin.headers, json: body });
  const a = await log({
    kind: 'call',
    summary: 'first call',
    occurred_at: '2026-02-01T09:00:00Z',
    contact_email: 'cy@acme.test',
  });
  assert.is(a.status, 201);
  assert.equal(Object.keys(a.body).sort(), ['contact_email', 'created_at', 'id', 'kind', 'occurred_at', 'summary']);
  assert.is(a.body.occurred_at, '2026-02-01T09:00:00.000Z');
  assert.is((await log({ kind: 'email', summary: 'follow-up', occurred_at: '2026-02-03T09:00:00+01:00' })).status, 201);
  for (const body of [
    { kind: 'fax', summary: 'x', occurred_at: '2026-02-01T09:00:00Z' },
    { kind: 'call', occurred_at: '2026-02-01T09:00:00Z' },
    { kind: 'call', summary: 'x' },
    { kind: 'call', summary: 'x', occurred_at: 'yesterday' },
  ]) {
    assert.is((await log(body)).status, 422, JSON.stringify(body));
  }
  const list = await http(`${url}/touchpoints`, { headers: admin.headers });
  assert.is(list.status, 200);
  assert.is(list.body.total, 2);
  assert.equal(
    list.body.items.map((t: { summary: string }) => t.summary),
    ['follow-up', 'first call'],
  );
  assert.equal(
    (await http(`${url}/touchpoints?kind=call`, { headers: admin.headers })).body.items.map(
      (t: { kind: string }) => t.kind,
    ),
    ['call'],
  );
  assert.is((await http(`${url}/touchpoints?kind=fax`, { headers: admin.headers })).status, 422);
  const detail = await http(url, { headers: admin.headers });
  assert.is(detail.body.contacts[0].last_contacted_at, '2026-02-01T09:00:00.000Z');
  assert.is((await http(`${s.registry}/api/v1/customers/nope/touchpoints`, { headers: admin.headers })).status, 404);
});

test('agreements: GET with customers:read, POST with customers:write; kind, title, signed_at required; expiry not before signing', async ({
  s,
  admin,
  url,
}) => {
  const writer = await mintToken(s, admin, ['customers:write']);
  const r = await http(`${url}/agreements`, {
    headers: writer.headers,
    json: {
      kind: 'msa',
      title: 'Master agreement',
      signed_at: '2026-01-10',
      expires_at: '2027-01-10',
      document_url: 'https://docs.example.test/msa.pdf',
    },
  });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), [
    'created_at',
    'document_url',
    'expires_at',
    'id',
    'kind',
    'signed_at',
    'title',
  ]);
  assert.is(r.body.signed_at, '2026-01-10');
  for (const body of [
    { kind: 'msa', title: 'x' },
    { kind: 'msa', title: 'x', signed_at: '2026-01-10', expires_at: '2025-01-10' },
    { kind: 'msa', title: 'x', signed_at: '2026-01-10', document_url: 'not a url' },
  ]) {
    assert.is(
      (await http(`${url}/agreements`, { headers: writer.headers, json: body })).status,
      422,
      JSON.stringify(body),
    );
  }
  const contactsOnly = await mintToken(s, admin, ['contacts:write', 'customers:read']);
  assert.is(
    (
      await http(`${url}/agreements`, {
        headers: contactsOnly.headers,
        json: { kind: 'nda', title: 'x', signed_at: '2026-01-10' },
      })
    ).status,
    403,
  );
  const list = await http(`${url}/agreements`, { headers: contactsOnly.headers });
  assert.is(list.status, 200);
  assert.is(list.body.total, 1);
  assert.is(list.body.items[0].title, 'Master agreement');
  assert.is((await http(`${url}/agreements`, { headers: writer.headers })).status, 403, 'reading needs customers:read');
});

test('usage: POST with subscriptions:write (product from the catalog, quantity >= 0, period in order); GET filters', async ({
  s,
  admin,
  url,
}) => {
  const billing = await mintToken(s, admin, ['subscriptions:write', 'customers:read']);
  const record = (body: object) => http(`${url}/usage`, { headers: billing.headers, json: body });
  const r = await record({
    product: 'chat',
    metric: 'seats',
    quantity: 12,
    period_start: '2026-01-01T00:00:00Z',
    period_end: '2026-01-31T23:59:59Z',
  });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), [
    'created_at',
    'id',
    'metric',
    'period_end',
    'period_start',
    'product',
    'quantity',
  ]);
  assert.is(r.body.quantity, 12);
  assert.is(
    (
      await record({
        product: 'orchestration',
        metric: 'agents',
        quantity: 0.5,
        period_start: '2026-02-01T00:00:00Z',
        period_end: '2026-02-28T00:00:00Z',
      })
    ).status,
    201,
  );
  for (const body of [
    {
      product: 'crm',
      metric: 'seats',
      quantity: 1,
      period_start: '2026-01-01T00:00:00Z',
      period_end: '2026-01-02T00:00:00Z',
    },
    {
      product: 'chat',
      metric: 'seats',
      quantity: -1,
      period_start: '2026-01-01T00:00:00Z',
      period_end: '2026-01-02T00:00:00Z',
    },
    {
      product: 'chat',
      metric: 'seats',
      quantity: 1,
      period_start: '2026-01-02T00:00:00Z',
      period_end: '2026-01-01T00:00:00Z',
    },
    { product: 'chat', quantity: 1, period_start: '2026-01-01T00:00:00Z', period_end: '2026-01-02T00:00:00Z' },
  ])
    assert.is((await record(body)).status, 422, JSON.stringify(body));
  const list = await http(`${url}/usage`, { headers: billing.headers });
  assert.is(list.body.total, 2);
  assert.equal(
    list.body.items.map((u: { metric: string }) => u.metric),
    ['agents', 'seats'],
  );
  assert.equal(
    (await http(`${url}/usage?product=chat`, { headers: billing.headers })).body.items.map(
      (u: { metric: string }) => u.metric,
    ),
    ['seats'],
  );
  assert.is((await http(`${url}/usage?product=crm`, { headers: billing.headers })).status, 422);
  const readOnly = await mintToken(s, admin, ['customers:read']);
  assert.is(
    (
      await http(`${url}/usage`, {
        headers: readOnly.headers,
        json: {
          product: 'chat',
          metric: 's',
          quantity: 1,
          period_start: '2026-01-01T00:00:00Z',
          period_end: '2026-01-02T00:00:00Z',
        },
      })
    ).status,
    403,
  );
});

test("every record is an event on the customer's stream", async ({ s }) => {
  const { rows } = await s.db.pool.query(
    `SELECT DISTINCT type FROM events WHERE stream_id = (SELECT 'registry.customer-' || id FROM registry_customers WHERE slug = 'acme') ORDER BY type`,
  );
  assert.equal(
    rows.map((r) => r.type),
    ['AgreementRecorded', 'ContactAdded', 'CustomerCreated', 'TouchpointLogged', 'UsageRecorded'],
  );
});

test('leads: slug from the name, de-duplicated with -2, -3; status lead; the same e-mail answers the existing customer (200)', async ({
  s,
  admin,
}) => {
  const lead = (body: object) => http(`${s.registry}/api/v1/leads`, { headers: admin.headers, json: body });
  const first = await lead({ name: 'Acme', email: 'buyer@acme.test', source: 'website' });
  assert.is(first.status, 201);
  assert.is(first.body.slug, 'acme-2', 'acme is taken');
  assert.is(first.body.status, 'lead');
  assert.is(first.body.source, 'website');
  assert.is(first.body.primary_email, 'buyer@acme.test');
  assert.is((await lead({ name: 'Acme', email: 'cto@acme.test' })).body.slug, 'acme-3');
  const before = await eventCount(s);
  const same = await lead({ name: 'Acme Corporation', email: 'BUYER@acme.test' });
  assert.is(same.status, 200);
  assert.is(same.body.id, first.body.id);
  assert.is(await eventCount(s), before, 'a repeated lead writes nothing');
  assert.is((await lead({ name: 'Zoë & Co. GmbH!', email: 'z@z.test' })).body.slug, 'zoe-co-gmbh');
  assert.is((await lead({ name: '!!!', email: 'Jane.Doe@x.test' })).body.slug, 'jane-doe');
  assert.is((await lead({ name: '***', email: '+@x.test' })).body.slug, 'lead');
  for (const body of [
    { name: 'x' },
    { name: 'x', email: 'nope' },
    { name: 'x', email: 'x@x.test', status: 'paying' },
    { name: 'x'.repeat(201), email: 'x@x.test' },
  ]) {
    assert.is((await lead(body)).status, 422, JSON.stringify(body));
  }
  const reader = await mintToken(s, admin, ['customers:read']);
  assert.is(
    (await http(`${s.registry}/api/v1/leads`, { headers: reader.headers, json: { name: 'n', email: 'n@x.test' } }))
      .status,
    403,
  );
  const writer = await mintToken(s, admin, ['customers:write']);
  assert.is(
    (await http(`${s.registry}/api/v1/leads`, { headers: writer.headers, json: { name: 'Nu', email: 'nu@x.test' } }))
      .status,
    201,
  );
});

test("leads without a name (a form that asks only for the e-mail): the slug from the e-mail's local part, the e-mail as the name", async ({
  s,
  admin,
}) => {
  const lead = (body: object) => http(`${s.registry}/api/v1/leads`, { headers: admin.headers, json: body });
  const bare = await lead({ email: 'Mary.Major@corp.test', source: 'newsletter' });
  assert.is(bare.status, 201, bare.text);
  assert.equal(
    [bare.body.slug, bare.body.name, bare.body.status, bare.body.primary_email, bare.body.source],
    ['mary-major', 'Mary.Major@corp.test', 'lead', 'Mary.Major@corp.test', 'newsletter'],
  );
  assert.is((await lead({ email: 'mary.major@other.test' })).body.slug, 'mary-major-2', 'de-duplicated like any lead');
  assert.is((await lead({ name: null, email: 'null.name@x.test' })).body.slug, 'null-name');
  assert.is(
    (await lead({ name: '   ', email: 'blank.name@x.test' })).body.slug,
    'blank-name',
    'a blank name is no name',
  );
  const again = await lead({ email: 'MARY.MAJOR@corp.test' });
  assert.equal([again.status, again.body.id], [200, bare.body.id], 'the same e-mail answers the existing customer');
  // The document says so: name is not required.
  const doc = (await http(`${s.registry}/api/v1/openapi.json`, { headers: admin.headers })).body;
  const schema = doc.components.schemas.LeadRequest;
  assert.equal(schema.required, ['email']);
  assert.ok(schema.properties.name, 'name is still described');
});

test('leads: two captures of one new e-mail at once make one customer', async ({ s, admin }) => {
  const replies = await Promise.all(
    [1, 2, 3].map(() =>
      http(`${s.registry}/api/v1/leads`, { headers: admin.headers, json: { name: 'Racer', email: 'race@x.test' } }),
    ),
  );
  assert.equal(replies.map((r) => r.status).sort(), [200, 200, 201]);
  assert.is(new Set(replies.map((r) => r.body.id)).size, 1);
  const { rows } = await s.db.pool.query(
    `SELECT count(*)::int AS n FROM registry_customers WHERE primary_email = 'race@x.test'`,
  );
  assert.is(rows[0].n, 1);
});

test.run();
