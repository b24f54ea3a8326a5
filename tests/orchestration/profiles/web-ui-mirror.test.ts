// The web console's mirrors of the profile, bot knowledge and private-chat routes
// (/api/agent-chat/profiles..., /api/bots/{profile_id}/knowledge..., /api/agent-chat/chat/{slug}):
// the same answers as /api/v1/ for a browser session, 403 session_required for a keyed caller
// (even the admin's), the routes' own role checks, and CSRF on every write.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browser, createAccount, login, type Session } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_profiles-mirror-admin-key-00000000';
const admin = { 'X-API-Key': ADMIN_KEY };

interface Ctx {
  s: TestServices;
  adminSession: Session;
  readerSession: Session;
  profile: { id: string; slug: string };
}
const test = suite<Ctx>('profiles, knowledge and chat: web-UI mirrors');

test.before(async (ctx) => {
  ctx.s = await startTestApps('profiles_mirror', { ADMIN_API_KEY: ADMIN_KEY });
  const [adminAccount, reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'admin'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
  [ctx.adminSession, ctx.readerSession] = await Promise.all([login(ctx.s, adminAccount), login(ctx.s, reader)]);
  const made = await http(`${ctx.s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'mirror-bot', name: 'Mirror bot' },
  });
  assert.is(made.status, 201, made.text);
  ctx.profile = { id: made.body.id, slug: 'mirror-bot' };
});
test.after(async ({ s }) => s?.close());

test('profiles: an admin session lists, creates, reads, changes and reads the history; the same as /api/v1/', async ({
  s,
  adminSession,
}) => {
  const web = browser(s, adminSession);
  const created = await http(`${s.orch}/api/agent-chat/profiles`, {
    headers: web,
    json: { slug: 'made-on-the-web', name: 'Web', security_tier: 2 },
  });
  assert.is(created.status, 201, created.text);
  const list = await http(`${s.orch}/api/agent-chat/profiles`, { headers: web });
  assert.equal(list.body, (await http(`${s.orch}/api/v1/agent-chat/profiles`, { headers: admin })).body);
  const changed = await http(`${s.orch}/api/agent-chat/profiles/made-on-the-web`, {
    method: 'PUT',
    headers: web,
    json: { enabled: false },
  });
  assert.is(changed.status, 200, changed.text);
  assert.is(changed.body.enabled, false);
  const read = await http(`${s.orch}/api/agent-chat/profiles/made-on-the-web`, { headers: web });
  assert.equal(read.body, changed.body);
  const then = await http(
    `${s.orch}/api/agent-chat/profiles/made-on-the-web?as_of=${encodeURIComponent(created.body.created_at)}`,
    { headers: web },
  );
  assert.is(then.body.enabled, true);
  const history = await http(`${s.orch}/api/agent-chat/profiles/made-on-the-web/history`, { headers: web });
  assert.equal(
    history.body.map((h: { event_type: string }) => h.event_type),
    ['ProfileCreated', 'ProfileUpdated'],
  );
  assert.equal(history.body[1].changed_fields, ['enabled']);
  assert.is(history.body[1].actor.id, (await http(`${s.orch}/api/me`, { headers: web })).body.id);
  // A 400 names its field, as it does under /api/v1/.
  const bad = await http(`${s.orch}/api/agent-chat/profiles`, {
    headers: web,
    json: { slug: 'bad', name: 'x', security_tier: 4 },
  });
  assert.is(bad.status, 400);
  assert.match(bad.body.message, /^security_tier: /);
});

test('knowledge: an admin session adds, lists with a filter, searches, changes and deletes', async ({
  s,
  adminSession,
  profile,
}) => {
  const web = browser(s, adminSession);
  const base = `${s.orch}/api/bots/${profile.id}/knowledge`;
  const added = await http(base, {
    headers: web,
    json: { title: 'Refund policy', content: 'Refunds within 30 days.' },
  });
  assert.is(added.status, 201, added.text);
  await http(base, { headers: web, json: { title: 'Opening hours', content: 'We open at nine.' } });
  const filtered = await http(`${base}?title_contains=REFUND`, { headers: web });
  assert.equal(
    filtered.body.map((k: { title: string }) => k.title),
    ['Refund policy'],
  );
  const hits = await http(`${base}/search?q=refunds`, { headers: web });
  assert.is(hits.body[0].id, added.body.id);
  assert.type(hits.body[0].score, 'number');
  const patched = await http(`${base}/${added.body.id}`, { method: 'PATCH', headers: web, json: { title: 'Refunds' } });
  assert.equal([patched.status, patched.body.title, patched.body.content], [200, 'Refunds', 'Refunds within 30 days.']);
  assert.equal((await http(`${base}/${added.body.id}`, { headers: web })).body, patched.body);
  assert.is((await http(`${base}/${added.body.id}`, { method: 'DELETE', headers: web })).status, 204);
  assert.is(
    (await http(`${s.orch}/api/v1/bots/${profile.id}/knowledge/${added.body.id}`, { headers: admin })).status,
    404,
  );
});

test('private chat: a browser session talks to a profile', async ({ s, readerSession, profile }) => {
  const turn = await http(`${s.orch}/api/agent-chat/chat/${profile.slug}`, {
    headers: browser(s, readerSession),
    json: { message: 'Hello' },
  });
  assert.is(turn.status, 200, turn.text);
  assert.type(turn.body.message, 'string');
  assert.is(turn.body.visitor_token, undefined);
});

test('a keyed caller gets 403 session_required on every mirror, the admin key included; anonymous gets 401', async ({
  s,
  profile,
}) => {
  const mirrors: [string, string, unknown?][] = [
    ['GET', '/api/agent-chat/profiles'],
    ['POST', '/api/agent-chat/profiles', { slug: 'keyed', name: 'Keyed' }],
    ['GET', `/api/agent-chat/profiles/${profile.slug}`],
    ['PUT', `/api/agent-chat/profiles/${profile.slug}`, { max_tokens: 10 }],
    ['GET', `/api/agent-chat/profiles/${profile.slug}/history`],
    ['GET', `/api/bots/${profile.id}/knowledge`],
    ['POST', `/api/bots/${profile.id}/knowledge`, { title: 't', content: 'c' }],
    ['GET', `/api/bots/${profile.id}/knowledge/search?q=x`],
    ['POST', `/api/agent-chat/chat/${profile.slug}`, { message: 'Hello' }],
  ];
  for (const [method, path, json] of mirrors) {
    const keyed = await http(`${s.orch}${path}`, { method, headers: admin, ...(json === undefined ? {} : { json }) });
    assert.equal([keyed.status, keyed.body.error], [403, 'session_required'], `${method} ${path}`);
    const anonymous = await http(`${s.orch}${path}`, { method, ...(json === undefined ? {} : { json }) });
    assert.is(anonymous.status, 401, `${method} ${path}`);
  }
  assert.is((await http(`${s.orch}/api/v1/agent-chat/profiles/keyed`, { headers: admin })).status, 404);
});

test("a readonly session: profiles are the admin's (403), knowledge reads are open, knowledge writes refused", async ({
  s,
  readerSession,
  profile,
}) => {
  const web = browser(s, readerSession);
  const list = await http(`${s.orch}/api/agent-chat/profiles`, { headers: web });
  assert.equal([list.status, list.body.message], [403, 'admin role required']);
  assert.is((await http(`${s.orch}/api/agent-chat/profiles/${profile.slug}/history`, { headers: web })).status, 403);
  assert.is((await http(`${s.orch}/api/bots/${profile.id}/knowledge`, { headers: web })).status, 200);
  const write = await http(`${s.orch}/api/bots/${profile.id}/knowledge`, {
    headers: web,
    json: { title: 't', content: 'c' },
  });
  assert.equal([write.status, write.body.message], [403, 'admin role required']);
});

test('CSRF: a session write without the token is refused and changes nothing', async ({ s, adminSession, profile }) => {
  const cookieOnly = { cookie: adminSession.cookie, origin: s.orch };
  const writes: [string, string, unknown?][] = [
    ['POST', '/api/agent-chat/profiles', { slug: 'no-csrf', name: 'No CSRF' }],
    ['PUT', `/api/agent-chat/profiles/${profile.slug}`, { name: 'Renamed without CSRF' }],
    ['POST', `/api/bots/${profile.id}/knowledge`, { title: 'No CSRF', content: 'c' }],
    ['POST', `/api/agent-chat/chat/${profile.slug}`, { message: 'Hello' }],
  ];
  for (const [method, path, json] of writes) {
    const r = await http(`${s.orch}${path}`, { method, headers: cookieOnly, json });
    assert.equal([r.status, r.body.error], [403, 'csrf_failed'], `${method} ${path}`);
  }
  const wrong = await http(`${s.orch}/api/agent-chat/profiles`, {
    headers: { ...browser(s, adminSession), 'x-csrf-token': 'not-the-token' },
    json: { slug: 'no-csrf', name: 'x' },
  });
  assert.is(wrong.status, 403);
  assert.is((await http(`${s.orch}/api/v1/agent-chat/profiles/no-csrf`, { headers: admin })).status, 404);
  assert.is(
    (await http(`${s.orch}/api/v1/agent-chat/profiles/${profile.slug}`, { headers: admin })).body.name,
    'Mirror bot',
  );
  const titles = (await http(`${s.orch}/api/v1/bots/${profile.id}/knowledge`, { headers: admin })).body.map(
    (k: { title: string }) => k.title,
  );
  assert.not.ok(titles.includes('No CSRF'));
});

test.run();
