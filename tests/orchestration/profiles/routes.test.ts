// The profile routes through HTTP (in-process): create with the documented defaults and strict
// fields, validation and its limits, duplicate slugs (raced too), list and read, partial update,
// the built-in personal assistant, and who may call them. History and as_of: history.test.ts.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PERSONAL_ASSISTANT_ID } from '../../../domain/orchestration/profiles/decider.ts';
import { createAccount } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_profiles-admin-key-000000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const PROFILES = '/api/v1/agent-chat/profiles';

/** Every field of the spec's profile table, plus the timestamps. */
const PROFILE_KEYS = [
  'id',
  'slug',
  'name',
  'description',
  'security_tier',
  'model',
  'system_prompt',
  'max_tokens',
  'temperature',
  'pii_scrub',
  'cost_cap_daily_cents',
  'rate_limit_rpm',
  'rate_limit_rpd',
  'enabled',
  'knowledge_search_enabled',
  'channel_reply_mode',
  'can_use_tools',
  'integrations',
  'conversation_ttl_hours',
  'created_at',
  'updated_at',
];

const test = suite<{ s: TestServices }>('profiles: routes');
test.before(async (ctx) => {
  ctx.s = await startTestApps('profiles_routes', { ADMIN_API_KEY: ADMIN_KEY, ORCH_LLM_MODEL: 'test-model-1' });
});
test.after(async ({ s }) => s?.close());

const eventCount = async (s: TestServices) =>
  Number((await s.db.pool.query('SELECT count(*) FROM events')).rows[0].count);
const create = (s: TestServices, json: unknown, headers: Record<string, string> = admin) =>
  http(`${s.orch}${PROFILES}`, { headers, json });

test('POST creates a profile: 201 with every field, id included, and the documented defaults', async ({ s }) => {
  const r = await create(s, { slug: 'support-bot', name: 'Support bot' });
  assert.is(r.status, 201, r.text);
  assert.equal(Object.keys(r.body), PROFILE_KEYS);
  assert.match(r.body.id, /^[0-9a-f-]{36}$/);
  assert.equal(
    { ...r.body, id: undefined, created_at: undefined, updated_at: undefined },
    {
      id: undefined,
      slug: 'support-bot',
      name: 'Support bot',
      description: '',
      security_tier: 3,
      model: 'test-model-1',
      system_prompt: '',
      max_tokens: 1024,
      temperature: 0.7,
      pii_scrub: true,
      cost_cap_daily_cents: 500,
      rate_limit_rpm: 20,
      rate_limit_rpd: 1000,
      enabled: true,
      knowledge_search_enabled: false,
      channel_reply_mode: 'dm_only',
      can_use_tools: false,
      integrations: {},
      conversation_ttl_hours: 24,
      created_at: undefined,
      updated_at: undefined,
    },
  );
  assert.is(r.body.created_at, r.body.updated_at);
  const read = await http(`${s.orch}${PROFILES}/support-bot`, { headers: admin });
  assert.equal(read.body, r.body);
});

test('POST takes every accepted field', async ({ s }) => {
  const body = {
    slug: 'a',
    name: 'Full',
    security_tier: 1,
    model: 'gpt-x',
    system_prompt: 'Be brief.',
    max_tokens: 200_000,
    rate_limit_rpm: 1,
    rate_limit_rpd: 1,
    cost_cap_daily_cents: 0,
  };
  const r = await create(s, body);
  assert.is(r.status, 201, r.text);
  for (const [k, v] of Object.entries(body)) assert.equal(r.body[k], v, k);
  const sixty = 'a'.repeat(30) + '-' + '9'.repeat(29);
  assert.is((await create(s, { slug: sixty, name: 'Sixty' })).status, 201);
});

