// The connector's routes in-process: the gates (401, 403, then 503 integration_key_missing),
// validation (insecure_instance_url, the provision token's shape, strict bodies), 404
// profile_not_found / not_configured / unknown_tool, tool_name_mismatch, a connect or a
// communities call that cannot reach the chat service (502 chatsvc_mint_bot_failed, nothing
// stored), the admin mirror (browser session only), the configuration refusals, and health.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../infra/config.ts';
import { startAgentApps } from '../../support/agents.ts';
import { browser, createAccount, login, type Account } from '../../support/principals.ts';
import { http, logText, type TestServices } from '../../support/services.ts';

const KEY = 'b2'.repeat(32);
const TOKEN = `cb_${'ab'.repeat(32)}`;
interface Ctx {
  s: TestServices;
  admin: Record<string, string>;
  adminKey: string;
  user: Account;
  profile: string;
}
const test = suite<Ctx>('chatsvc: routes');

test.before(async (ctx) => {
  const { s, keys } = await startAgentApps('chatsvc_routes', { ORCH_INTEGRATION_ENCRYPTION_KEY: KEY });
  ctx.s = s;
  ctx.adminKey = keys.adminKey;
  ctx.admin = { 'X-API-Key': keys.adminKey };
  ctx.user = await createAccount(s, keys.adminKey, 'user');
  const r = await http(`${s.orch}/api/v1/agent-chat/profiles`, {
    headers: ctx.admin,
    json: { slug: 'connector-bot', name: 'Connector Bot' },
  });
  assert.is(r.status, 201, r.text);
  ctx.profile = r.body.id;
});
test.after(async ({ s }) => s?.close());

const base = (s: TestServices, profile: string, form: 'v1' | 'admin' = 'v1') =>
  `${s.orch}/api/${form === 'v1' ? 'v1' : 'admin'}/agents/${profile}/chatsvc`;
const connectBody = (extra: Record<string, unknown> = {}) => ({
  instance_url: 'http://127.0.0.1:1',
  provision_token: TOKEN,
  bot_username: 'orch_bot',
  display_name: 'Orch Bot',
  ...extra,
});

function routes(s: TestServices, profile: string, form: 'v1' | 'admin' = 'v1'): [string, string, unknown?][] {
  const b = base(s, profile, form);
  return [
    ['POST', `${b}/connect`, connectBody()],
    ['POST', `${b}/communities`, { instance_url: 'http://127.0.0.1:1', provision_token: TOKEN }],
    ['POST', `${b}/test`],
    ['GET', b],
    ['DELETE', b],
    [
      'POST',
      `${b}/tools/send_message`,
      { tool: 'send_message', channel_id: '00000000-0000-4000-8000-000000000000', content: 'hi' },
    ],
  ];
}

const errorOf = (r: { status: number; body: any; text: string }, status: number, code: string) => {
  assert.is(r.status, status, r.text);
  assert.is(r.body?.error, code, r.text);
};

test('every route: anonymous 401 and a non-admin 403 come first', async ({ s, user, profile }) => {
  for (const [method, url, json] of routes(s, profile)) {
    errorOf(await http(url, { method, ...(json ? { json } : {}) }), 401, 'unauthorized');
    const r = await http(url, { method, headers: { 'X-API-Key': user.apiKey }, ...(json ? { json } : {}) });
    assert.is(r.status, 403, `${method} ${url}: ${r.text}`);
    assert.is(r.body.message, 'admin role required');
  }
});

test('unknown profile: 404 profile_not_found; no integration: 404 not_configured', async ({ s, admin, profile }) => {
  const unknown = '3f1e7a52-0000-4000-8000-000000000001';
  for (const [method, url, json] of routes(s, unknown))
    errorOf(
      await http(url, {
        method,
        headers: admin,
        ...(json
          ? {
              json:
                method === 'POST' && url.endsWith('/connect')
                  ? connectBody({ instance_url: 'https://chat.example.test' })
                  : json,
            }
          : {}),
      }),
      404,
      'profile_not_found',
    );
  errorOf(await http(base(s, profile), { headers: admin }), 404, 'not_configured');
  errorOf(await http(base(s, profile), { method: 'DELETE', headers: admin }), 404, 'not_configured');
  errorOf(await http(`${base(s, profile)}/test`, { method: 'POST', headers: admin }), 404, 'not_configured');
  errorOf(
    await http(`${base(s, profile)}/tools/send_message`, {
      headers: admin,
      json: { tool: 'send_message', channel_id: '00000000-0000-4000-8000-000000000000', content: 'hi' },
    }),
    404,
    'not_configured',
  );
});

