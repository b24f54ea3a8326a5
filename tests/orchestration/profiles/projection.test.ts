// The profile and knowledge read models: replaying the log into them from scratch (`orchard
// rebuild`) gives exactly what the live projections built, row for row (the generated search
// vectors included).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { knowledgeSnippetsProjection } from '../../../projections/orchestration/knowledge.ts';
import { profilesProjection } from '../../../projections/orchestration/profiles.ts';
import { setReplyMode } from '../../../api/orchestration/profiles/commands.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_profile-projection-admin-key-0000';
const admin = { 'X-API-Key': ADMIN_KEY };

const SNAPSHOTS: Record<string, string> = {
  profiles: 'SELECT * FROM profiles ORDER BY id',
  knowledge_snippets: 'SELECT *, search::text AS search_text FROM knowledge_snippets ORDER BY id',
  knowledge_terms: 'SELECT * FROM knowledge_terms ORDER BY snippet_id, lexeme',
};

const test = suite<{ s: TestServices }>('profiles and knowledge projections');
test.before(async (ctx) => {
  ctx.s = await startTestApps('profiles_projection', { ADMIN_API_KEY: ADMIN_KEY });
});
test.after(async ({ s }) => s?.close());

test('rebuilding the profile and knowledge projections from the log reproduces the live read models', async ({ s }) => {
  // A history touching every event type the two projections consume.
  const ok = (status: number, expected: number) => assert.is(status, expected);
  const created = await http(`${s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'rebuilt', name: 'Rebuilt', security_tier: 1 },
  });
  ok(created.status, 201);
  ok(
    (
      await http(`${s.orch}/api/v1/agent-chat/profiles/rebuilt`, {
        method: 'PUT',
        headers: admin,
        json: { description: 'd', temperature: 1.25, enabled: false },
      })
    ).status,
    200,
  );
  await setReplyMode(
    { commands: s.platform.commands, db: s.platform.pool, clock: s.platform.clock, config: s.platform.config },
    'rebuilt',
    'both',
    { actor: { kind: 'system', id: 'operator-cli' }, correlationId: null },
  );
  const kb = `${s.orch}/api/v1/bots/${created.body.id}/knowledge`;
  const first = await http(kb, {
    headers: admin,
    json: { title: 'First', content: 'The first snippet.', source: 's', metadata: { a: [1, { b: null }] } },
  });
  const second = await http(kb, { headers: admin, json: { title: 'Second', content: 'The second snippet.' } });
  ok(first.status, 201);
  ok(second.status, 201);
  ok(
    (
      await http(`${kb}/${first.body.id}`, {
        method: 'PATCH',
        headers: admin,
        json: { content: 'Changed.', metadata: null },
      })
    ).status,
    200,
  );
  ok((await http(`${kb}/${second.body.id}`, { method: 'DELETE', headers: admin })).status, 204);
  ok(
    (
      await http(`${s.orch}/api/v1/templates/customer-support/instantiate`, {
        headers: admin,
        json: { slug: 'from-template', name: 'T' },
      })
    ).status,
    201,
  );

  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(Object.entries(SNAPSHOTS).map(async ([t, q]) => [t, (await s.db.pool.query(q)).rows])),
    );
  const live = await snapshot();
  assert.ok(live.profiles.length >= 3, 'the personal assistant, rebuilt, from-template');
  assert.ok(live.knowledge_snippets.length >= 6);
  await s.platform.engine.stop(); // rebuild is refused while a process runs the projection
  for (const projection of [profilesProjection, knowledgeSnippetsProjection]) {
    assert.ok((await s.platform.engine.rebuild(projection.name)) > 0, projection.name);
  }
  assert.equal(await snapshot(), live);
});

test.run();
