// The connector's pure rules: mentions (rule 2), reply modes, the connect request's URL check,
// the stable conversation id (rule 4), the reconnect backoff; and the integration decider.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { integrationDecider } from '../../../domain/orchestration/chatsvc/decider.ts';
import {
  backoffMs,
  botsHealth,
  conversationIdFor,
  instanceUrlProblem,
  mentions,
  shouldAnswer,
  uuidV5,
} from '../../../domain/orchestration/chatsvc/rules.ts';
import { DomainError } from '../../../domain/shared/decider.ts';

const test = suite('chatsvc: rules');

test('a mention is @<username> as a whole token, case-sensitive', () => {
  for (const text of [
    '@bot hi',
    'hi @bot',
    'hi @bot!',
    '(@bot)',
    '@bot, what?',
    'line\n@bot',
    '**@bot** bold',
    'ask @bot.',
    'two @x @bot',
  ]) {
    assert.ok(mentions(text, 'bot'), text);
  }
  for (const text of [
    '@Bot hi',
    '@bot_x hi',
    '@botty',
    'bob@bot',
    'mail bot@host',
    'x.@bot',
    '@@bot',
    'a_@bot',
    'bot',
    '@ bot',
    '',
  ]) {
    assert.not.ok(mentions(text, 'bot'), text);
  }
});

test('@everyone, @here, @channel never count, and name@host is not a mention', () => {
  for (const text of ['@everyone look', '@here now', '@channel all', 'bob@host', 'write to bot@example.com'])
    assert.not.ok(mentions(text, 'bot'), text);
  assert.not.ok(mentions('@everyone', 'everyone'));
  assert.not.ok(mentions('@here', 'here'));
  assert.not.ok(mentions('@channel', 'channel'));
  assert.ok(mentions('@everyone and @bot', 'bot'));
});

test('reply modes: dm_only answers DMs only; channel_mention mentions in channels only; both does both', () => {
  assert.ok(shouldAnswer('dm_only', 'dm', false));
  assert.not.ok(shouldAnswer('dm_only', 'channel', true));
  assert.not.ok(shouldAnswer('channel_mention', 'dm', false));
  assert.ok(shouldAnswer('channel_mention', 'channel', true));
  assert.not.ok(shouldAnswer('channel_mention', 'channel', false));
  assert.ok(shouldAnswer('both', 'dm', false));
  assert.ok(shouldAnswer('both', 'channel', true));
  assert.not.ok(shouldAnswer('both', 'channel', false));
});

test('instance_url: https anywhere, plain http only to loopback', () => {
  for (const ok of [
    'https://chat.example.com',
    'http://127.0.0.1:8600',
    'http://localhost:1',
    'http://[::1]:8600',
    'http://127.5.6.7',
  ])
    assert.is(instanceUrlProblem(ok), null, ok);
  for (const bad of ['http://chat.example.com', 'http://10.0.0.1', 'ftp://x', 'not a url', 'http://127.0.0.1.evil.com'])
    assert.ok(instanceUrlProblem(bad), bad);
});

