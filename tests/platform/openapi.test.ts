// Routes declared once, documented by construction: each service's OpenAPI 3.1 document lists
// every route its router answers (the router walk), the orchestration document carries each
// route's request schema and response codes, the document and its reference page need an
// authenticated caller, and `orchard openapi <service>` prints the same document offline.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { undocumentedRoutes } from '../../api/shared/openapi.ts';
import { createApp, SERVICES } from '../../main/apps.ts';
import { offlineDocument } from '../../main/openapi.ts';
import { bearer, registerChat } from '../support/chat.ts';
import { http, startTestApps, type RequestOptions, type TestServices } from '../support/services.ts';

const run = promisify(execFile);
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/orchard.mjs');
const ADMIN_KEY = 'orch_openapi-admin-key-00000000000000000';
const DOC_PATH = { orch: '/api/v1/openapi.json', chat: '/api/openapi.json', registry: '/api/v1/openapi.json' } as const;

type Operation = {
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, unknown>;
  parameters?: unknown[];
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

const test = suite<{ s: TestServices }>('OpenAPI documents');
test.before(async (ctx) => {
  ctx.s = await startTestApps('openapi', {
    ADMIN_API_KEY: ADMIN_KEY,
    REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32',
  });
});
test.after(async ({ s }) => s?.close());

test('router walk: every route each service answers is in its document', ({ s }) => {
  for (const name of SERVICES) {
    const app = createApp(name, s.platform);
    const document = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: name, version: '0' } });
    assert.equal(undocumentedRoutes(app, document), [], name);
    assert.ok(app.routes.filter((r) => r.method !== 'ALL').length > 0);
  }
});

test('the router walk would catch an undeclared route', ({ s }) => {
  const app = createApp('registry', s.platform) as unknown as OpenAPIHono;
  app.get('/api/v1/sneaky', (c) => c.text('not declared'));
  const document = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'registry', version: '0' } });
  assert.equal(undocumentedRoutes(app, document), ['GET /api/v1/sneaky']);
});

test('orchestration: every operation has its response codes; bodies and parameters are described', async ({ s }) => {
  const doc = (await http(`${s.orch}/api/v1/openapi.json`, { headers: { 'X-API-Key': ADMIN_KEY } })).body as Document;
  assert.is(doc.openapi, '3.1.0');
  const anonymous = new Set([
    '/api/v1/health',
    '/api/v1/health/db',
    '/metrics',
    '/auth/login',
    '/auth/logout',
    '/auth/session',
    '/api/v1/public/agents/chat/{slug}',
  ]);
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const codes = Object.keys(op.responses);
      assert.ok(
        codes.some((c) => /^2/.test(c) || c === '101'),
        `${method} ${route}: no success response`,
      ); // 101: a socket
      if (!anonymous.has(route)) assert.ok(codes.includes('401'), `${method} ${route}: no 401`);
      if (route.includes('{')) assert.ok(op.parameters?.length, `${method} ${route}: path parameter undocumented`);
    }
  }
  // Routes with a body document its schema, and its validation and size refusals.
  for (const [route, method] of [
    ['/auth/register', 'post'],
    ['/auth/login', 'post'],
    ['/api/v1/admin/users', 'post'],
    ['/api/v1/admin/users/{user_id}', 'patch'],
    ['/api/admin/users', 'post'],
    ['/api/v1/agent-chat/profiles', 'post'],
    ['/api/v1/agent-chat/profiles/{slug}', 'put'],
    ['/api/v1/bots/{profile_id}/knowledge', 'post'],
    ['/api/v1/bots/{profile_id}/knowledge/{id}', 'patch'],
    ['/api/v1/templates/{slug}/instantiate', 'post'],
    ['/api/templates/{slug}/instantiate', 'post'],
    ['/api/v1/public/agents/chat/{slug}', 'post'],
    ['/api/v1/agent-chat/chat/{slug}', 'post'],
    ['/api/assistant-user/chat', 'post'],
  ] as const) {
    const op = doc.paths[route]![method]!;
    assert.ok(op.requestBody?.content['application/json']?.schema, `${method} ${route}: no request schema`);
    for (const code of ['400', '413']) assert.ok(op.responses[code], `${method} ${route}: no ${code}`);
  }
  const login = doc.paths['/auth/login']!.post!;
  assert.ok(login.responses['429'], 'login documents its 429');
  // Response schemas are components: /me answers a Me, which carries the key.
  assert.match(JSON.stringify(doc.paths['/api/v1/me']!.get!.responses['200']), /#\/components\/schemas\/Me/);
  assert.match(
    JSON.stringify((doc as unknown as { components: { schemas: Record<string, unknown> } }).components.schemas.Me),
    /"api_key":\{"type":"string"/,
  );
  const list = doc.paths['/api/v1/admin/users']!.get!;
  assert.equal((list.parameters as { name: string }[]).map((p) => p.name).sort(), ['limit', 'offset']);
});

