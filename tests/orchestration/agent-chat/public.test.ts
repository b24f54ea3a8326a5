// Public chat, rules 1-8, on the offline local model: which profiles answer, validation, the
// visitor token and conversation rules, expiry, the per-client limit and its key, the
// per-profile limits, and CORS.

import { createHash } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';
import { auditEntries, freshPeer, makeProfile, publicChat } from './helpers.ts';

const ADMIN_KEY = 'orch_public-chat-admin-key-000000000000';
const RPM = 5;

const test = suite<{ s: TestServices; proxied: TestServices; plain: TestServices }>('public chat');

test.before(async (ctx) => {
  ctx.s = await startTestApps('public_chat', { ADMIN_API_KEY: ADMIN_KEY, ORCH_PUBLIC_CHAT_RPM: String(RPM) });
  const s = ctx.s;
  await makeProfile(s, ADMIN_KEY, {
    slug: 'front',
    security_tier: 1,
    system_prompt: 'You are the front desk of Acme.',
  });
  await makeProfile(s, ADMIN_KEY, { slug: 'other-front', security_tier: 1 });
  await makeProfile(s, ADMIN_KEY, { slug: 'semi', security_tier: 2 });
  await makeProfile(s, ADMIN_KEY, { slug: 'internal', security_tier: 3 });
  await makeProfile(s, ADMIN_KEY, { slug: 'off', security_tier: 1, enabled: false });
  await makeProfile(s, ADMIN_KEY, { slug: 'short-lived', security_tier: 1, conversation_ttl_hours: 1 });
  await makeProfile(s, ADMIN_KEY, { slug: 'strict', security_tier: 1, rate_limit_rpm: 2 });
});

test.after(async (ctx) => {
  await ctx.proxied?.close();
  await ctx.plain?.close();
  await ctx.s?.close();
});

test('rule 1: only an enabled tier-1 profile answers; unknown, disabled and tier 2-3 get the same 404', async ({
  s,
}) => {
  const ok = await publicChat(s, 'front', { message: 'Hello there' }, { peer: freshPeer() });
  assert.is(ok.status, 200, ok.text);
  assert.match(ok.body.message, /Bot front here/);
  assert.equal(Object.keys(ok.body).sort(), ['conversation_id', 'cost_cents', 'message', 'tokens', 'visitor_token']);
  assert.equal(Object.keys(ok.body.tokens).sort(), ['cache_read', 'input', 'output']);
  assert.is(ok.body.cost_cents, 0);
  const answers = [];
  for (const slug of ['nope', 'semi', 'internal', 'off', 'personal-assistant', 'Bad%20Slug']) {
    const r = await publicChat(s, slug, { message: 'Hello' }, { peer: freshPeer() });
    assert.is(r.status, 404, `${slug}: ${r.text}`);
    answers.push(r.text);
  }
  assert.is(new Set(answers).size, 1, 'every refusal is the same answer');
  assert.equal(JSON.parse(answers[0]!), { error: 'profile_not_found', message: 'no such profile' });
});

test('validation: missing or empty message, a visitor token over 128 bytes, a malformed conversation id; the length cap', async ({
  s,
}) => {
  const peer = freshPeer();
  for (const body of [
    {},
    { message: '' },
    { message: '   ' },
    { message: 42 },
    { message: 'hi', conversation_id: 'not-a-uuid' },
    { message: 'hi', visitor_token: 'é'.repeat(65) },
  ]) {
    const r = await publicChat(s, 'front', body, { peer });
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(r.body.error, 'validation_failed');
  }
  assert.is((await publicChat(s, 'front', { message: 'hi', visitor_token: 'x'.repeat(128) }, { peer })).status, 200);
  const long = await publicChat(s, 'front', { message: 'ü'.repeat(4001) }, { peer: freshPeer() });
  assert.is(long.status, 400);
  assert.is(long.body.error, 'message_too_long');
  assert.is(
    (await publicChat(s, 'front', { message: '😀'.repeat(4000) }, { peer: freshPeer() })).status,
    200,
    'the cap counts characters',
  );
  assert.is(
    (await publicChat(s, 'front', { message: 'hi', conversation_id: null }, { peer: freshPeer() })).status,
    200,
  );
});