test('tools: unknown_tool 404, tool_name_mismatch 400, inputs validated', async ({ s, admin, profile }) => {
  errorOf(
    await http(`${base(s, profile)}/tools/delete_everything`, { headers: admin, json: { tool: 'delete_everything' } }),
    404,
    'unknown_tool',
  );
  errorOf(
    await http(`${base(s, profile)}/tools/send_message`, {
      headers: admin,
      json: { tool: 'create_channel', channel_id: '00000000-0000-4000-8000-000000000000', content: 'x' },
    }),
    400,
    'tool_name_mismatch',
  );
  errorOf(
    await http(`${base(s, profile)}/tools/send_message`, {
      headers: admin,
      json: { channel_id: '00000000-0000-4000-8000-000000000000', content: 'x' },
    }),
    400,
    'tool_name_mismatch',
  );
  errorOf(
    await http(`${base(s, profile)}/tools/send_message`, {
      headers: admin,
      json: { tool: 'send_message', channel_id: 'nope', content: 'x' },
    }),
    400,
    'validation_failed',
  );
  errorOf(
    await http(`${base(s, profile)}/tools/send_message`, {
      headers: admin,
      json: { tool: 'send_message', channel_id: '00000000-0000-4000-8000-000000000000', content: '' },
    }),
    400,
    'validation_failed',
  );
  errorOf(
    await http(`${base(s, profile)}/tools/create_channel`, {
      headers: admin,
      json: { tool: 'create_channel', group_id: '00000000-0000-4000-8000-000000000000', name: 'x', extra: 1 },
    }),
    400,
    'validation_failed',
  );
  errorOf(
    await http(`${base(s, profile)}/tools/invite_member`, {
      headers: admin,
      json: { tool: 'invite_member', community_id: '00000000-0000-4000-8000-000000000000', email: 'not-mail' },
    }),
    400,
    'validation_failed',
  );
});

test('connect validation: insecure_instance_url, the token shape (never echoed), strict body, ranges', async ({
  s,
  admin,
  profile,
}) => {
  const url = `${base(s, profile)}/connect`;
  errorOf(
    await http(url, { headers: admin, json: connectBody({ instance_url: 'http://chat.example.test' }) }),
    400,
    'insecure_instance_url',
  );
  const badToken = `cb_${'ZZ'.repeat(32)}`;
  const r = await http(url, { headers: admin, json: connectBody({ provision_token: badToken }) });
  errorOf(r, 400, 'validation_failed');
  assert.not.ok(r.text.includes(badToken), 'the token is not echoed');
  errorOf(await http(url, { headers: admin, json: connectBody({ surprise: true }) }), 400, 'validation_failed');
  errorOf(
    await http(url, { headers: admin, json: connectBody({ bot_username: 'no spaces' }) }),
    400,
    'validation_failed',
  );
  errorOf(await http(url, { headers: admin, json: connectBody({ display_name: '' }) }), 400, 'validation_failed');
  errorOf(await http(url, { headers: admin, json: connectBody({ expires_in_hours: 0 }) }), 400, 'validation_failed');
  errorOf(
    await http(url, { headers: admin, json: connectBody({ expires_in_hours: 87_601 }) }),
    400,
    'validation_failed',
  );
  errorOf(
    await http(url, { headers: admin, json: connectBody({ default_community_role: 'admin' }) }),
    400,
    'validation_failed',
  );
});

