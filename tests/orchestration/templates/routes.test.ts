// Bot templates through HTTP: the five bundled templates and their content, instantiation with
// its defaults, overrides and refusals, its web-UI mirror, and who may call what.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browser, createAccount, login, type Account, type Session } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_templates-admin-key-00000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const SLUGS = ['customer-support', 'sales-sdr', 'internal-it-faq', 'hr-faq', 'product-docs'];

interface Ctx {
  s: TestServices;
  user: Account;
  adminAccount: Account;
  adminSession: Session;
  userSession: Session;
}
const test = suite<Ctx>('templates: routes');
test.before(async (ctx) => {
  ctx.s = await startTestApps('templates_routes', { ADMIN_API_KEY: ADMIN_KEY, ORCH_LLM_MODEL: 'tmpl-model' });
  [ctx.user, ctx.adminAccount] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'user'),
    createAccount(ctx.s, ADMIN_KEY, 'admin'),
  ]);
  [ctx.userSession, ctx.adminSession] = await Promise.all([login(ctx.s, ctx.user), login(ctx.s, ctx.adminAccount)]);
});
test.after(async ({ s }) => s?.close());

const instantiate = (s: TestServices, template: string, json: unknown, headers: Record<string, string> = admin) =>
  http(`${s.orch}/api/v1/templates/${template}/instantiate`, { headers, json });
const eventCount = async (s: TestServices) =>
  Number((await s.db.pool.query('SELECT count(*) FROM events')).rows[0].count);
const profile = (s: TestServices, slug: string) =>
  http(`${s.orch}/api/v1/agent-chat/profiles/${slug}`, { headers: admin });
const knowledge = async (s: TestServices, profileId: string) =>
  (await http(`${s.orch}/api/v1/bots/${profileId}/knowledge`, { headers: admin })).body;

test('GET /api/v1/templates: the five bundled templates, each with slug, name and description (any key)', async ({
  s,
  user,
}) => {
  for (const headers of [admin, { 'X-API-Key': user.apiKey }]) {
    const r = await http(`${s.orch}/api/v1/templates`, { headers });
    assert.is(r.status, 200);
    assert.equal(
      r.body.map((t: { slug: string }) => t.slug),
      SLUGS,
    );
    for (const t of r.body) {
      assert.equal(Object.keys(t), ['slug', 'name', 'description']);
      assert.ok(t.name.length > 0 && t.description.length > 20);
    }
  }
});

test('GET /api/v1/templates/{slug}: real content, security defaults and 3-8 starter memories within the snippet limits', async ({
  s,
  user,
}) => {
  for (const slug of SLUGS) {
    const r = await http(`${s.orch}/api/v1/templates/${slug}`, { headers: { 'X-API-Key': user.apiKey } });
    assert.is(r.status, 200, slug);
    assert.equal(Object.keys(r.body), [
      'slug',
      'name',
      'description',
      'default_system_prompt',
      'default_security',
      'starter_memories',
    ]);
    assert.ok(r.body.default_system_prompt.length > 100, slug);
    assert.equal(Object.keys(r.body.default_security).sort(), [
      'cost_cap_daily_cents',
      'pii_scrub',
      'rate_limit_rpd',
      'rate_limit_rpm',
      'security_tier',
    ]);
    const sec = r.body.default_security;
    assert.ok(
      [1, 2, 3].includes(sec.security_tier) &&
        sec.cost_cap_daily_cents >= 0 &&
        sec.rate_limit_rpm >= 1 &&
        sec.rate_limit_rpd >= 1,
    );
    assert.ok(r.body.starter_memories.length >= 3 && r.body.starter_memories.length <= 8, slug);
    for (const m of r.body.starter_memories) {
      assert.equal(Object.keys(m), ['title', 'content']);
      assert.ok([...m.title].length >= 1 && [...m.title].length <= 200);
      assert.ok([...m.content].length >= 50 && [...m.content].length <= 4000);
    }
  }
  assert.is(
    (await http(`${s.orch}/api/v1/templates/internal-it-faq`, { headers: admin })).body.default_security.security_tier,
    3,
  );
  const unknown = await http(`${s.orch}/api/v1/templates/no-such-template`, { headers: admin });
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error, 'template_not_found');
});