test('rules 3-5: a token continues the conversation (no new token); no token always starts anew; visitor_id is ignored', async ({
  s,
}) => {
  const peer = freshPeer();
  const first = await publicChat(s, 'front', { message: 'one', visitor_id: 'ignored' }, { peer });
  const token = first.body.visitor_token as string;
  assert.match(token, /^[A-Za-z0-9_-]{43,}$/, 'at least 32 random bytes, base64url');
  const second = await publicChat(
    s,
    'front',
    { message: 'two', conversation_id: first.body.conversation_id, visitor_token: token },
    { peer },
  );
  assert.is(second.status, 200);
  assert.is(second.body.conversation_id, first.body.conversation_id);
  assert.is(second.body.visitor_token, undefined);
  // No token: a new conversation and a new token, whatever conversation_id says.
  const fresh = await publicChat(
    s,
    'front',
    { message: 'three', conversation_id: first.body.conversation_id },
    { peer },
  );
  assert.is.not(fresh.body.conversation_id, first.body.conversation_id);
  assert.type(fresh.body.visitor_token, 'string');
  assert.is.not(fresh.body.visitor_token, token);
  // An empty token counts as none.
  const empty = await publicChat(
    s,
    'front',
    { message: 'four', conversation_id: first.body.conversation_id, visitor_token: '' },
    { peer },
  );
  assert.is.not(empty.body.conversation_id, first.body.conversation_id);
  assert.type(empty.body.visitor_token, 'string');
  // Another visitor's conversation is silently ignored: a new one, and no token (one was sent).
  const intruder = await publicChat(
    s,
    'front',
    { message: 'five', conversation_id: first.body.conversation_id, visitor_token: fresh.body.visitor_token },
    { peer },
  );
  assert.is(intruder.status, 200);
  assert.is.not(intruder.body.conversation_id, first.body.conversation_id);
  assert.is(intruder.body.visitor_token, undefined);
  // Another profile's conversation (same visitor): ignored too.
  const elsewhere = await publicChat(
    s,
    'other-front',
    { message: 'six', conversation_id: first.body.conversation_id, visitor_token: token },
    { peer },
  );
  assert.is.not(elsewhere.body.conversation_id, first.body.conversation_id);
  // The first conversation holds its two turns only.
  const messages = await http(`${s.orch}/api/v1/agent-chat/conversations/${first.body.conversation_id}/messages`, {
    headers: { 'X-API-Key': ADMIN_KEY },
  });
  assert.equal(
    messages.body.map((m: { role: string; content: string }) => `${m.role}:${m.role === 'user' ? m.content : ''}`),
    ['user:one', 'assistant:', 'user:two', 'assistant:'],
  );
  // Only the token's SHA-256 is stored; the token itself is nowhere in the log, the read models or the log lines.
  const { rows } = await s.db.pool.query('SELECT owner_id FROM agent_chat_conversations WHERE id = $1', [
    first.body.conversation_id,
  ]);
  assert.is(rows[0].owner_id, createHash('sha256').update(token).digest('hex'));
  const dump = JSON.stringify((await s.db.pool.query('SELECT * FROM agent_chat_conversations')).rows);
  assert.not.ok(
    (await logText(s)).includes(token) || dump.includes(token) || s.logLines.join('\n').includes(token),
    'the visitor token leaked',
  );
});

test('conversation expiry: past the TTL a turn naming it starts a new one (same visitor, no new token); old messages remain', async ({
  s,
}) => {
  const peer = freshPeer();
  const first = await publicChat(s, 'short-lived', { message: 'before' }, { peer });
  const token = first.body.visitor_token;
  s.clock.advance(61 * 60_000);
  const later = await publicChat(
    s,
    'short-lived',
    { message: 'after', conversation_id: first.body.conversation_id, visitor_token: token },
    { peer },
  );
  assert.is(later.status, 200);
  assert.is.not(later.body.conversation_id, first.body.conversation_id);
  assert.is(later.body.visitor_token, undefined);
  const { rows } = await s.db.pool.query('SELECT owner_id, follows FROM agent_chat_conversations WHERE id = $1', [
    later.body.conversation_id,
  ]);
  assert.is(rows[0].owner_id, createHash('sha256').update(token).digest('hex'));
  assert.is(rows[0].follows, first.body.conversation_id);
  const old = await http(`${s.orch}/api/v1/agent-chat/conversations/${first.body.conversation_id}/messages`, {
    headers: { 'X-API-Key': ADMIN_KEY },
  });
  assert.is(old.body.length, 2);
  // The new conversation continues normally.
  const next = await publicChat(
    s,
    'short-lived',
    { message: 'again', conversation_id: later.body.conversation_id, visitor_token: token },
    { peer },
  );
  assert.is(next.body.conversation_id, later.body.conversation_id);
});