test('POST: unknown field names are 400 naming the field; nothing is written', async ({ s }) => {
  const before = await eventCount(s);
  for (const field of [
    'tier',
    'cost_cap_usd',
    'rate_per_min',
    'description',
    'enabled',
    'temperature',
    'channel_reply_mode',
    'id',
  ]) {
    const r = await create(s, { slug: `unknown-${field.replace(/_/g, '-')}`, name: 'x', [field]: 1 });
    assert.is(r.status, 400, field);
    assert.is(r.body.error, 'validation_failed');
    assert.match(r.body.message, field, `the message names ${field}: ${r.body.message}`);
  }
  assert.is(await eventCount(s), before);
});

test('POST: validation of every field and its limits is 400; nothing is written', async ({ s }) => {
  const before = await eventCount(s);
  const bad: [string, Record<string, unknown>][] = [
    ['no slug', { name: 'x' }],
    ['no name', { slug: 'no-name' }],
    ['empty name', { slug: 'empty-name', name: '  ' }],
    ['empty slug', { slug: '', name: 'x' }],
    ['leading hyphen', { slug: '-bot', name: 'x' }],
    ['trailing hyphen', { slug: 'bot-', name: 'x' }],
    ['uppercase', { slug: 'Bot', name: 'x' }],
    ['underscore', { slug: 'my_bot', name: 'x' }],
    ['61 chars', { slug: 'a'.repeat(61), name: 'x' }],
    ['tier 0', { slug: 't0', name: 'x', security_tier: 0 }],
    ['tier 4', { slug: 't4', name: 'x', security_tier: 4 }],
    ['tier 2.5', { slug: 't25', name: 'x', security_tier: 2.5 }],
    ['tier as text', { slug: 'ts', name: 'x', security_tier: '2' }],
    ['negative cap', { slug: 'cap', name: 'x', cost_cap_daily_cents: -1 }],
    ['fractional cap', { slug: 'cap2', name: 'x', cost_cap_daily_cents: 1.5 }],
    ['cap past int4', { slug: 'cap3', name: 'x', cost_cap_daily_cents: 2 ** 31 }],
    ['rpm 0', { slug: 'rpm', name: 'x', rate_limit_rpm: 0 }],
    ['rpd 0', { slug: 'rpd', name: 'x', rate_limit_rpd: 0 }],
    ['max_tokens 0', { slug: 'mt0', name: 'x', max_tokens: 0 }],
    ['max_tokens 200001', { slug: 'mt1', name: 'x', max_tokens: 200_001 }],
    ['model empty', { slug: 'model', name: 'x', model: '' }],
    ['system_prompt not text', { slug: 'sp', name: 'x', system_prompt: 42 }],
  ];
  for (const [what, body] of bad) {
    const r = await create(s, body);
    assert.is(r.status, 400, `${what}: ${r.text}`);
    assert.is(r.body.error, 'validation_failed', what);
  }
  const notObject = await http(`${s.orch}${PROFILES}`, {
    headers: { ...admin, 'content-type': 'application/json' },
    body: '[1]',
  });
  assert.is(notObject.status, 400);
  const malformed = await http(`${s.orch}${PROFILES}`, {
    headers: { ...admin, 'content-type': 'application/json' },
    body: '{"slug":',
  });
  assert.is(malformed.status, 400);
  assert.is(await eventCount(s), before);
});

test('POST: a duplicate slug is 409 slug_taken and changes nothing', async ({ s }) => {
  assert.is((await create(s, { slug: 'dupe', name: 'First' })).status, 201);
  const before = await eventCount(s);
  const again = await create(s, { slug: 'dupe', name: 'Second', security_tier: 1 });
  assert.is(again.status, 409);
  assert.is(again.body.error, 'slug_taken');
  assert.is(await eventCount(s), before);
  assert.is((await http(`${s.orch}${PROFILES}/dupe`, { headers: admin })).body.name, 'First');
});

