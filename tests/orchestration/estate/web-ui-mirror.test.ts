// The web console's mirrors of the estate knowledge routes (/api/knowledge/...): the same answers
// as /api/v1/knowledge/... for a browser session, 403 session_required for a keyed caller (the
// admin's included), CSRF on every write, and the routes' own role check (a readonly session
// reads, and its writes are refused).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browser, createAccount, login, type Session } from '../../support/principals.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { ADMIN_KEY, admin, get, ingest } from './helpers.ts';

interface Ctx {
  s: TestServices;
  userSession: Session;
  readerSession: Session;
  stays: string;
}
const test = suite<Ctx>('estate knowledge: web-UI mirrors');

test.before(async (ctx) => {
  ctx.s = await startTestApps('estate_mirror', { ADMIN_API_KEY: ADMIN_KEY });
  const [user, reader] = await Promise.all([
    createAccount(ctx.s, ADMIN_KEY, 'user'),
    createAccount(ctx.s, ADMIN_KEY, 'readonly'),
  ]);
  [ctx.userSession, ctx.readerSession] = await Promise.all([login(ctx.s, user), login(ctx.s, reader)]);
  const stored = await ingest(ctx.s, [
    { source_repo: 'infra', path: 'runbooks/stays.md', content: 'The mirror document about deploys stays here.' },
  ]);
  assert.is(stored.status, 200, stored.text);
  ctx.stays = stored.body.results[0].document_id;
});
test.after(async ({ s }) => s?.close());

test('a user session ingests, stores in the vault, searches, reads the corpus, documents and runs, and deletes: as /api/v1/', async ({
  s,
  userSession,
}) => {
  const web = browser(s, userSession);
  const made = await http(`${s.orch}/api/knowledge/ingest`, {
    headers: web,
    json: {
      documents: [
        { source_repo: 'web', path: 'guides/mirror.md', content: 'A mirrored guide about deploys.' },
        { source_repo: 'web', path: 'guides/empty.md', content: '' },
      ],
    },
  });
  assert.is(made.status, 200, made.text);
  assert.equal(
    [made.body.status, made.body.results.map((r: { status: string }) => r.status)],
    ['partial', ['created', 'failed']],
  );
  const id = made.body.results[0].document_id as string;
  const vaulted = await http(`${s.orch}/api/knowledge/vault`, {
    headers: web,
    json: { documents: [{ path: 'acme/notes.md', content: 'vault deploys' }] },
  });
  assert.equal([vaulted.status, vaulted.body.status], [200, 'ok']);
  for (const path of [
    '/knowledge/search?q=deploys&match=all&limit=500',
    '/knowledge/search?q=deploys&scope=vault',
    '/knowledge/corpus',
    '/knowledge/corpus/paths?source_repo=web',
    '/knowledge/docs?category=guides',
    `/knowledge/doc/${id}`,
    '/knowledge/ingest/status',
  ]) {
    const mirrored = await get(s, `/api${path}`, web);
    assert.is(mirrored.status, 200, `${path}: ${mirrored.text}`);
    assert.equal(mirrored.body, (await get(s, `/api/v1${path}`)).body, path);
  }
  const clamped = await get(s, '/api/knowledge/search?q=deploys&limit=500', web);
  assert.equal([clamped.body.limit, clamped.body.limit_clamped], [100, true]);
  const runs = (await get(s, '/api/knowledge/ingest/status', web)).body;
  assert.is(runs.last_incomplete_run, made.body.run_id);
  assert.equal(
    runs.runs
      .find((r: { run_id: string }) => r.run_id === made.body.run_id)
      .errors.map((e: { path: string }) => e.path),
    ['guides/empty.md'],
  );
  assert.is((await http(`${s.orch}/api/knowledge/doc/${id}`, { method: 'DELETE', headers: web })).status, 204);
  assert.is((await get(s, `/api/v1/knowledge/doc/${id}`)).status, 404);
  assert.is((await get(s, `/api/knowledge/doc/${id}`, web)).status, 404);
});

