// Paths and query strings are checked before any handler runs, in every service: a NUL (`%00`),
// a lone surrogate (`%ED%A0%80`) or a malformed percent-encoding is refused with the service's
// validation status and error body, never a database error; a path parameter declared as a UUID
// that is not one is the route's 404 (or its validation status), never reaching PostgreSQL.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { wellFormedTarget } from '../../api/shared/url-hygiene.ts';
import type { ChatAccount } from '../support/chat.ts';
import { interactive, REGISTRY_ENV, type Interactive } from '../support/registry.ts';
import { http, startTestApps, type Reply, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';

const ADMIN_KEY = 'orch_targets-admin-key-00000000000000000';
const BAD = {
  nul: '%00',
  'NUL inside a value': 'a%00b',
  'lone high surrogate': '%ED%A0%80',
  'lone low surrogate': '%ED%B0%80',
  'stray percent': '%zz',
  'truncated sequence': '%E2%82',
};

interface Ctx {
  s: TestServices;
  sp: Spaces;
  chatAdmin: ChatAccount;
  registry: Interactive;
}
const test = suite<Ctx>('request targets: path and query checked before any handler');
test.before(async (ctx) => {
  ctx.s = await startTestApps('request_targets', {
    ...REGISTRY_ENV,
    ADMIN_API_KEY: ADMIN_KEY,
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.chatAdmin = await ctx.sp.register('root'); // the first account is the chat admin
  ctx.registry = await interactive(ctx.s, 'ada', 'admin');
  assert.is(
    (
      await http(`${ctx.s.registry}/api/v1/customers`, {
        headers: ctx.registry.headers,
        json: { slug: 'acme', name: 'Acme' },
      })
    ).status,
    201,
  );
});
test.after(async ({ s }) => s?.close());

const orch = (s: TestServices, path: string, method = 'GET') =>
  http(`${s.orch}${path}`, { method, headers: { 'X-API-Key': ADMIN_KEY } });
const chat = (s: TestServices, who: ChatAccount, path: string) =>
  http(`${s.chat}${path}`, { headers: { authorization: `Bearer ${who.access}` } });
const registry = (s: TestServices, who: Interactive, path: string, method = 'GET') =>
  http(`${s.registry}${path}`, { method, headers: who.headers });

const MESSAGE = 'the path and query must be percent-encoded UTF-8 without NUL characters';

test('the predicate: strict decoding of each part; plain and well-encoded targets pass', () => {
  for (const ok of [
    'http://h/api/x',
    'http://h/api/%E2%82%AC?q=%F0%9F%8C%B3&x',
    'http://h/a?b=c%2Fd#%00',
    'http://h/a?q=100%25',
  ])
    assert.ok(wellFormedTarget(ok), ok);
  for (const [what, bad] of Object.entries(BAD)) {
    assert.not.ok(wellFormedTarget(`http://h/api/${bad}`), `path: ${what}`);
    assert.not.ok(wellFormedTarget(`http://h/api/x?q=${bad}`), `query value: ${what}`);
    assert.not.ok(wellFormedTarget(`http://h/api/x?${bad}=1`), `query name: ${what}`);
  }
});

test("orchestration: the issue's query values, and every bad encoding in path and query, are 400 in its body", async ({
  s,
}) => {
  for (const path of ['/api/v1/knowledge/docs?category=', '/api/v1/admin/events?type=']) {
    for (const [what, bad] of Object.entries(BAD)) {
      const r = await orch(s, `${path}${bad}`);
      assert.is(r.status, 400, `${path} ${what}: ${r.text}`);
      assert.equal(r.body, { error: 'validation_failed', message: MESSAGE });
    }
  }
  // Anywhere in the path, and before authentication or routing decides anything.
  assert.is((await http(`${s.orch}/api/v1/projects/%00`)).status, 400);
  assert.is((await http(`${s.orch}/no/such/route%ED%A0%80`)).status, 400);
  // A well-encoded value still reaches its route.
  assert.is((await orch(s, '/api/v1/admin/events?type=%E2%82%AC')).status, 200);
});

test('chat: asset file names and the audit-log action, in its body', async ({ s, chatAdmin }) => {
  for (const path of ['/api/community-assets/x', '/api/group-assets/x', '/api/admin/audit-log?action=']) {
    for (const [what, bad] of Object.entries(BAD)) {
      const r = await chat(s, chatAdmin, `${path}${bad}`);
      assert.is(r.status, 400, `${path} ${what}: ${r.text}`);
      assert.equal(r.body, { error: MESSAGE });
    }
  }
  assert.is((await chat(s, chatAdmin, '/api/admin/audit-log?action=user_suspended')).status, 200);
});

test('registry: a customer slug with NUL, for reads and the delete, is 422 in its body', async ({
  s,
  registry: admin,
}) => {
  for (const [path, method] of [
    ['/api/v1/customers/acme%00/deployments', 'GET'],
    ['/api/v1/customers/acme%00/subscriptions', 'GET'],
    ['/api/v1/customers/acme%00', 'DELETE'],
    ['/api/v1/customers/%ED%A0%80/deployments', 'GET'],
    ['/api/v1/customers?q=%00', 'GET'],
  ] as const) {
    const r = await registry(s, admin, path, method);
    assert.is(r.status, 422, `${method} ${path}: ${r.text}`);
    assert.equal(r.body, { error: { code: 'validation_failed', message: MESSAGE } });
  }
  assert.is((await registry(s, admin, '/api/v1/customers/acme/deployments')).status, 200);
});

const expectNotFound = (r: Reply, what: string) => {
  assert.is(r.status, 404, `${what}: ${r.text}`);
  assert.type(r.body.error, 'string');
};

test("a path parameter declared as a UUID that is not one is the route's 404, after authentication", async ({
  s,
  sp,
  chatAdmin,
}) => {
  const cid = await sp.community(chatAdmin);
  assert.is((await chat(s, chatAdmin, `/api/communities/${cid}/emojis`)).status, 200);
  for (const bad of ['-2147483649', 'x'.repeat(4000), `${cid}x`, '1e3']) {
    expectNotFound(await chat(s, chatAdmin, `/api/communities/${bad}/emojis`), `emojis of ${bad.slice(0, 20)}`);
    expectNotFound(await chat(s, chatAdmin, `/api/communities/${bad}/members`), `members of ${bad.slice(0, 20)}`);
  }
  // Authentication first: no token is 401 whatever the id.
  assert.is((await http(`${s.chat}/api/communities/-2147483649/emojis`)).status, 401);
  // Orchestration: a knowledge profile id answers as a well-formed id of no profile does.
  const r = await orch(s, '/api/v1/bots/-2147483649/knowledge');
  assert.is(r.status, 404, r.text);
  assert.is(r.body.error, 'profile_not_found');
  assert.is(
    (await orch(s, '/api/v1/bots/00000000-0000-4000-8000-000000000000/knowledge')).body.error,
    'profile_not_found',
  );
});

test('nothing of the above reached the database as an error', async ({ s }) => {
  assert.equal(
    s.logLines.filter((line) => /unhandled_error/.test(line)),
    [],
  );
});

test.run();