test('conversation ids: UUIDv5, stable per (integration, channel, sender), distinct otherwise', () => {
  const a = conversationIdFor('i1', 'c1', 'u1');
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is(conversationIdFor('i1', 'c1', 'u1'), a);
  assert.is.not(conversationIdFor('i1', 'c1', 'u2'), a);
  assert.is.not(conversationIdFor('i1', 'c2', 'u1'), a);
  assert.is.not(conversationIdFor('i2', 'c1', 'u1'), a);
  // RFC 9562's example: the DNS namespace and "www.example.com".
  assert.is(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'), '2ed6657d-e927-568b-95e1-2665a8aea6a2');
});

test('reconnect backoff: jittered, between 1 and 60 seconds', () => {
  assert.is(
    backoffMs(0, () => 0),
    1000,
  );
  assert.is(
    backoffMs(20, () => 0.9999),
    59_994,
  );
  for (let n = 0; n < 30; n++) {
    const ms = backoffMs(n);
    assert.ok(ms >= 1000 && ms <= 60_000, String(ms));
  }
});

test('health of the bot sockets: idle, connected, degraded, disconnected, standby, with counts', () => {
  assert.equal(botsHealth([]), { status: 'idle', active: 0, connected: 0, down: 0, standby: 0 });
  assert.equal(botsHealth(['connected', 'connected']), {
    status: 'connected',
    active: 2,
    connected: 2,
    down: 0,
    standby: 0,
  });
  assert.equal(botsHealth(['connected', 'disconnected']), {
    status: 'degraded',
    active: 2,
    connected: 1,
    down: 1,
    standby: 0,
  });
  assert.equal(
    botsHealth(['connecting', 'standby']),
    { status: 'degraded', active: 2, connected: 0, down: 1, standby: 1 },
    'one down, one held elsewhere',
  );
  assert.equal(botsHealth(['disconnected', 'connecting']), {
    status: 'disconnected',
    active: 2,
    connected: 0,
    down: 2,
    standby: 0,
  });
  assert.equal(botsHealth(['standby', 'standby']), { status: 'standby', active: 2, connected: 0, down: 0, standby: 2 });
  assert.equal(botsHealth(['connected', 'standby']), {
    status: 'connected',
    active: 2,
    connected: 1,
    down: 0,
    standby: 1,
  });
});

const connect = (id: string, tokenPrefix = 'cb_00000000') => ({
  type: 'Connect' as const,
  data: {
    profile_id: 'p',
    integration_id: id,
    instance_url: 'http://127.0.0.1:1',
    bot_user_id: 'b',
    bot_username: 'bot',
    token_prefix: tokenPrefix,
    token_sealed: 'v1.x',
    token_expires_at: null,
    verify_tls: true,
    identity_fingerprint: 'f',
    default_community_id: null,
    at: '2025-01-01T00:00:00Z',
  },
});

test('the integration: connect, revoked once, connect again; a second connect while active is already_connected; delete', () => {
  const d = integrationDecider('p');
  const fold = (events: any[]) => events.reduce(d.evolve, d.initialState());
  const [connected] = d.decide(connect('i1'), d.initialState());
  assert.is(connected!.type, 'ChatIntegrationConnected');
  assert.is(connected!.data.profile_id, 'p');
  let state = fold([connected]);
  try {
    d.decide(connect('i2'), state);
    assert.unreachable();
  } catch (error) {
    assert.instance(error, DomainError);
    assert.is((error as DomainError).code, 'already_connected');
  }
  const revoked = d.decide(
    {
      type: 'MarkRevoked',
      integration_id: 'i1',
      token_prefix: 'cb_00000000',
      discovered_by: 'test',
      chatsvc_status: 401,
      at: 'x',
    },
    state,
  );
  assert.is(revoked.length, 1);
  state = fold([connected, ...revoked]);
  assert.is(state.status, 'revoked_externally');
  assert.equal(
    d.decide(
      {
        type: 'MarkRevoked',
        integration_id: 'i1',
        token_prefix: 'cb_00000000',
        discovered_by: 'tool',
        chatsvc_status: 401,
        at: 'x',
      },
      state,
    ),
    [],
    'once',
  );
  const again = d.decide(connect('i3'), state);
  state = fold([connected, ...revoked, ...again]);
  assert.is(state.status, 'active');
  assert.equal(
    d.decide(
      {
        type: 'MarkRevoked',
        integration_id: 'i1',
        token_prefix: 'cb_00000000',
        discovered_by: 'x',
        chatsvc_status: 401,
        at: 'x',
      },
      state,
    ),
    [],
    'a stale integration is not revoked',
  );
  const deleted = d.decide({ type: 'Delete', at: 'x' }, state);
  assert.is(deleted[0]!.type, 'ChatIntegrationDeleted');
  assert.is(fold([connected, ...revoked, ...again, ...deleted]).status, null);
  assert.throws(
    () => d.decide({ type: 'Delete', at: 'x' }, d.initialState()),
    (e: DomainError) => e.code === 'not_configured',
  );
});

test('a reconnect of the same bot keeps the integration id: a late 401 to the revoked token does not revoke the fresh one', () => {
  const d = integrationDecider('p');
  const fold = (events: any[]) => events.reduce(d.evolve, d.initialState());
  const [connected] = d.decide(connect('i1', 'cb_11111111'), d.initialState());
  const revoked = d.decide(
    {
      type: 'MarkRevoked',
      integration_id: 'i1',
      token_prefix: 'cb_11111111',
      discovered_by: 'test',
      chatsvc_status: 401,
      at: 'x',
    },
    fold([connected]),
  );
  const again = d.decide(connect('i1', 'cb_22222222'), fold([connected, ...revoked]));
  const state = fold([connected, ...revoked, ...again]);
  assert.equal(
    { status: state.status, integration_id: state.integration_id },
    { status: 'active', integration_id: 'i1' },
  );
  assert.equal(
    d.decide(
      {
        type: 'MarkRevoked',
        integration_id: 'i1',
        token_prefix: 'cb_11111111',
        discovered_by: 'socket',
        chatsvc_status: 401,
        at: 'x',
      },
      state,
    ),
    [],
    "the old token's 401",
  );
  assert.is(
    d.decide(
      {
        type: 'MarkRevoked',
        integration_id: 'i1',
        token_prefix: 'cb_22222222',
        discovered_by: 'socket',
        chatsvc_status: 401,
        at: 'x',
      },
      state,
    ).length,
    1,
    "the fresh token's 401",
  );
});

test.run();