test('a keyed caller gets 403 session_required on every mirror, the admin key included; anonymous gets 401', async ({
  s,
  stays,
}) => {
  const mirrors: [string, string, unknown?][] = [
    ['POST', '/api/knowledge/ingest', { documents: [{ source_repo: 'keyed', path: 'k/k.md', content: 'keyed' }] }],
    ['POST', '/api/knowledge/vault', { documents: [{ path: 'k/k.md', content: 'keyed' }] }],
    ['GET', '/api/knowledge/search?q=deploys'],
    ['GET', '/api/knowledge/corpus'],
    ['GET', '/api/knowledge/corpus/paths'],
    ['GET', '/api/knowledge/docs'],
    ['GET', `/api/knowledge/doc/${stays}`],
    ['DELETE', `/api/knowledge/doc/${stays}`],
    ['GET', '/api/knowledge/ingest/status'],
  ];
  for (const [method, path, json] of mirrors) {
    const keyed = await http(`${s.orch}${path}`, { method, headers: admin, ...(json === undefined ? {} : { json }) });
    assert.equal([keyed.status, keyed.body.error], [403, 'session_required'], `${method} ${path}`);
    const anonymous = await http(`${s.orch}${path}`, { method, ...(json === undefined ? {} : { json }) });
    assert.is(anonymous.status, 401, `${method} ${path}`);
  }
  assert.is((await get(s, `/api/v1/knowledge/doc/${stays}`)).status, 200);
  assert.equal((await get(s, '/api/v1/knowledge/corpus/paths?source_repo=keyed')).body.paths, []);
});

test('a readonly session reads every mirror; its writes are refused (insufficient_role) and change nothing', async ({
  s,
  readerSession,
  stays,
}) => {
  const web = browser(s, readerSession);
  for (const path of [
    '/api/knowledge/search?q=deploys',
    '/api/knowledge/corpus',
    '/api/knowledge/corpus/paths',
    '/api/knowledge/docs',
    `/api/knowledge/doc/${stays}`,
    '/api/knowledge/ingest/status',
  ]) {
    assert.is((await get(s, path, web)).status, 200, path);
  }
  const writes: [string, string, unknown?][] = [
    ['POST', '/api/knowledge/ingest', { documents: [{ source_repo: 'reader', path: 'r/r.md', content: 'reader' }] }],
    ['POST', '/api/knowledge/vault', { documents: [{ path: 'r/r.md', content: 'reader' }] }],
    ['DELETE', `/api/knowledge/doc/${stays}`],
  ];
  for (const [method, path, json] of writes) {
    const r = await http(`${s.orch}${path}`, { method, headers: web, ...(json === undefined ? {} : { json }) });
    assert.equal([r.status, r.body.error], [403, 'insufficient_role'], `${method} ${path}`);
  }
  assert.is((await get(s, `/api/v1/knowledge/doc/${stays}`)).status, 200);
  assert.equal((await get(s, '/api/v1/knowledge/corpus/paths?source_repo=reader')).body.paths, []);
});

test('CSRF: a session write without the token (or with a wrong one) is refused and changes nothing', async ({
  s,
  userSession,
  stays,
}) => {
  const cookieOnly = { cookie: userSession.cookie, origin: s.orch };
  const wrong = { ...browser(s, userSession), 'x-csrf-token': 'not-the-token' };
  const writes: [string, string, unknown?][] = [
    ['POST', '/api/knowledge/ingest', { documents: [{ source_repo: 'nocsrf', path: 'n/n.md', content: 'no csrf' }] }],
    ['POST', '/api/knowledge/vault', { documents: [{ path: 'nocsrf/n.md', content: 'no csrf' }] }],
    ['DELETE', `/api/knowledge/doc/${stays}`],
  ];
  for (const headers of [cookieOnly, wrong]) {
    for (const [method, path, json] of writes) {
      const r = await http(`${s.orch}${path}`, { method, headers, ...(json === undefined ? {} : { json }) });
      assert.equal([r.status, r.body.error], [403, 'csrf_failed'], `${method} ${path}`);
    }
  }
  assert.is((await get(s, `/api/v1/knowledge/doc/${stays}`)).status, 200);
  assert.equal((await get(s, '/api/v1/knowledge/corpus/paths?source_repo=nocsrf')).body.paths, []);
  assert.equal(
    (await get(s, '/api/v1/knowledge/docs?scope=vault')).body.documents.filter((d: { path: string }) =>
      d.path.startsWith('nocsrf/'),
    ),
    [],
  );
});

test.run();