test('two racing creates of one slug: exactly one 201 and one 409', async ({ s }) => {
  for (let round = 0; round < 5; round++) {
    const slug = `race-${round}`;
    const replies = await Promise.all([create(s, { slug, name: 'A' }), create(s, { slug, name: 'B' })]);
    assert.equal(replies.map((r) => r.status).sort(), [201, 409], replies.map((r) => r.text).join(' | '));
    const { rows } = await s.db.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'ProfileCreated' AND data->>'slug' = $1`,
      [slug],
    );
    assert.is(rows[0].n, 1);
    const winner = replies.find((r) => r.status === 201)!;
    assert.equal((await http(`${s.orch}${PROFILES}/${slug}`, { headers: admin })).body, winner.body);
  }
});

test('GET list: a bare array of every profile, every column flattened plus integrations', async ({ s }) => {
  const r = await http(`${s.orch}${PROFILES}`, { headers: admin });
  assert.is(r.status, 200);
  assert.ok(Array.isArray(r.body));
  const slugs = r.body.map((p: { slug: string }) => p.slug);
  for (const slug of ['personal-assistant', 'support-bot', 'a', 'dupe']) assert.ok(slugs.includes(slug), slug);
  for (const p of r.body) assert.equal(Object.keys(p), PROFILE_KEYS);
});

test('GET one: 404 profile_not_found for an unknown or malformed slug', async ({ s }) => {
  for (const slug of ['nope', 'NOPE', '-x-', 'a'.repeat(70)]) {
    const r = await http(`${s.orch}${PROFILES}/${slug}`, { headers: admin });
    assert.is(r.status, 404, slug);
    assert.equal(r.body, { error: 'profile_not_found', message: 'no such profile' });
  }
});

test('the built-in personal assistant exists from the first start, tier 3, created once by an event', async ({ s }) => {
  const r = await http(`${s.orch}${PROFILES}/personal-assistant`, { headers: admin });
  assert.is(r.status, 200);
  assert.is(r.body.id, PERSONAL_ASSISTANT_ID);
  assert.is(r.body.security_tier, 3);
  assert.is(r.body.model, 'test-model-1');
  assert.ok(r.body.system_prompt.length > 0);
  await s.restart();
  const { rows } = await s.db.pool.query(
    `SELECT stream_id, metadata FROM events WHERE type = 'ProfileCreated' AND data->>'slug' = 'personal-assistant'`,
  );
  assert.is(rows.length, 1);
  assert.is(rows[0].stream_id, 'orch.agent_profile-personal-assistant');
  assert.equal(rows[0].metadata.actor, { kind: 'system', id: 'bootstrap' });
  assert.equal((await http(`${s.orch}${PROFILES}/personal-assistant`, { headers: admin })).body, r.body);
});

test('PUT changes only the fields sent, and shows the profile as changed', async ({ s }) => {
  const before = (await http(`${s.orch}${PROFILES}/support-bot`, { headers: admin })).body;
  s.clock.advance(60_000);
  const change = {
    name: 'Support',
    description: 'Answers customers',
    security_tier: 1,
    model: 'm2',
    system_prompt: 'Help.',
    max_tokens: 2048,
    temperature: 0.2,
    pii_scrub: false,
    cost_cap_daily_cents: 0,
    rate_limit_rpm: 5,
    rate_limit_rpd: 50,
    enabled: false,
    knowledge_search_enabled: true,
    can_use_tools: true,
    conversation_ttl_hours: 48,
  };
  const r = await http(`${s.orch}${PROFILES}/support-bot`, { method: 'PUT', headers: admin, json: change });
  assert.is(r.status, 200, r.text);
  assert.equal(r.body, { ...before, ...change, updated_at: r.body.updated_at });
  assert.ok(Date.parse(r.body.updated_at) >= Date.parse(before.updated_at) + 60_000);
  const one = await http(`${s.orch}${PROFILES}/support-bot`, {
    method: 'PUT',
    headers: admin,
    json: { enabled: true },
  });
  assert.equal(one.body, { ...r.body, enabled: true, updated_at: one.body.updated_at });
  // Disabled profiles stay readable and listed (no delete exists).
  assert.is(
    (await http(`${s.orch}${PROFILES}/support-bot`, { method: 'PUT', headers: admin, json: { enabled: false } })).body
      .enabled,
    false,
  );
  assert.is((await http(`${s.orch}${PROFILES}/support-bot`, { headers: admin })).status, 200);
});

test('PUT that changes nothing appends nothing and answers the profile', async ({ s }) => {
  const current = (await http(`${s.orch}${PROFILES}/support-bot`, { headers: admin })).body;
  const before = await eventCount(s);
  for (const body of [{}, { name: current.name }, { enabled: current.enabled, temperature: current.temperature }]) {
    const r = await http(`${s.orch}${PROFILES}/support-bot`, { method: 'PUT', headers: admin, json: body });
    assert.is(r.status, 200);
    assert.equal(r.body, current);
  }
  assert.is(await eventCount(s), before);
});

test('PUT refuses slug (rename), channel_reply_mode, unknown fields and invalid values with 400; nothing is written', async ({
  s,
}) => {
  const before = await eventCount(s);
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ slug: 'renamed' }, /slug cannot be renamed/],
    [{ slug: 'support-bot' }, /slug cannot be renamed/],
    [{ channel_reply_mode: 'both' }, /channel_reply_mode is set by an operator/],
    [{ tier: 2 }, /tier/],
    [{ integrations: {} }, /integrations/],
    [{ id: 'x' }, /id/],
    [{ security_tier: 0 }, /security_tier/],
    [{ security_tier: 4 }, /security_tier/],
    [{ cost_cap_daily_cents: -5 }, /cost_cap_daily_cents/],
    [{ rate_limit_rpm: 0 }, /rate_limit_rpm/],
    [{ rate_limit_rpd: 0 }, /rate_limit_rpd/],
    [{ max_tokens: 200_001 }, /max_tokens/],
    [{ temperature: -0.1 }, /temperature/],
    [{ temperature: 2.5 }, /temperature/],
    [{ conversation_ttl_hours: 0 }, /conversation_ttl_hours/],
    [{ enabled: 'yes' }, /enabled/],
    [{ name: '' }, /name/],
  ];
  for (const [body, message] of cases) {
    const r = await http(`${s.orch}${PROFILES}/support-bot`, { method: 'PUT', headers: admin, json: body });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error, 'validation_failed');
    assert.match(r.body.message, message);
  }
  assert.is(await eventCount(s), before);
});

test('PUT of an unknown profile is 404', async ({ s }) => {
  const r = await http(`${s.orch}${PROFILES}/ghost`, { method: 'PUT', headers: admin, json: { enabled: false } });
  assert.is(r.status, 404);
  assert.is(r.body.error, 'profile_not_found');
});

test('every profile route: anonymous 401, non-admin 403 admin role required', async ({ s }) => {
  const user = await createAccount(s, ADMIN_KEY, 'user');
  const readonly = await createAccount(s, ADMIN_KEY, 'readonly');
  const calls: [string, string, unknown?][] = [
    ['GET', PROFILES],
    ['POST', PROFILES, { slug: 'nope-x', name: 'x' }],
    ['GET', `${PROFILES}/support-bot`],
    ['GET', `${PROFILES}/support-bot?as_of=2026-01-01T00:00:00Z`],
    ['PUT', `${PROFILES}/support-bot`, { enabled: true }],
    ['GET', `${PROFILES}/support-bot/history`],
  ];
  for (const [method, path, json] of calls) {
    const anonymous = await http(`${s.orch}${path}`, { method, json });
    assert.is(anonymous.status, 401, `${method} ${path}`);
    for (const who of [user, readonly]) {
      const r = await http(`${s.orch}${path}`, { method, json, headers: { 'X-API-Key': who.apiKey } });
      assert.is(r.status, 403, `${who.role} ${method} ${path}`);
      assert.equal(r.body, { error: 'forbidden', message: 'admin role required' });
    }
  }
  assert.is((await http(`${s.orch}${PROFILES}/nope-x`, { headers: admin })).status, 404);
});

test.run();