test('an unreachable chat service: 502 chatsvc_mint_bot_failed with detail and chatsvc_status, nothing stored, token nowhere', async ({
  s,
  admin,
  profile,
}) => {
  const before = Number((await s.db.pool.query('SELECT count(*) FROM events')).rows[0].count);
  const r = await http(`${base(s, profile)}/connect`, { headers: admin, json: connectBody() });
  errorOf(r, 502, 'chatsvc_mint_bot_failed');
  assert.match(r.body.detail, /unreachable/);
  assert.is(r.body.chatsvc_status, null);
  const c = await http(`${base(s, profile)}/communities`, {
    headers: admin,
    json: { instance_url: 'http://127.0.0.1:1', provision_token: TOKEN },
  });
  errorOf(c, 502, 'chatsvc_mint_bot_failed');
  assert.is(Number((await s.db.pool.query('SELECT count(*) FROM events')).rows[0].count), before, 'nothing appended');
  assert.is(Number((await s.db.pool.query('SELECT count(*) FROM chatsvc_devices')).rows[0].count), 0);
  assert.not.ok((await logText(s)).includes(TOKEN));
  assert.not.ok(s.logLines.join('\n').includes(TOKEN));
});

test("the admin mirror answers an admin's browser session only (CSRF-checked)", async ({
  s,
  admin,
  adminKey,
  profile,
}) => {
  const url = base(s, profile, 'admin');
  errorOf(await http(url, { headers: admin }), 403, 'session_required');
  const adminAccount = await http(`${s.orch}/api/v1/me`, { headers: admin });
  assert.is(adminAccount.status, 200, adminAccount.text);
  const other = await createAccount(s, adminKey, 'admin');
  const session = await login(s, other);
  errorOf(await http(url, { headers: browser(s, session) }), 404, 'not_configured');
  const write = await http(`${url}/test`, { method: 'POST', headers: { cookie: session.cookie } });
  assert.is(write.status, 403, write.text);
  errorOf(await http(`${url}/test`, { method: 'POST', headers: browser(s, session) }), 404, 'not_configured');
});

test('health: idle with the key and no integration', async ({ s }) => {
  const r = await http(`${s.orch}/api/v1/health`);
  assert.is(r.body.integrations.chatsvc_bot_ws.status, 'idle');
});

test('without the key: every route 503 integration_key_missing after 401/403; health disabled', async (ctx) => {
  await ctx.s.restart({ ORCH_INTEGRATION_ENCRYPTION_KEY: undefined });
  for (const form of ['v1'] as const) {
    for (const [method, url, json] of routes(ctx.s, ctx.profile, form)) {
      errorOf(await http(url, { method, ...(json ? { json } : {}) }), 401, 'unauthorized');
      assert.is(
        (await http(url, { method, headers: { 'X-API-Key': ctx.user.apiKey }, ...(json ? { json } : {}) })).status,
        403,
      );
      errorOf(
        await http(url, { method, headers: ctx.admin, ...(json ? { json } : {}) }),
        503,
        'integration_key_missing',
      );
    }
  }
  errorOf(
    await http(`${base(ctx.s, '3f1e7a52-0000-4000-8000-000000000001')}`, { headers: ctx.admin }),
    503,
    'integration_key_missing',
  );
  assert.is((await http(`${ctx.s.orch}/api/v1/health`)).body.integrations.chatsvc_bot_ws.status, 'disabled');
  await ctx.s.restart({ ORCH_INTEGRATION_ENCRYPTION_KEY: KEY });
});

test('configuration: a malformed key or an unreadable CA bundle stops the start', () => {
  assert.throws(
    () => loadConfig({ ORCH_INTEGRATION_ENCRYPTION_KEY: 'abc' }),
    /ORCH_INTEGRATION_ENCRYPTION_KEY: expected exactly 64 hex/,
  );
  assert.throws(() => loadConfig({ ORCH_INTEGRATION_ENCRYPTION_KEY: 'g'.repeat(64) }), /64 hex/);
  assert.throws(() => loadConfig({ ORCH_INTEGRATION_ENCRYPTION_KEY_FILE: '/nonexistent/key' }), /does not exist/);
  assert.throws(
    () => loadConfig({ ORCH_CHATSVC_CA_BUNDLE: '/nonexistent/ca.pem' }),
    /ORCH_CHATSVC_CA_BUNDLE: cannot be read/,
  );
  assert.is(loadConfig({ ORCH_INTEGRATION_ENCRYPTION_KEY: KEY }).chatsvc.integrationKeyHex, KEY);
  assert.is(loadConfig({}).chatsvc.catchupSecs, 600);
  assert.is(loadConfig({}).chatsvc.supervisorSecs, 300);
});

test.run();
