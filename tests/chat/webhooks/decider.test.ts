// The incoming-webhook decider (`chat.webhook-<uuid>`), given/when/then: created once, updates
// record only what changes, deleted once; nothing after delete.

import { suite } from 'uvu';
import { webhookDecider } from '../../../domain/chat/webhooks/decider.ts';
import type { WebhookEvent } from '../../../domain/chat/webhooks/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const create = {
  type: 'Create' as const,
  webhook_id: 'w1',
  channel_id: 'c1',
  community_id: 'k1',
  name: 'CI',
  avatar_url: null,
  token_hash: 'hash',
  by: 'u1',
  at,
};
const created: WebhookEvent = {
  type: 'WebhookCreated',
  data: {
    webhook_id: 'w1',
    channel_id: 'c1',
    community_id: 'k1',
    name: 'CI',
    avatar_url: null,
    token_hash: 'hash',
    created_by: 'u1',
    at,
  },
};
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { webhook_id: 'w1', by: 'u1', at } };
const webhook = spec(webhookDecider);
const test = suite('domain: chat webhooks');

test('Create: a new webhook; webhook_exists on an existing stream', () => {
  webhook([]).when(create).then([created]);
  webhook([created]).when(create).thenError('webhook_exists');
});

test('Update: only the changed fields; deactivate then reactivate; nothing when nothing changes', () => {
  webhook([created])
    .when({ type: 'Update', changes: { name: 'Deploys', avatar_url: null }, by: 'u1', at })
    .then([{ type: 'WebhookUpdated', data: { webhook_id: 'w1', changes: { name: 'Deploys' }, by: 'u1', at } }]);
  const off: WebhookEvent = {
    type: 'WebhookUpdated',
    data: { webhook_id: 'w1', changes: { active: false }, by: 'u1', at },
  };
  webhook([created])
    .when({ type: 'Update', changes: { active: false }, by: 'u1', at })
    .then([off]);
  webhook([created, off])
    .when({ type: 'Update', changes: { active: false }, by: 'u1', at })
    .then([]);
  webhook([created, off])
    .when({ type: 'Update', changes: { active: true }, by: 'u1', at })
    .then([{ type: 'WebhookUpdated', data: { webhook_id: 'w1', changes: { active: true }, by: 'u1', at } }]);
  webhook([created])
    .when({ type: 'Update', changes: { name: 'CI', active: true }, by: 'u1', at })
    .then([]);
});

test('Delete once; update or delete of an unknown or deleted webhook is webhook_not_found', () => {
  webhook([created]).when({ type: 'Delete', by: 'u1', at }).then([deleted]);
  webhook([created, deleted]).when({ type: 'Delete', by: 'u1', at }).thenError('webhook_not_found');
  webhook([created, deleted])
    .when({ type: 'Update', changes: { name: 'x' }, by: 'u1', at })
    .thenError('webhook_not_found');
  webhook([])
    .when({ type: 'Update', changes: { name: 'x' }, by: 'u1', at })
    .thenError('webhook_not_found');
  webhook([]).when({ type: 'Delete', by: 'u1', at }).thenError('webhook_not_found');
});

test.run();