test("instantiate: 201 with the profile id, slug and seeded count; the profile carries the template's defaults and its memories", async ({
  s,
}) => {
  const template = (await http(`${s.orch}/api/v1/templates/customer-support`, { headers: admin })).body;
  const r = await instantiate(s, 'customer-support', { slug: 'acme-support', name: 'Acme support' });
  assert.is(r.status, 201, r.text);
  assert.equal(Object.keys(r.body), ['agent_profile_id', 'slug', 'seeded_memory_count']);
  assert.is(r.body.slug, 'acme-support');
  assert.is(r.body.seeded_memory_count, template.starter_memories.length);
  const p = (await profile(s, 'acme-support')).body;
  assert.is(p.id, r.body.agent_profile_id);
  assert.is(p.name, 'Acme support');
  assert.is(p.description, template.description);
  assert.is(p.system_prompt, template.default_system_prompt);
  assert.is(p.model, 'tmpl-model');
  for (const [k, v] of Object.entries(template.default_security)) assert.is(p[k], v, k);
  assert.is(p.knowledge_search_enabled, true, 'seeded memories turn knowledge search on');
  const snippets = await knowledge(s, p.id);
  assert.equal(
    snippets.map((k: { title: string }) => k.title),
    template.starter_memories.map((m: { title: string }) => m.title).reverse(),
    'newest first',
  );
  for (const k of snippets) assert.is(k.source, 'template:customer-support');
  // One append: every event of the new stream was written by one transaction.
  const { rows } = await s.db.pool.query(
    `SELECT DISTINCT transaction_id FROM events WHERE stream_id = 'orch.agent_profile-acme-support'`,
  );
  assert.is(rows.length, 1);
  const search = await http(`${s.orch}/api/v1/bots/${p.id}/knowledge/search?q=refund`, { headers: admin });
  assert.is(search.body[0].title, 'Refunds and returns');
});

test('instantiate: description, system prompt and security overrides; seed_memories false seeds nothing', async ({
  s,
}) => {
  const r = await instantiate(s, 'hr-faq', {
    slug: 'people-bot',
    name: 'People',
    description: 'Our HR bot',
    system_prompt_override: 'Only answer leave questions.',
    seed_memories: false,
    security_tier: 3,
    cost_cap_daily_cents: 0,
    rate_limit_rpm: 1,
    rate_limit_rpd: 1,
  });
  assert.is(r.status, 201, r.text);
  assert.is(r.body.seeded_memory_count, 0);
  const p = (await profile(s, 'people-bot')).body;
  assert.equal(
    [
      p.description,
      p.system_prompt,
      p.security_tier,
      p.cost_cap_daily_cents,
      p.rate_limit_rpm,
      p.rate_limit_rpd,
      p.knowledge_search_enabled,
    ],
    ['Our HR bot', 'Only answer leave questions.', 3, 0, 1, 1, false],
  );
  assert.equal(await knowledge(s, p.id), []);
  const partial = await instantiate(s, 'product-docs', { slug: 'docs-bot', name: 'Docs', security_tier: 2 });
  const docs = (await profile(s, 'docs-bot')).body;
  assert.is(docs.security_tier, 2);
  assert.is(docs.rate_limit_rpm, 30, "the template's value where no override is sent");
  assert.is(partial.body.seeded_memory_count, 4);
});

