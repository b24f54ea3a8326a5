// Profile history for auditors: every change oldest first, and the profile as it was at any
// instant, both read from the profile's stream (not the read model).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BOOTSTRAP_ADMIN_ID } from '../../../domain/orchestration/users/decider.ts';
import { http, startTestApps, type Reply, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_history-admin-key-0000000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };
const PROFILES = '/api/v1/agent-chat/profiles';

const test = suite<{ s: TestServices }>('profiles: history and as_of');
test.before(async (ctx) => {
  ctx.s = await startTestApps('profiles_history', { ADMIN_API_KEY: ADMIN_KEY });
});
test.after(async ({ s }) => s?.close());

const get = (s: TestServices, path: string) => http(`${s.orch}${PROFILES}${path}`, { headers: admin });
const put = (s: TestServices, json: unknown) =>
  http(`${s.orch}${PROFILES}/audited`, { method: 'PUT', headers: admin, json });
const at = (iso: string, deltaMs: number) => new Date(Date.parse(iso) + deltaMs).toISOString();

test('a profile changed three times: history lists each change; as_of returns each exact earlier version', async ({
  s,
}) => {
  const steps: Reply[] = [];
  steps.push(
    await http(`${s.orch}${PROFILES}`, {
      headers: admin,
      json: { slug: 'audited', name: 'Audited v1', security_tier: 2 },
    }),
  );
  s.clock.advance(60_000);
  steps.push(await put(s, { name: 'Audited v2', temperature: 0.3 }));
  s.clock.advance(60_000);
  steps.push(await put(s, { enabled: false }));
  s.clock.advance(60_000);
  steps.push(await put(s, { system_prompt: 'Answer in French.', security_tier: 1, rate_limit_rpm: 60 }));
  assert.equal(
    steps.map((r) => r.status),
    [201, 200, 200, 200],
  );
  const versions = steps.map((r) => r.body);

  const history = await get(s, '/audited/history');
  assert.is(history.status, 200);
  assert.equal(
    history.body.map((h: { revision: number }) => h.revision),
    [0, 1, 2, 3],
  );
  assert.equal(
    history.body.map((h: { event_type: string }) => h.event_type),
    ['ProfileCreated', 'ProfileUpdated', 'ProfileUpdated', 'ProfileUpdated'],
  );
  assert.equal(
    history.body.slice(1).map((h: { changed_fields: string[] }) => h.changed_fields),
    [['name', 'temperature'], ['enabled'], ['security_tier', 'system_prompt', 'rate_limit_rpm']],
  );
  assert.ok(history.body[0].changed_fields.includes('slug'));
  history.body.forEach((h: { actor: unknown; correlation_id: string; at: string }, i: number) => {
    assert.equal(h.actor, { kind: 'user', id: BOOTSTRAP_ADMIN_ID });
    assert.is(h.correlation_id, steps[i]!.headers.get('x-request-id'), 'the request id of the change');
    assert.is(h.at, versions[i].updated_at);
    assert.equal(Object.keys(h), ['revision', 'event_type', 'changed_fields', 'actor', 'correlation_id', 'at']);
  });

  // Each version at its own instant, and still a second before the next change.
  for (const [i, version] of versions.entries()) {
    for (const instant of [version.updated_at, at(version.updated_at, 59_000)]) {
      const then = await get(s, `/audited?as_of=${encodeURIComponent(instant)}`);
      assert.is(then.status, 200, then.text);
      assert.equal(then.body, version, `version ${i} as of ${instant}`);
    }
  }
  // Now, from the stream, equals the read model.
  const now = await get(s, `/audited?as_of=${encodeURIComponent(at(versions[3].updated_at, 3_600_000))}`);
  assert.equal(now.body, (await get(s, '/audited')).body);
  // An offset other than Z names the same instant.
  const offset = versions[1].updated_at.replace('Z', '+00:00');
  assert.equal((await get(s, `/audited?as_of=${encodeURIComponent(offset)}`)).body, versions[1]);
});

test('as_of before the profile existed is 404; a malformed as_of is 400; unknown profiles are 404', async ({ s }) => {
  const created = (await get(s, '/audited/history')).body[0].at;
  const before = await get(s, `/audited?as_of=${encodeURIComponent(at(created, -1))}`);
  assert.is(before.status, 404);
  assert.is(before.body.error, 'profile_not_found');
  for (const bad of ['yesterday', '2026-13-01T00:00:00Z', '2026-01-01', '1700000000']) {
    const r = await get(s, `/audited?as_of=${encodeURIComponent(bad)}`);
    assert.is(r.status, 400, bad);
    assert.is(r.body.error, 'validation_failed');
  }
  assert.is((await get(s, '/ghost/history')).status, 404);
  for (const odd of ['NOT-A-SLUG', '%E2%9C%93', 'a%20b']) {
    assert.is((await get(s, `/${odd}/history`)).status, 404, odd);
    assert.is((await get(s, `/${odd}?as_of=${encodeURIComponent(new Date().toISOString())}`)).status, 404, odd);
  }
  assert.is((await get(s, '/ghost/history')).body.error, 'profile_not_found');
  assert.is((await get(s, `/ghost?as_of=${encodeURIComponent(new Date().toISOString())}`)).status, 404);
});

test('history and as_of read the log, not the read model', async ({ s }) => {
  await s.db.pool.query(`UPDATE profiles SET name = 'tampered' WHERE slug = 'audited'`);
  const history = await get(s, '/audited/history');
  assert.is(history.body.length, 4);
  const far = encodeURIComponent(new Date(Date.now() + 86_400_000 * 365).toISOString());
  assert.is((await get(s, `/audited?as_of=${far}`)).body.name, 'Audited v2');
  assert.is((await get(s, '/audited')).body.name, 'tampered');
  await s.db.pool.query(`UPDATE profiles SET name = 'Audited v2' WHERE slug = 'audited'`);
});

test('history: knowledge events on the same stream are not profile changes; the flag they turn on is', async ({
  s,
}) => {
  const profile = (await get(s, '/audited')).body;
  const added = await http(`${s.orch}/api/v1/bots/${profile.id}/knowledge`, {
    headers: admin,
    json: { title: 'Hours', content: 'Nine to five.' },
  });
  assert.is(added.status, 201, added.text);
  const history = (await get(s, '/audited/history')).body;
  assert.is(history.length, 5);
  assert.is(history[4].event_type, 'ProfileKnowledgeSearchEnabled');
  assert.equal(history[4].changed_fields, ['knowledge_search_enabled']);
  assert.is(history[4].revision, 5, 'revision 4 is the snippet, in the same append');
});

test.run();
