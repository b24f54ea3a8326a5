// Template instantiation is all-or-nothing on both log adapters: one append on the new profile's
// stream holds the profile, its seeded snippets and the knowledge-search flag. After a failed
// append nothing is visible (no profile, no snippet, no slug reservation, no event) and a retry
// with the same slug succeeds.
//
// - PostgreSQL: a trigger fails the third event of the append, mid-statement.
// - EventStoreDB (the in-process gRPC test double): the server refuses the append as too large,
//   the way EventStoreDB refuses an append above its maximum append size.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { profileStream } from '../../../domain/orchestration/streams.ts';
import { startEsdbTestServer } from '../../doubles/esdb-test-server.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_atomic-admin-key-00000000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };

const instantiate = (s: TestServices, json: unknown) =>
  http(`${s.orch}/api/v1/templates/internal-it-faq/instantiate`, { headers: admin, json });

/** Nothing of the slug anywhere: not in the log, not in a read model, not through the API. */
async function nothingVisible(s: TestServices, slug: string): Promise<void> {
  assert.equal(
    await s.platform.store.readStream(profileStream(slug)),
    [],
    "no event on the profile's stream (its reservation)",
  );
  assert.is((await http(`${s.orch}/api/v1/agent-chat/profiles/${slug}`, { headers: admin })).status, 404);
  assert.is((await s.db.pool.query('SELECT count(*)::int AS n FROM profiles WHERE slug = $1', [slug])).rows[0].n, 0);
  const { rows } = await s.db.pool.query(
    `SELECT count(*)::int AS n FROM knowledge_snippets k WHERE NOT EXISTS (SELECT 1 FROM profiles p WHERE p.id = k.profile_id)`,
  );
  assert.is(rows[0].n, 0, 'no orphan snippet');
}

async function succeeded(s: TestServices, slug: string, seeded: number): Promise<void> {
  const p = await http(`${s.orch}/api/v1/agent-chat/profiles/${slug}`, { headers: admin });
  assert.is(p.status, 200);
  const snippets = await http(`${s.orch}/api/v1/bots/${p.body.id}/knowledge`, { headers: admin });
  assert.is(snippets.body.length, seeded);
  assert.is(p.body.knowledge_search_enabled, seeded > 0);
  const events = await s.platform.store.readStream(profileStream(slug));
  assert.is(events.length, 1 + seeded + (seeded > 0 ? 1 : 0), 'the profile, each snippet, the flag');
}

// --- PostgreSQL -------------------------------------------------------------------------------

const pg = suite<{ s: TestServices }>('templates: all-or-nothing on the PostgreSQL log');
pg.before(async (ctx) => {
  ctx.s = await startTestApps('templates_atomic_pg', { ADMIN_API_KEY: ADMIN_KEY });
});
pg.after(async ({ s }) => s?.close());

pg('a failure in the middle of the append leaves nothing; a retry with the same slug succeeds', async ({ s }) => {
  await s.db.pool.query(`
    CREATE FUNCTION fail_third_event() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.stream_id = 'orch.agent_profile-midway' AND NEW.revision = 2 THEN RAISE EXCEPTION 'injected failure'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER fail_third_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_third_event();`);
  const failed = await instantiate(s, { slug: 'midway', name: 'Midway' });
  assert.is(failed.status, 500, failed.text);
  await nothingVisible(s, 'midway');
  await s.db.pool.query('DROP TRIGGER fail_third_event ON events; DROP FUNCTION fail_third_event()');
  const retried = await instantiate(s, { slug: 'midway', name: 'Midway' });
  assert.is(retried.status, 201, retried.text);
  assert.is(retried.body.seeded_memory_count, 6);
  await succeeded(s, 'midway', 6);
});

pg('a refusal (a taken slug) adds nothing to the existing profile', async ({ s }) => {
  const before = await s.platform.store.readStream(profileStream('midway'));
  assert.is((await instantiate(s, { slug: 'midway', name: 'Again' })).status, 409);
  assert.equal(
    (await s.platform.store.readStream(profileStream('midway'))).map((e) => e.id),
    before.map((e) => e.id),
  );
});

pg.run();

// --- EventStoreDB ----------------------------------------------------------------------------

const esdb = suite<{ s: TestServices; stopServer: () => Promise<void> }>(
  'templates: all-or-nothing on the EventStoreDB log',
);
esdb.before(async (ctx) => {
  // Big enough for every other append of the run, too small for a template with its memories.
  const server = await startEsdbTestServer({ maxAppendSize: 2500 });
  ctx.stopServer = server.stop;
  ctx.s = await startTestApps('templates_atomic_esdb', { ADMIN_API_KEY: ADMIN_KEY, EVENTSTORE_URL: server.url });
});
esdb.after(async ({ s, stopServer }) => {
  await s?.close();
  await stopServer?.();
});

esdb('the log runs on EventStoreDB here', ({ s }) => {
  assert.is(s.platform.store.constructor.name, 'EventStoreDbEventStore');
});

esdb('an append the server refuses leaves nothing; a retry with the same slug succeeds', async ({ s }) => {
  const failed = await instantiate(s, { slug: 'too-big', name: 'Too big' });
  assert.is(failed.status, 500, failed.text);
  await nothingVisible(s, 'too-big');
  const retried = await instantiate(s, { slug: 'too-big', name: 'Too big', seed_memories: false });
  assert.is(retried.status, 201, retried.text);
  assert.is(retried.body.seeded_memory_count, 0);
  await succeeded(s, 'too-big', 0);
});

esdb('instantiation with memories, a duplicate, and knowledge writes work on EventStoreDB', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/templates/sales-sdr/instantiate`, {
    headers: admin,
    json: { slug: 'esdb-sdr', name: 'SDR', seed_memories: false },
  });
  assert.is(r.status, 201, r.text);
  const dup = await http(`${s.orch}/api/v1/templates/hr-faq/instantiate`, {
    headers: admin,
    json: { slug: 'esdb-sdr', name: 'Dup', seed_memories: false },
  });
  assert.is(dup.status, 409);
  const added = await http(`${s.orch}/api/v1/bots/${r.body.agent_profile_id}/knowledge`, {
    headers: admin,
    json: { title: 'Pricing', content: 'Plans start at ten dollars.' },
  });
  assert.is(added.status, 201, added.text);
  const hits = await http(`${s.orch}/api/v1/bots/${r.body.agent_profile_id}/knowledge/search?q=plans`, {
    headers: admin,
  });
  assert.equal(
    hits.body.map((h: { title: string }) => h.title),
    ['Pricing'],
  );
  assert.is(
    (await http(`${s.orch}/api/v1/agent-chat/profiles/esdb-sdr`, { headers: admin })).body.knowledge_search_enabled,
    true,
  );
});

esdb.run();