test('instantiate: a duplicate slug is 409 and leaves the existing profile and its knowledge alone', async ({ s }) => {
  const existing = (await profile(s, 'acme-support')).body;
  const before = await eventCount(s);
  for (const template of ['sales-sdr', 'customer-support']) {
    const r = await instantiate(s, template, { slug: 'acme-support', name: 'Again' });
    assert.is(r.status, 409);
    assert.is(r.body.error, 'slug_taken');
  }
  const plain = await http(`${s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'plain-one', name: 'Plain' },
  });
  assert.is((await instantiate(s, 'sales-sdr', { slug: 'plain-one', name: 'Again' })).status, 409);
  assert.is(await eventCount(s), before + 1);
  assert.equal((await profile(s, 'acme-support')).body, existing);
  assert.is((await knowledge(s, existing.id)).length, 5);
  assert.equal(await knowledge(s, plain.body.id), []);
});

test('instantiate: 400 for tier outside 1-3, negative cap, rate limit below 1, unknown fields, bad slug; 404 for an unknown template; nothing written', async ({
  s,
}) => {
  const before = await eventCount(s);
  const bad: [string, Record<string, unknown>][] = [
    ['tier 0', { security_tier: 0 }],
    ['tier 4', { security_tier: 4 }],
    ['negative cap', { cost_cap_daily_cents: -1 }],
    ['rpm 0', { rate_limit_rpm: 0 }],
    ['rpd 0', { rate_limit_rpd: 0 }],
    ['unknown field', { tier: 1 }],
    ['unknown field 2', { model: 'x' }],
    ['seed not boolean', { seed_memories: 'yes' }],
    ['bad slug', { slug: 'Bad Slug' }],
    ['no slug', { slug: undefined }],
    ['no name', { name: undefined }],
    ['prompt not text', { system_prompt_override: 3 }],
  ];
  for (const [what, change] of bad) {
    const r = await instantiate(s, 'customer-support', { slug: 'refused-one', name: 'Refused', ...change });
    assert.is(r.status, 400, `${what}: ${r.text}`);
    assert.is(r.body.error, 'validation_failed');
  }
  assert.match(
    (await instantiate(s, 'customer-support', { slug: 'refused-one', name: 'x', tier: 1 })).body.message,
    /tier/,
  );
  const unknown = await instantiate(s, 'no-such-template', { slug: 'refused-one', name: 'Refused' });
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error, 'template_not_found');
  assert.is(await eventCount(s), before);
  assert.is((await profile(s, 'refused-one')).status, 404);
  // Nothing was reserved: the slug is still free.
  assert.is((await instantiate(s, 'customer-support', { slug: 'refused-one', name: 'Finally' })).status, 201);
});

test('who may call: list and detail need any key; instantiate needs an admin', async ({ s, user }) => {
  for (const path of ['/api/v1/templates', '/api/v1/templates/hr-faq']) {
    assert.is((await http(`${s.orch}${path}`)).status, 401, path);
    assert.is((await http(`${s.orch}${path}`, { headers: { 'X-API-Key': user.apiKey } })).status, 200, path);
  }
  const anonymous = await instantiate(s, 'hr-faq', { slug: 'nope-1', name: 'x' }, {});
  assert.is(anonymous.status, 401);
  const refused = await instantiate(s, 'hr-faq', { slug: 'nope-1', name: 'x' }, { 'X-API-Key': user.apiKey });
  assert.is(refused.status, 403);
  assert.equal(refused.body, { error: 'forbidden', message: 'admin role required' });
  assert.is((await profile(s, 'nope-1')).status, 404);
});

test('the web-UI mirror under /api/templates: admin browser sessions only', async ({
  s,
  adminSession,
  userSession,
}) => {
  const list = await http(`${s.orch}/api/templates`, { headers: browser(s, adminSession) });
  assert.is(list.status, 200);
  assert.equal(
    list.body.map((t: { slug: string }) => t.slug),
    SLUGS,
  );
  assert.is(
    (await http(`${s.orch}/api/templates/sales-sdr`, { headers: browser(s, adminSession) })).body.slug,
    'sales-sdr',
  );
  const made = await http(`${s.orch}/api/templates/sales-sdr/instantiate`, {
    headers: browser(s, adminSession),
    json: { slug: 'web-sdr', name: 'SDR' },
  });
  assert.is(made.status, 201, made.text);
  assert.is((await profile(s, 'web-sdr')).body.id, made.body.agent_profile_id);
  // A keyed admin uses /api/v1/; a non-admin session is refused by require_admin; CSRF is checked.
  assert.is((await http(`${s.orch}/api/templates`, { headers: admin })).body.error, 'session_required');
  const user = await http(`${s.orch}/api/templates`, { headers: browser(s, userSession) });
  assert.is(user.status, 403);
  assert.is(user.body.message, 'admin role required');
  const noCsrf = await http(`${s.orch}/api/templates/sales-sdr/instantiate`, {
    headers: { cookie: adminSession.cookie },
    json: { slug: 'web-sdr-2', name: 'SDR' },
  });
  assert.is(noCsrf.status, 403);
  assert.is(noCsrf.body.error, 'csrf_failed');
  assert.is((await profile(s, 'web-sdr-2')).status, 404);
});

test.run();
