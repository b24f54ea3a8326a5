// Deployments through real HTTP: register (customer must exist: 422 naming it; product from the
// built-in catalog; channel canary|beta|stable, default stable), list with ?product= and
// ?channel=, read, update (version, last_seen_at, endpoint_url, channel), and a customer's list.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { eventCount, interactive, mintToken, REGISTRY_ENV, type Interactive } from '../../support/registry.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { deploymentStream } from '../../../domain/registry/streams.ts';

const test = suite<{ s: TestServices; admin: Interactive; url: string }>('registry deployments');
test.before(async (ctx) => {
  ctx.s = await startTestApps('registry_deployments', REGISTRY_ENV);
  ctx.admin = await interactive(ctx.s, 'ada', 'admin');
  ctx.url = `${ctx.s.registry}/api/v1/deployments`;
  for (const slug of ['acme', 'bolt']) {
    assert.is(
      (await http(`${ctx.s.registry}/api/v1/customers`, { headers: ctx.admin.headers, json: { slug, name: slug } }))
        .status,
      201,
    );
  }
});
test.after(async ({ s }) => s?.close());

test('register: 201 with every field; channel defaults to stable; first_deployed_at defaults to now; its own stream', async ({
  s,
  admin,
  url,
}) => {
  const r = await http(url, {
    headers: admin.headers,
    json: {
      customer_slug: 'acme',
      product: 'orchestration',
      version: '1.4.0',
      endpoint_url: 'https://orch.acme.test',
      instance_id: 'i-1',
    },
  });
  assert.is(r.status, 201);
  assert.equal(Object.keys(r.body).sort(), [
    'channel',
    'created_at',
    'customer_id',
    'customer_slug',
    'endpoint_url',
    'first_deployed_at',
    'id',
    'instance_id',
    'last_seen_at',
    'product',
    'updated_at',
    'version',
  ]);
  assert.is(r.body.channel, 'stable');
  assert.is(r.body.customer_slug, 'acme');
  assert.is(r.body.first_deployed_at, r.body.created_at);
  const { rows } = await s.db.pool.query(`SELECT stream_id FROM events WHERE type = 'DeploymentRegistered'`);
  assert.equal(
    rows.map((x) => x.stream_id),
    [deploymentStream(r.body.id)],
  );
});

test('register: unknown customer 422 naming it; unknown product or channel 422; nothing written', async ({
  s,
  admin,
  url,
}) => {
  const before = await eventCount(s);
  const unknown = await http(url, {
    headers: admin.headers,
    json: { customer_slug: 'ghost', product: 'chat', version: '1' },
  });
  assert.is(unknown.status, 422);
  assert.is(unknown.body.error.code, 'unknown_customer');
  assert.match(unknown.body.error.message, /ghost/);
  assert.match(unknown.body.error.message, /customer_slug/);
  for (const body of [
    { customer_slug: 'acme', product: 'crm', version: '1' },
    { customer_slug: 'acme', product: 'chat', version: '1', channel: 'nightly' },
    { customer_slug: 'acme', product: 'chat' },
    { product: 'chat', version: '1' },
    { customer_slug: 'acme', product: 'chat', version: '1', endpoint_url: 'not a url' },
    { customer_slug: 'acme', product: 'chat', version: '1', color: 'red' },
  ]) {
    const r = await http(url, { headers: admin.headers, json: body });
    assert.is(r.status, 422, JSON.stringify(body));
    assert.is(r.body.error.code, 'validation_failed');
  }
  assert.is(await eventCount(s), before);
});