test('rule 6: the per-client limit counts the peer; 429 with Retry-After and retry_after; one audit entry a minute', async ({
  s,
}) => {
  const peer = freshPeer();
  for (let i = 0; i < RPM; i++) assert.is((await publicChat(s, 'front', { message: `m${i}` }, { peer })).status, 200);
  const limited = await publicChat(s, 'front', { message: 'over' }, { peer });
  assert.is(limited.status, 429);
  assert.equal(Object.keys(limited.body).sort(), ['error', 'message', 'retry_after']);
  assert.is(limited.body.error, 'rate_limited');
  assert.ok(limited.body.retry_after >= 1 && limited.body.retry_after <= 60);
  assert.is(limited.headers.get('retry-after'), String(limited.body.retry_after));
  // The limit comes first: even an unknown profile or an invalid message body counts as this client's.
  assert.is((await publicChat(s, 'nope', { message: 'x' }, { peer })).status, 429);
  assert.is((await publicChat(s, 'front', { message: 'x'.repeat(5000) }, { peer })).status, 429);
  // Another client is not affected.
  assert.is((await publicChat(s, 'front', { message: 'hi' }, { peer: freshPeer() })).status, 200);
  const hits = (await auditEntries(s, ADMIN_KEY)).filter(
    (e) => e.event_type === 'rate_limit_hit' && e.detail.client === peer,
  );
  assert.is(hits.length, 1, 'a flood is coalesced to one entry per minute');
  assert.is(hits[0].severity, 'info');
  assert.is(hits[0].detail.limit, 'client_rpm');
  assert.is(hits[0].profile_slug, null);
  s.clock.advance(61_000);
  assert.is((await publicChat(s, 'front', { message: 'back' }, { peer })).status, 200);
});

test('rule 6: IPv6 callers count by /64; IPv4-mapped IPv6 counts as the IPv4 address', async ({ s }) => {
  for (let i = 0; i < RPM; i++) {
    assert.is(
      (await publicChat(s, 'front', { message: 'v6' }, { peer: `2001:db8:77:1::${(i + 1).toString(16)}` })).status,
      200,
    );
  }
  assert.is(
    (await publicChat(s, 'front', { message: 'v6' }, { peer: '2001:db8:77:1:ffff:ffff:ffff:ffff' })).status,
    429,
    'same /64',
  );
  assert.is((await publicChat(s, 'front', { message: 'v6' }, { peer: '2001:db8:77:2::1' })).status, 200, 'another /64');
  for (let i = 0; i < RPM; i++)
    assert.is(
      (await publicChat(s, 'front', { message: 'v4' }, { peer: i % 2 ? '198.51.100.77' : '::ffff:198.51.100.77' }))
        .status,
      200,
    );
  assert.is((await publicChat(s, 'front', { message: 'v4' }, { peer: '::ffff:198.51.100.77' })).status, 429);
  assert.is((await publicChat(s, 'front', { message: 'v4' }, { peer: '198.51.100.77' })).status, 429);
});

test('rule 7 unset: forwarding headers are ignored', async ({ s }) => {
  const peer = freshPeer();
  for (let i = 0; i < RPM; i++) {
    assert.is(
      (
        await publicChat(
          s,
          'front',
          { message: 'x' },
          { peer, headers: { 'x-forwarded-for': `203.0.113.${i}`, 'x-real-ip': `203.0.114.${i}` } },
        )
      ).status,
      200,
    );
  }
  assert.is(
    (await publicChat(s, 'front', { message: 'x' }, { peer, headers: { 'x-forwarded-for': '203.0.113.99' } })).status,
    429,
  );
});

test('per-profile rate_limit_rpm counts per (profile, caller); the hit is audited with the profile', async ({ s }) => {
  const peer = freshPeer();
  assert.is((await publicChat(s, 'strict', { message: 'a' }, { peer })).status, 200);
  assert.is((await publicChat(s, 'strict', { message: 'b' }, { peer })).status, 200);
  const third = await publicChat(s, 'strict', { message: 'c' }, { peer });
  assert.is(third.status, 429);
  assert.is(third.body.error, 'rate_limited');
  assert.is(
    (await publicChat(s, 'strict', { message: 'd' }, { peer: freshPeer() })).status,
    200,
    'another caller has its own count',
  );
  assert.is(
    (await publicChat(s, 'front', { message: 'e' }, { peer })).status,
    200,
    'another profile has its own count',
  );
  const hit = (await auditEntries(s, ADMIN_KEY)).find(
    (e) => e.event_type === 'rate_limit_hit' && e.detail.client === peer,
  );
  assert.is(hit.profile_slug, 'strict');
  assert.is(hit.detail.limit, 'profile_rpm');
});