const VALIDATION = { orch: '400', chat: '400', registry: '422' } as const;
const documentOf = (s: TestServices, name: (typeof SERVICES)[number]) =>
  createApp(name, s.platform).getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: name, version: '0' },
  }) as unknown as Document;
// Streamed multipart uploads read their own body (400 for another type); JSON bodies meet Hono's media-type gate.
const JSON_BODY = /json/;

test('every operation declares the shared answers: validation status, 413 with a body, 415 for a JSON body, 429 behind a limiter', ({
  s,
}) => {
  for (const name of SERVICES) {
    const doc = documentOf(s, name);
    for (const [route, operations] of Object.entries(doc.paths)) {
      // Plain OpenAPI templates: no Hono pattern syntax, every parameter of the path described.
      assert.not.match(route, /\{[^}]*\{|:\w/, `${name} ${route}: not a plain template`);
      for (const [method, op] of Object.entries(operations)) {
        const at = `${name} ${method.toUpperCase()} ${route}`;
        const codes = Object.keys(op.responses);
        assert.ok(codes.includes(VALIDATION[name]), `${at}: no ${VALIDATION[name]}`);
        if (method !== 'get' && method !== 'head') assert.ok(codes.includes('413'), `${at}: no 413`);
        if (Object.keys(op.requestBody?.content ?? {}).some((t) => JSON_BODY.test(t)))
          assert.ok(codes.includes('415'), `${at}: no 415`);
        // Chat: every route behind the access-token check (it documents a 401) has the per-user limit.
        if ((name === 'chat' && codes.includes('401')) || (name === 'registry' && route.startsWith('/api/')))
          assert.ok(codes.includes('429'), `${at}: no 429`);
        for (const [, param] of route.matchAll(/\{(\w+)\}/g)) {
          assert.ok(
            (op.parameters as { name: string; in: string }[] | undefined)?.some(
              (p) => p.name === param && p.in === 'path',
            ),
            `${at}: path parameter ${param} undescribed`,
          );
        }
      }
    }
  }
  const chat = documentOf(s, 'chat');
  assert.ok(chat.paths['/api/calendar/feed-tokens']!.post!.responses['400'], 'feed tokens: 400');
  assert.ok(chat.paths['/api/communities/{cid}/emojis']!.get!.responses['404'], 'emojis: 404');
  // The .ics routes keep their pattern in code, and on the parameter.
  const ics = chat.paths['/api/meetings/{file}']!.get!;
  assert.equal((ics.parameters as { schema: { pattern: string } }[])[0]!.schema.pattern, '^[0-9a-fA-F-]+\\.ics$');
  assert.ok(chat.paths['/api/calendar/feeds/{file}']!.get);
  // A file is served as its stored type, whole or a range.
  const file = chat.paths['/api/files/{id}']!.get!.responses as Record<string, { content?: Record<string, unknown> }>;
  assert.equal(Object.keys(file['200']!.content!), ['*/*']);
  assert.equal(Object.keys(file['206']!.content!), ['*/*']);
  assert.ok(file['416']);
  // The runner's claim may answer `agent: null`; the update status `apply: null`.
  const orch = documentOf(s, 'orch') as unknown as {
    components: { schemas: Record<string, { properties: Record<string, { anyOf?: unknown[] }> }> };
  };
  assert.ok(
    orch.components.schemas.RunnerClaim!.properties.agent!.anyOf?.some((a) => JSON.stringify(a) === '{"type":"null"}'),
    'claim: agent nullable',
  );
  assert.ok(
    orch.components.schemas.UpdateStatus!.properties.apply!.anyOf?.some((a) => JSON.stringify(a) === '{"type":"null"}'),
    'update status: apply nullable',
  );
});

test("answers of the shared machinery are each in the operation's document", async ({ s }) => {
  const docs = { orch: documentOf(s, 'orch'), chat: documentOf(s, 'chat'), registry: documentOf(s, 'registry') };
  const user = await registerChat(s.chat, 'openapi_answers');
  const me = await http(`${s.registry}/api/v1/auth/me`, {
    headers: { 'X-Idp-Username': 'boss', 'X-Idp-Groups': 'registry-admin' },
  });
  const registryAdmin = {
    'X-Idp-Username': 'boss',
    'X-Idp-Groups': 'registry-admin',
    cookie: `registry_csrf=${me.body.csrf_token}`,
    'x-csrf-token': me.body.csrf_token,
  };
  const principal = { orch: { 'X-API-Key': ADMIN_KEY }, chat: bearer(user), registry: registryAdmin };
  const base = { orch: s.orch, chat: s.chat, registry: s.registry };
  const cases: [keyof typeof docs, string, string, string, RequestOptions, number][] = [
    // Hono's media-type gate on JSON routes: text, XML, a form, multipart.
    [
      'orch',
      'post',
      '/api/v1/admin/users',
      '/api/v1/admin/users',
      { headers: { 'content-type': 'text/plain' }, body: '{}' },
      415,
    ],
    ['chat', 'post', '/api/dms', '/api/dms', { headers: { 'content-type': 'application/xml' }, body: '<a/>' }, 415],
    [
      'chat',
      'post',
      '/api/dms',
      '/api/dms',
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=b' },
      415,
    ],
    [
      'registry',
      'post',
      '/api/v1/customers',
      '/api/v1/customers',
      { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x--' },
      415,
    ],
    // Query and path validation: a repeated scalar, an over-long value, a NUL.
    ['orch', 'get', '/api/v1/knowledge/docs', '/api/v1/knowledge/docs?scope=a&scope=b', {}, 400],
    ['chat', 'get', '/api/community-invites/{code}', `/api/community-invites/${'c'.repeat(4000)}`, {}, 400],
    ['chat', 'post', '/api/calendar/feed-tokens', '/api/calendar/feed-tokens', { json: { channel_id: 42 } }, 400],
    ['registry', 'get', '/api/v1/auth/login', `/api/v1/auth/login?return_to=/${'r'.repeat(4000)}`, {}, 422],
    ['registry', 'get', '/api/v1/customers/{slug}/deployments', '/api/v1/customers/a%00/deployments', {}, 422],
    // A UUID parameter that is not one, and a body over the limit.
    ['chat', 'get', '/api/communities/{cid}/emojis', '/api/communities/-2147483649/emojis', {}, 404],
    [
      'orch',
      'post',
      '/api/v1/projects',
      '/api/v1/projects',
      {
        headers: { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) },
        body: 'x'.repeat(2 * 1024 * 1024),
      },
      413,
    ],
  ];
  for (const [service, method, template, path, init, status] of cases) {
    const r = await http(`${base[service]}${path}`, {
      method: method.toUpperCase(),
      ...init,
      headers: { ...principal[service], ...init.headers },
    });
    assert.is(r.status, status, `${service} ${method} ${path.slice(0, 60)}: ${r.text.slice(0, 200)}`);
    assert.ok(
      docs[service].paths[template]?.[method]?.responses[String(status)],
      `${service} ${method.toUpperCase()} ${template}: ${status} undeclared`,
    );
  }
});

test('the document and the reference page need an authenticated caller of the service', async ({ s }) => {
  const anonymous = await http(`${s.orch}/api/v1/openapi.json`);
  assert.is(anonymous.status, 401);
  assert.equal(anonymous.body, { error: 'unauthorized', message: 'missing X-API-Key header' });
  assert.is(
    (await http(`${s.orch}/api/v1/openapi.json`, { headers: { 'X-API-Key': 'orch_wrong' } })).body.message,
    'invalid or inactive API key',
  );
  for (const p of ['/api/v1/docs', '/api/v1/docs/swagger-ui-bundle.js'])
    assert.is((await http(`${s.orch}${p}`)).status, 401, p);
  // Chat: any authenticated chat user (a Bearer access token); anonymous or a bad token is 401.
  const chat = await http(`${s.chat}${DOC_PATH.chat}`);
  assert.is(chat.status, 401);
  assert.type(chat.body.error, 'string');
  assert.is((await http(`${s.chat}/api/docs`)).status, 401);
  assert.is(
    (await http(`${s.chat}${DOC_PATH.chat}`, { headers: { authorization: 'Bearer not.a.token' } })).status,
    401,
  );
  const user = await registerChat(s.chat, 'openapi_reader');
  const doc = await http(`${s.chat}${DOC_PATH.chat}`, { headers: bearer(user) });
  assert.is(doc.status, 200);
  assert.ok(doc.body.paths['/api/auth/register'].post);
  assert.ok(doc.body.paths['/api/keys/{user_id}/bundle'].get);
  assert.is((await http(`${s.chat}/api/docs`, { headers: bearer(user) })).status, 200);
  const registry = await http(`${s.registry}${DOC_PATH.registry}`);
  assert.is(registry.status, 401);
  assert.is(registry.body.error.code, 'unauthorized');
  assert.is((await http(`${s.registry}/api/v1/docs`)).status, 401);
  assert.is(
    (await http(`${s.registry}/api/v1/docs`, { headers: { authorization: 'Bearer registry_sk_not-a-token' } })).status,
    401,
  );
  // Any authenticated registry caller reads them: a read-only forward-auth user, a token of any scope.
  const readonly = { 'X-Idp-Username': 'reader' };
  const registryDoc = await http(`${s.registry}${DOC_PATH.registry}`, { headers: readonly });
  assert.is(registryDoc.status, 200);
  assert.ok(registryDoc.body.paths['/api/v1/customers']);
  assert.is((await http(`${s.registry}/api/v1/docs`, { headers: readonly })).status, 200);
  const admin = { 'X-Idp-Username': 'boss', 'X-Idp-Groups': 'registry-admin' };
  const me = await http(`${s.registry}/api/v1/auth/me`, { headers: admin });
  const writer = { ...admin, cookie: `registry_csrf=${me.body.csrf_token}`, 'x-csrf-token': me.body.csrf_token };
  const minted = await http(`${s.registry}/api/v1/admin/tokens`, {
    headers: writer,
    json: { name: 'docs', scopes: ['deployments:read'] },
  });
  assert.is(minted.status, 201);
  assert.is(
    (await http(`${s.registry}${DOC_PATH.registry}`, { headers: { authorization: `Bearer ${minted.body.token}` } }))
      .status,
    200,
  );
});

test('the reference page is served from this server, with the document inlined', async ({ s }) => {
  const key = { 'X-API-Key': ADMIN_KEY };
  const page = await http(`${s.orch}/api/v1/docs`, { headers: key });
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(page.text, /<script src="\/api\/v1\/docs\/swagger-ui-bundle\.js">/);
  assert.match(page.text, /"\/api\/v1\/admin\/users"/);
  assert.not.match(page.text, /https?:\/\/(cdn|unpkg)/);
  const js = await http(`${s.orch}/api/v1/docs/swagger-ui-bundle.js`, { headers: key });
  assert.is(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  assert.ok(js.text.length > 100_000);
  const css = await http(`${s.orch}/api/v1/docs/swagger-ui.css`, { headers: key });
  assert.match(css.headers.get('content-type') ?? '', /text\/css/);
});

test('orchard openapi prints the served document offline, for each service', async ({ s }) => {
  const served = (await http(`${s.orch}/api/v1/openapi.json`, { headers: { 'X-API-Key': ADMIN_KEY } }))
    .body as Document;
  const { stdout } = await run(process.execPath, [BIN, 'openapi', 'orch'], {
    env: { PATH: process.env.PATH },
    maxBuffer: 16 << 20,
  });
  const printed = JSON.parse(stdout) as Document;
  assert.equal(Object.keys(printed.paths).sort(), Object.keys(served.paths).sort());
  assert.equal(printed, served);
  for (const name of SERVICES)
    assert.ok(Object.keys((offlineDocument(name) as unknown as Document).paths).length >= 3, name);
  const wrong = await run(process.execPath, [BIN, 'openapi', 'nope']).then(
    () => null,
    (error) => error as { code: number; stderr: string },
  );
  assert.is(wrong?.code, 2);
  assert.match(wrong!.stderr, /usage: orchard openapi <orch\|chat\|registry>/);
});

test.run();
