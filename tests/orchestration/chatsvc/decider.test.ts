// The chat-service integration decider (`orch.integration-<profile id>`), given/when/then: connect,
// the external revocation matched to the integration and token that met the 401, and delete.

import { suite } from 'uvu';
import { integrationDecider } from '../../../domain/orchestration/chatsvc/decider.ts';
import type { ConnectedData, IntegrationEvent } from '../../../domain/orchestration/chatsvc/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const data: ConnectedData = {
  profile_id: 'p1',
  integration_id: 'i1',
  instance_url: 'https://chat.example',
  bot_user_id: 'b1',
  bot_username: 'bot',
  token_prefix: 'cb_00000000',
  token_sealed: 'sealed',
  token_expires_at: null,
  verify_tls: true,
  identity_fingerprint: 'ff',
  default_community_id: null,
  at,
};
const connected: IntegrationEvent = { type: 'ChatIntegrationConnected', data: { ...data } };
const revoke = {
  type: 'MarkRevoked' as const,
  integration_id: 'i1',
  token_prefix: 'cb_00000000',
  discovered_by: 'socket',
  chatsvc_status: 401,
  at,
};
const revoked: IntegrationEvent = {
  type: 'IntegrationRevokedExternally',
  data: { profile_id: 'p1', integration_id: 'i1', discovered_by: 'socket', chatsvc_status: 401, at },
};
const deleted: IntegrationEvent = {
  type: 'ChatIntegrationDeleted',
  data: { profile_id: 'p1', integration_id: 'i1', at },
};
const integration = spec(integrationDecider('p1'));
const test = suite('domain: chat-service integration');

test('Connect: from none or revoked_externally; refused while active (already_connected); again after delete', () => {
  integration([]).when({ type: 'Connect', data }).then([connected]);
  integration([connected]).when({ type: 'Connect', data }).thenError('already_connected');
  integration([connected, revoked])
    .when({ type: 'Connect', data: { ...data, token_prefix: 'cb_11111111' } })
    .then([{ type: 'ChatIntegrationConnected', data: { ...data, token_prefix: 'cb_11111111' } }]);
  integration([connected, deleted]).when({ type: 'Connect', data }).then([connected]);
});

test("MarkRevoked: only the active integration and the token that met the 401, once; the stream's profile id is filled in", () => {
  integration([connected]).when(revoke).then([revoked]);
  integration([connected, revoked]).when(revoke).then([]);
  integration([connected])
    .when({ ...revoke, token_prefix: 'cb_99999999' })
    .then([]);
  integration([connected])
    .when({ ...revoke, integration_id: 'i0' })
    .then([]);
  integration([]).when(revoke).then([]);
  // A late refusal of the old token does not revoke the fresh one of a reconnect.
  const reconnected: IntegrationEvent = {
    type: 'ChatIntegrationConnected',
    data: { ...data, token_prefix: 'cb_11111111' },
  };
  integration([connected, revoked, reconnected]).when(revoke).then([]);
});

test('Delete: the configured integration, active or revoked; not_configured when there is none', () => {
  integration([connected]).when({ type: 'Delete', at }).then([deleted]);
  integration([connected, revoked]).when({ type: 'Delete', at }).then([deleted]);
  integration([]).when({ type: 'Delete', at }).thenError('not_configured');
  integration([connected, deleted]).when({ type: 'Delete', at }).thenError('not_configured');
});

test.run();
