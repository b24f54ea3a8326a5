// A route's policy where it is declared (api/shared/route-policy.ts): the body limit a route
// states is the one its requests meet (before anything the app does after it, principal
// resolution included), a streamed route's limit refuses only a declared length, a request no
// route takes meets the default, and the route's document carries its rules (`x-access`) and
// its actual limit. A probe app, no database.

import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createBaseApp } from '../../api/shared/base.ts';
import { ApiError } from '../../api/shared/http-errors.ts';
import { jsonBody } from '../../api/shared/openapi.ts';
import { anyone, bodyLimit, guard, policyOf } from '../../api/shared/route-policy.ts';
import { createLogger } from '../../infra/logging.ts';

const ProbeError = z.object({ error: z.string(), message: z.string() }).passthrough();

function probe(): OpenAPIHono {
  const app = createBaseApp({
    service: 'orch',
    errorSchema: ProbeError,
    log: createLogger({ level: 'error', sink: () => {} }),
    errorBody: ({ code, message, extra }) => ({ error: code, message, ...extra }),
  }) as unknown as OpenAPIHono;
  // App middleware after the body limit: a refusal here must not come before a 413.
  app.use('*', async (c, next) => {
    if (!c.req.header('x-signed-in')) throw new ApiError(401, 'unauthorized', 'who are you');
    await next();
  });
  const ok = { 200: { description: 'read' } };
  app.openapi(
    createRoute({
      method: 'post',
      path: '/small',
      middleware: [anyone(), bodyLimit(64)] as const,
      request: { body: jsonBody(z.object({ a: z.string() })) },
      responses: ok,
    }),
    (c) => c.json({ read: c.req.valid('json').a.length }, 200),
  );
  app.openapi(
    createRoute({
      method: 'post',
      path: '/streamed',
      middleware: [anyone(), bodyLimit(64, { streamed: true })] as const,
      responses: ok,
    }),
    async (c) => c.json({ read: (await c.req.text()).length }, 200),
  );
  const adminOnly = guard(
    { rule: 'admin', refusals: { 401: 'not signed in', 403: 'not the admin' } },
    async (_c, next) => next(),
  );
  app.openapi(
    createRoute({ method: 'patch', path: '/default', middleware: [adminOnly] as const, responses: ok }),
    async (c) => c.json({ read: (await c.req.text()).length }, 200),
  );
  return app;
}

const test = suite('route policy: declared on the route');
const MiB = 1024 * 1024;
const post = (app: OpenAPIHono, path: string, body: string, headers: Record<string, string> = {}, method = 'POST') =>
  app.request(path, {
    method,
    headers: { 'content-type': 'application/json', 'x-signed-in': 'yes', ...headers },
    body,
  });

test("a route's own limit is the one its requests meet, before the app's later middleware", async () => {
  const app = probe();
  const small = await post(app, '/small', JSON.stringify({ a: 'x'.repeat(100) }));
  assert.is(small.status, 413);
  assert.equal(await small.json(), {
    error: 'payload_too_large',
    message: "request body exceeds this route's limit of 64 bytes",
    limit_bytes: 64,
  });
  // No identity either: the 413 still comes first.
  const anonymous = await post(app, '/small', JSON.stringify({ a: 'x'.repeat(100) }), { 'x-signed-in': '' });
  assert.is(anonymous.status, 413);
  assert.is((await post(app, '/small', JSON.stringify({ a: 'fits' }))).status, 200);
});

test('a route without a limit of its own, and a request no route takes, meet the default (1 MiB)', async () => {
  const app = probe();
  const big = 'x'.repeat(MiB + 1);
  const patch = await post(app, '/default', big, {}, 'PATCH');
  assert.is(patch.status, 413);
  assert.is(((await patch.json()) as { limit_bytes: number }).limit_bytes, MiB);
  assert.is((await post(app, '/default', 'x'.repeat(1000), {}, 'PATCH')).status, 200);
  // /small takes POST only: a PATCH there is no route's, so the default limit, then 404.
  assert.is((await post(app, '/small', big, {}, 'PATCH')).status, 413);
  assert.is((await post(app, '/nowhere', 'x'.repeat(1000))).status, 404);
});

test("a streamed limit refuses a declared length over it; the body itself is the route's to count", async () => {
  const app = probe();
  const declared = await app.request('/streamed', {
    method: 'POST',
    headers: { 'content-length': '65', 'x-signed-in': 'yes' },
    body: 'x'.repeat(65),
  });
  assert.is(declared.status, 413);
  assert.is(((await declared.json()) as { limit_bytes: number }).limit_bytes, 64);
  // Chunked (no length): the route reads it (its reader counts; here it only reports what came).
  const stream = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode('x'.repeat(100)));
      c.close();
    },
  });
  const chunked = await app.request('/streamed', {
    method: 'POST',
    headers: { 'x-signed-in': 'yes' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  assert.is(chunked.status, 200);
  assert.equal(await chunked.json(), { read: 100 });
});

test("the document carries each route's rules, their refusals and its limit", () => {
  const doc = probe().getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'probe', version: '0' } }) as unknown as {
    paths: Record<
      string,
      Record<string, { 'x-access'?: string[]; responses: Record<string, { description: string }> }>
    >;
  };
  assert.equal(doc.paths['/small']!.post!['x-access'], ['anyone']);
  assert.match(doc.paths['/small']!.post!.responses['413']!.description, /limit of 64 bytes/);
  const patch = doc.paths['/default']!.patch!;
  assert.equal(patch['x-access'], ['admin']);
  assert.is(patch.responses['401']!.description, 'not signed in');
  assert.is(patch.responses['403']!.description, 'not the admin');
  assert.match(patch.responses['413']!.description, /limit of 1048576 bytes/);
});

test('a route states one body limit', () => {
  assert.throws(() => policyOf([bodyLimit(1), bodyLimit(2)], { maxBytes: 3 }), /one body limit/);
  assert.equal(policyOf([anyone()], { maxBytes: 3 }), { access: [{ rule: 'anyone' }], bodyLimit: { maxBytes: 3 } });
});

test.run();
