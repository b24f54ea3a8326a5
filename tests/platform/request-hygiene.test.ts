// What every route family does with bad requests, kept as routes multiply: bodies over the
// family's limit get 413 in the service's error body (before the body is read, or as soon as the
// limit is passed), malformed JSON and wrong types get 400, NUL bytes never reach the database,
// and 429s carry Retry-After. In-process through `app.request()`; the oversized upload and
// oversized headers need a real socket (request-hygiene-socket.test.ts).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { http, startTestApps, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_hygiene-admin-key-00000000000000000';
const KiB = 1024;
const MiB = 1024 * 1024;

const test = suite<{ s: TestServices; events: () => Promise<number> }>('request hygiene per route family');
test.before(async (ctx) => {
  ctx.s = await startTestApps('hygiene', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.events = async () => Number((await ctx.s.db.pool.query('SELECT count(*) FROM events')).rows[0].count);
});
test.after(async ({ s }) => s?.close());

const json = (size: number) =>
  JSON.stringify({ email: 'a@example.test', password: 'not the password', pad: 'x'.repeat(size) });
const key = { 'X-API-Key': ADMIN_KEY, 'content-type': 'application/json' };

test("413 per family: /auth/* above 16 KiB, /api/* above 1 MiB, in each service's error body; nothing written", async ({
  s,
  events,
}) => {
  const before = await events();
  const auth = await http(`${s.orch}/auth/login`, {
    headers: { 'content-type': 'application/json' },
    body: json(17 * KiB),
  });
  assert.is(auth.status, 413);
  assert.equal(auth.body, {
    error: 'payload_too_large',
    message: "request body exceeds this route's limit of 16384 bytes",
    limit_bytes: 16384,
  });
  const api = await http(`${s.orch}/api/v1/admin/users`, {
    headers: key,
    body: JSON.stringify({ username: 'big', email: 'big@example.test', role: 'user', password: 'p'.repeat(MiB) }),
  });
  assert.is(api.status, 413);
  assert.is(api.body.error, 'payload_too_large');
  assert.is((await http(`${s.orch}/api/admin/users`, { headers: key, body: 'x'.repeat(MiB + 1) })).status, 413);
  const chat = await http(`${s.chat}/api/health`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'x'.repeat(MiB + 1),
  });
  assert.is(chat.status, 413);
  assert.type(chat.body.error, 'string');
  const registry = await http(`${s.registry}/health`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'x'.repeat(MiB + 1),
  });
  assert.is(registry.status, 413);
  assert.is(registry.body.error.code, 'payload_too_large');
  assert.is(registry.body.error.limit_bytes, MiB);
  assert.is(await events(), before);
  // Under the family's limit, the same route reads the body (and refuses the credentials).
  assert.is(
    (await http(`${s.orch}/auth/login`, { headers: { 'content-type': 'application/json' }, body: json(8 * KiB) }))
      .status,
    401,
  );
});

test('malformed JSON and wrong types: 400 with a readable message, per family', async ({ s, events }) => {
  const before = await events();
  for (const [url, headers] of [
    [`${s.orch}/auth/login`, { 'content-type': 'application/json' }],
    [`${s.orch}/api/v1/admin/users`, key],
  ] as const) {
    const malformed = await http(url, { headers, body: '{"email": ' });
    assert.is(malformed.status, 400, url);
    assert.is(malformed.body.error, 'invalid_json');
    const wrong = await http(url, { headers, json: { email: 42, password: ['x'], username: {}, role: 7 } });
    assert.is(wrong.status, 400, url);
    assert.is(wrong.body.error, 'validation_failed');
    assert.match(wrong.body.message, /email/);
  }
  const patch = await http(`${s.orch}/api/v1/admin/users/00000000-0000-4000-8000-000000000001`, {
    method: 'PATCH',
    headers: key,
    json: { role: 'emperor' },
  });
  assert.is(patch.status, 400);
  assert.is(await events(), before);
});

test('a JSON body needs a JSON media type (415), and a required body must be there (400)', async ({ s }) => {
  const text = await http(`${s.orch}/auth/login`, { headers: { 'content-type': 'text/plain' }, body: json(10) });
  assert.is(text.status, 415);
  assert.is(text.body.error, 'unsupported_media_type');
  const none = await http(`${s.orch}/auth/login`, { method: 'POST' });
  assert.is(none.status, 400);
});

test('NUL bytes and lone surrogates in any field are refused or harmless, never a 500', async ({ s, events }) => {
  const before = await events();
  const nul = 'a\u0000b';
  const login = await http(`${s.orch}/auth/login`, { json: { email: `x${nul}@example.test`, password: nul } });
  assert.is(login.status, 400);
  assert.equal(login.body, {
    error: 'validation_failed',
    message: 'strings must not contain NUL (\\u0000) characters',
  });
  const create = await http(`${s.orch}/api/v1/admin/users`, {
    headers: key,
    json: { username: `u${nul}`, email: `u${nul}@example.test`, role: 'user' },
  });
  assert.is(create.status, 400);
  const pw = await http(`${s.orch}/api/v1/admin/users`, {
    headers: key,
    json: { username: 'nul-pw', email: 'nulpw@example.test', role: 'user', password: `twelve-chars${nul}` },
  });
  assert.ok([201, 400].includes(pw.status), String(pw.status));
  if (pw.status === 400) assert.is(await events(), before);
  // A lone surrogate (legal JSON text, no Unicode character; jsonb refuses it) likewise, in every
  // service, in a value or a key; an escaped pair (an emoji) is an ordinary string.
  const beforeLone = await events();
  const lone = await http(`${s.orch}/api/v1/admin/users`, {
    headers: key,
    body: '{"username":"lone","email":"lone@example.test","role":"user","x":{"\\udc00":1}}',
  });
  assert.is(lone.status, 400);
  assert.equal(lone.body, {
    error: 'validation_failed',
    message: 'strings must be well-formed Unicode (no lone surrogates such as \\ud800)',
  });
  const registry = await http(`${s.registry}/api/v1/leads`, {
    headers: { 'content-type': 'application/json' },
    body: '{"name":"\\ud800x","email":"lead@example.test"}',
  });
  assert.is(registry.status, 422);
  assert.is(registry.body.error.code, 'validation_failed');
  assert.is(
    (
      await http(`${s.chat}/api/auth/login`, {
        headers: { 'content-type': 'application/json' },
        body: '{"username":"x\\ud800","password":"p"}',
      })
    ).status,
    400,
  );
  assert.is(await events(), beforeLone);
  assert.is(
    (
      await http(`${s.orch}/auth/login`, {
        headers: { 'content-type': 'application/json' },
        body: '{"email":"\\ud83d\\ude00@example.test","password":"p"}',
      })
    ).status,
    401,
  );
  // An escaped backslash before "u0000" is an ordinary string.
  assert.is(
    (
      await http(`${s.orch}/auth/login`, {
        headers: { 'content-type': 'application/json' },
        body: '{"email":"x\\\\u0000@example.test","password":"p"}',
      })
    ).status,
    401,
  );
});

test.run();