test('list: ?product= and ?channel= filters, pagination; unknown product 422', async ({ admin, url }) => {
  for (const [customer_slug, product, version, channel] of [
    ['acme', 'chat', '2.0.0', 'beta'],
    ['bolt', 'chat', '2.1.0', 'canary'],
    ['bolt', 'registry', '0.9.0', 'stable'],
  ]) {
    assert.is(
      (await http(url, { headers: admin.headers, json: { customer_slug, product, version, channel } })).status,
      201,
    );
  }
  const all = await http(url, { headers: admin.headers });
  assert.is(all.body.total, 4);
  const chat = await http(`${url}?product=chat`, { headers: admin.headers });
  assert.equal(
    chat.body.items.map((d: { version: string }) => d.version),
    ['2.0.0', '2.1.0'],
  );
  assert.equal(
    (await http(`${url}?product=chat&channel=canary`, { headers: admin.headers })).body.items.map(
      (d: { customer_slug: string }) => d.customer_slug,
    ),
    ['bolt'],
  );
  const paged = await http(`${url}?limit=1&offset=3`, { headers: admin.headers });
  assert.is(paged.body.items.length, 1);
  assert.is(paged.body.total, 4);
  assert.is((await http(`${url}?product=crm`, { headers: admin.headers })).status, 422);
  const bolt = await http(`${url.replace('/deployments', '/customers/bolt/deployments')}`, { headers: admin.headers });
  assert.is(bolt.status, 200);
  assert.is(bolt.body.total, 2);
  assert.is(
    (await http(`${url.replace('/deployments', '/customers/ghost/deployments')}`, { headers: admin.headers })).status,
    404,
  );
});

test('update: version, last_seen_at, endpoint_url, channel; changes recorded before and after; other fields 422; unknown id 404', async ({
  s,
  admin,
  url,
}) => {
  const token = await mintToken(s, admin, ['deployments:write', 'deployments:read']);
  const id = (await http(`${url}?product=orchestration`, { headers: admin.headers })).body.items[0].id;
  const r = await http(`${url}/${id}`, {
    method: 'PATCH',
    headers: token.headers,
    json: { version: '1.5.0', last_seen_at: '2026-03-01T12:00:00Z', channel: 'beta' },
  });
  assert.is(r.status, 200);
  assert.is(r.body.version, '1.5.0');
  assert.is(r.body.last_seen_at, '2026-03-01T12:00:00.000Z');
  assert.is(r.body.channel, 'beta');
  const { rows } = await s.db.pool.query(`SELECT data FROM events WHERE type = 'DeploymentUpdated'`);
  assert.equal(rows[0].data.changes.version, { before: '1.4.0', after: '1.5.0' });
  assert.equal(rows[0].data.changes.last_seen_at, { before: null, after: '2026-03-01T12:00:00.000Z' });
  const got = await http(`${url}/${id}`, { headers: token.headers });
  assert.is(got.status, 200);
  assert.is(got.body.version, '1.5.0');
  for (const body of [{ product: 'chat' }, { customer_slug: 'bolt' }, { channel: 'nightly' }, {}, { version: '' }]) {
    assert.is(
      (await http(`${url}/${id}`, { method: 'PATCH', headers: token.headers, json: body })).status,
      422,
      JSON.stringify(body),
    );
  }
  for (const missing of ['00000000-0000-4000-8000-00000000dead', 'not-a-uuid']) {
    const r404 = await http(`${url}/${missing}`, { method: 'PATCH', headers: token.headers, json: { version: '9' } });
    assert.is(r404.status, 404);
    assert.is(r404.body.error.code, 'deployment_not_found');
    assert.is((await http(`${url}/${missing}`, { headers: token.headers })).status, 404);
  }
});

test("a deleted customer's deployments leave the lists", async ({ s, admin, url }) => {
  assert.is(
    (await http(`${s.registry}/api/v1/customers/bolt`, { method: 'DELETE', headers: admin.headers })).status,
    204,
  );
  assert.is((await http(url, { headers: admin.headers })).body.total, 2);
  const refused = await http(url, {
    headers: admin.headers,
    json: { customer_slug: 'bolt', product: 'chat', version: '1' },
  });
  assert.is(refused.status, 422);
  assert.is(refused.body.error.code, 'unknown_customer');
});

test.run();
