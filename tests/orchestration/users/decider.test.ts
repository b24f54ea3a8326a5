// The account and session deciders, given/when/then.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sessionDecider, SESSION_TTL_MS } from '../../../domain/orchestration/users/session.ts';
import type { SessionEvent, UserEvent } from '../../../domain/orchestration/users/events.ts';
import { BOOTSTRAP_ADMIN_ID, RUNNER_ID, userDecider } from '../../../domain/orchestration/users/decider.ts';
import { spec } from '../../support/given-when-then.ts';

const given = spec(userDecider);
const at = '2026-01-01T00:00:00.000Z';
const key = (n: number) => ({ api_key_hash: `hash-${n}`, api_key_sealed: `sealed-${n}` });
const created = (overrides: Partial<Extract<UserEvent, { type: 'UserCreated' }>['data']> = {}): UserEvent => ({
  type: 'UserCreated',
  data: {
    user_id: 'u1',
    username: 'ann',
    email: 'ann@example.test',
    role: 'user',
    auth_source: 'local',
    principal_type: 'account',
    ...key(1),
    password_hash: null,
    at,
    created_by: null,
    ...overrides,
  },
});

const test = suite('domain: users and sessions');

test('CreateUser on a new stream creates; on an existing one conflicts', () => {
  const command = {
    type: 'CreateUser' as const,
    user_id: 'u1',
    username: 'ann',
    email: 'ann@example.test',
    role: 'user' as const,
    auth_source: 'local' as const,
    key: key(1),
    password_hash: null,
    by: null,
    at,
  };
  given([]).when(command).then([created()]);
  given([created()]).when(command).thenError('user_exists');
});

test('EnsureBootstrapAdmin: creates once, nothing for the same key, a rotation for a changed key', () => {
  const first = given([]).when({ type: 'EnsureBootstrapAdmin', key: key(1), at });
  first.then((events) => {
    assert.is(events.length, 1);
    assert.is(events[0]!.type, 'UserCreated');
    assert.is(events[0]!.data.user_id, BOOTSTRAP_ADMIN_ID);
    assert.is((events[0]!.data as { role: string }).role, 'admin');
  });
  const admin = created({ user_id: BOOTSTRAP_ADMIN_ID, role: 'admin', auth_source: 'bootstrap' });
  given([admin])
    .when({ type: 'EnsureBootstrapAdmin', key: key(1), at })
    .then([]);
  given([admin])
    .when({ type: 'EnsureBootstrapAdmin', key: key(2), at })
    .then([
      {
        type: 'UserApiKeyRotated',
        data: { user_id: BOOTSTRAP_ADMIN_ID, ...key(2), rotated_by: null, reason: 'admin_api_key_changed', at },
      },
    ]);
});

test('EnsureRunner registers a non-admin service principal', () => {
  given([])
    .when({ type: 'EnsureRunner', key: key(1), at })
    .then((events) => {
      const data = events[0]!.data as Record<string, unknown>;
      assert.is(data.user_id, RUNNER_ID);
      assert.is(data.principal_type, 'service');
      assert.is.not(data.role, 'admin');
    });
});

test('RotateApiKey, ChangeRole, SetActive need an existing account; no-ops produce no event', () => {
  given([])
    .when({ type: 'RotateApiKey', key: key(2), by: 'x', reason: 'admin', at })
    .thenError('user_not_found');
  given([]).when({ type: 'ChangeRole', role: 'admin', by: 'x', at }).thenError('user_not_found');
  given([created()]).when({ type: 'ChangeRole', role: 'user', by: 'x', at }).then([]);
  given([created()])
    .when({ type: 'ChangeRole', role: 'readonly', by: 'x', at })
    .then([{ type: 'UserRoleChanged', data: { user_id: 'u1', role: 'readonly', changed_by: 'x', at } }]);
  given([created()]).when({ type: 'SetActive', is_active: true, by: 'x', at }).then([]);
  const off: UserEvent = { type: 'UserDeactivated', data: { user_id: 'u1', changed_by: 'x', at } };
  given([created()]).when({ type: 'SetActive', is_active: false, by: 'x', at }).then([off]);
  given([created(), off])
    .when({ type: 'SetActive', is_active: true, by: 'x', at })
    .then([{ type: 'UserReactivated', data: { user_id: 'u1', changed_by: 'x', at } }]);
});

test('sessions: start once with a twelve-hour expiry, end once', () => {
  const when = spec(sessionDecider);
  const started: SessionEvent = {
    type: 'SessionStarted',
    data: {
      session_hash: 'h',
      user_id: 'u1',
      via: 'password',
      expires_at: new Date(Date.parse(at) + SESSION_TTL_MS).toISOString(),
      at,
    },
  };
  when([]).when({ type: 'StartSession', session_hash: 'h', user_id: 'u1', via: 'password', at }).then([started]);
  assert.is(SESSION_TTL_MS, 12 * 3600 * 1000);
  when([started])
    .when({ type: 'StartSession', session_hash: 'h', user_id: 'u1', via: 'password', at })
    .thenError('session_exists');
  const ended: SessionEvent = {
    type: 'SessionEnded',
    data: { session_hash: 'h', user_id: 'u1', reason: 'logout', at },
  };
  when([started]).when({ type: 'EndSession', at }).then([ended]);
  when([started, ended]).when({ type: 'EndSession', at }).then([]);
  when([]).when({ type: 'EndSession', at }).then([]);
});

test.run();