test('rule 7: X-Forwarded-For hops 2 reads the second entry from the right; x-real-ip; hops 0 is one bucket', async (ctx) => {
  ctx.proxied = await startTestApps('public_chat_proxied', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_PUBLIC_CHAT_RPM: '2',
    ORCH_TRUSTED_PROXY_HEADER: 'x-forwarded-for',
    ORCH_TRUSTED_PROXY_HOPS: '2',
    ORCH_CORS_ALLOWED_ORIGINS: 'https://www.example.com, https://shop.example.com',
  });
  const p = ctx.proxied;
  await makeProfile(p, ADMIN_KEY, { slug: 'front', security_tier: 1 });
  const via = (xff: string, peer = '10.0.0.1') =>
    publicChat(p, 'front', { message: 'x' }, { peer, headers: { 'x-forwarded-for': xff } });
  assert.is((await via('6.6.6.6, 192.0.2.10, 10.0.0.2')).status, 200);
  assert.is((await via('7.7.7.7, 192.0.2.10, 10.0.0.3', '10.0.0.9')).status, 200, 'same client behind other proxies');
  assert.is((await via('8.8.8.8, 192.0.2.10, 10.0.0.2')).status, 429, 'the client is the second entry from the right');
  assert.is((await via('192.0.2.11, 10.0.0.2')).status, 200);
  // A non-address among the entries read: the peer counts.
  assert.is((await via('unknown, 10.0.0.2', '10.9.9.9')).status, 200);
  assert.is((await via('192.0.2.12, not-an-ip', '10.9.9.9')).status, 200);
  assert.is((await via('192.0.2.13, nope', '10.9.9.9')).status, 429);
});

test('rule 8: CORS only on the public chat route, for listed origins, with the preflight', async ({ proxied: p }) => {
  const preflight = await http(`${p.orch}/api/v1/public/agents/chat/front`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://shop.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    },
  });
  assert.is(preflight.status, 204);
  assert.is(preflight.headers.get('access-control-allow-origin'), 'https://shop.example.com');
  assert.is(preflight.headers.get('access-control-allow-methods'), 'POST,OPTIONS');
  assert.is(preflight.headers.get('access-control-allow-headers'), 'content-type');
  const post = await publicChat(
    p,
    'front',
    { message: 'cors' },
    { peer: '10.7.7.7', headers: { origin: 'https://www.example.com', 'x-forwarded-for': '192.0.2.50, 10.0.0.1' } },
  );
  assert.is(post.status, 200);
  assert.is(post.headers.get('access-control-allow-origin'), 'https://www.example.com');
  const stranger = await http(`${p.orch}/api/v1/public/agents/chat/front`, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
  });
  assert.is(stranger.headers.get('access-control-allow-origin'), null);
  const elsewhere = await http(`${p.orch}/api/v1/health`, { headers: { origin: 'https://www.example.com' } });
  assert.is(elsewhere.headers.get('access-control-allow-origin'), null, 'no CORS beyond the public chat route');
});

test('rule 8 unset: no CORS layer; rule 7 x-real-ip and hops 0', async (ctx) => {
  assert.is(
    (
      await http(`${ctx.s.orch}/api/v1/public/agents/chat/front`, {
        method: 'OPTIONS',
        headers: { origin: 'https://www.example.com', 'access-control-request-method': 'POST' },
      })
    ).status,
    404,
  );
  ctx.plain = await startTestApps('public_chat_real_ip', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_PUBLIC_CHAT_RPM: '1',
    ORCH_TRUSTED_PROXY_HEADER: 'x-real-ip',
  });
  await makeProfile(ctx.plain, ADMIN_KEY, { slug: 'front', security_tier: 1 });
  const p = ctx.plain;
  assert.is(
    (await publicChat(p, 'front', { message: 'x' }, { peer: '10.0.0.1', headers: { 'x-real-ip': '192.0.2.1' } }))
      .status,
    200,
  );
  assert.is(
    (await publicChat(p, 'front', { message: 'x' }, { peer: '10.0.0.2', headers: { 'x-real-ip': '192.0.2.1' } }))
      .status,
    429,
  );
  assert.is(
    (
      await publicChat(
        p,
        'front',
        { message: 'x' },
        { peer: '10.0.0.2', headers: { 'x-real-ip': '192.0.2.2', 'x-forwarded-for': '192.0.2.1' } },
      )
    ).status,
    200,
  );
  await p.restart({ ORCH_TRUSTED_PROXY_HEADER: 'x-forwarded-for', ORCH_TRUSTED_PROXY_HOPS: '0' });
  assert.is(
    (await publicChat(p, 'front', { message: 'x' }, { peer: '10.1.0.1', headers: { 'x-forwarded-for': '192.0.2.31' } }))
      .status,
    200,
  );
  assert.is(
    (await publicChat(p, 'front', { message: 'x' }, { peer: '10.1.0.2', headers: { 'x-forwarded-for': '192.0.2.32' } }))
      .status,
    429,
    'hops 0: one shared bucket',
  );
});

test.run();
