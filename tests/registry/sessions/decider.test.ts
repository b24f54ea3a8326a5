// The registry session decider, given/when/then: started once with its expiry, ended once.

import { suite } from 'uvu';
import { REGISTRY_SESSION_TTL_MS, registrySessionDecider } from '../../../domain/registry/sessions/decider.ts';
import type { RegistrySessionEvent } from '../../../domain/registry/sessions/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T01:00:00.000Z';
const start = {
  type: 'StartSession' as const,
  session_hash: 'h1',
  subject: 'sub',
  name: 'Ann',
  email: null,
  role: 'admin' as const,
  at,
};
const started: RegistrySessionEvent = {
  type: 'RegistrySessionStarted',
  data: {
    session_hash: 'h1',
    subject: 'sub',
    name: 'Ann',
    email: null,
    role: 'admin',
    via: 'oidc',
    expires_at: new Date(Date.parse(at) + REGISTRY_SESSION_TTL_MS).toISOString(),
    at,
  },
};
const ended: RegistrySessionEvent = {
  type: 'RegistrySessionEnded',
  data: { session_hash: 'h1', reason: 'logout', at: later },
};
const session = spec(registrySessionDecider);
const test = suite('domain: registry sessions');

test('StartSession starts a session expiring twelve hours later; a second start is session_exists', () => {
  session([]).when(start).then([started]);
  session([started]).when(start).thenError('session_exists');
  session([started, ended]).when(start).thenError('session_exists');
});

test('EndSession ends a started session once; ending an unknown or ended one appends nothing', () => {
  session([started]).when({ type: 'EndSession', at: later }).then([ended]);
  session([started, ended]).when({ type: 'EndSession', at: later }).then([]);
  session([]).when({ type: 'EndSession', at: later }).then([]);
});

test.run();
