// The push subscription decider, given/when/then: subscribe, again (nothing), new keys,
// another user's takeover, unsubscribe (owner only), dropped by the push service; and the id
// from the endpoint.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pushSubscriptionDecider, pushSubscriptionId } from '../../../domain/chat/push/decider.ts';
import type { PushSubscriptionEvent } from '../../../domain/chat/push/events.ts';
import { spec } from '../../support/given-when-then.ts';

const test = suite('chat web push: subscription decider');
const given = spec(pushSubscriptionDecider);
const ID = pushSubscriptionId('https://push.example/abc');
const at = '2027-01-01T00:00:00.000Z';
const sub = (user_id: string, keys_hash = 'k1') => ({
  type: 'Subscribe' as const,
  subscription_id: ID,
  user_id,
  origin: 'https://push.example',
  endpoint_sealed: 'v1.e',
  keys_sealed: 'v1.k',
  keys_hash,
  at,
});
const added = (user_id: string, keys_hash = 'k1'): PushSubscriptionEvent => {
  const { type: _t, ...data } = sub(user_id, keys_hash);
  return { type: 'PushSubscriptionAdded', data };
};
const removed = (
  user_id: string,
  reason: 'unsubscribed' | 'replaced' | 'gone',
  status: number | null = null,
): PushSubscriptionEvent => ({
  type: 'PushSubscriptionRemoved',
  data: { subscription_id: ID, user_id, reason, status, at },
});

test('subscribe once; the same keys again: nothing; new keys: added again', () => {
  given([])
    .when(sub('u1'))
    .then([added('u1')]);
  given([added('u1')])
    .when(sub('u1'))
    .then([]);
  given([added('u1')])
    .when(sub('u1', 'k2'))
    .then([added('u1', 'k2')]);
  given([added('u1'), removed('u1', 'unsubscribed')])
    .when(sub('u1'))
    .then([added('u1')]);
});

test("another user takes the browser over: the previous owner's is removed first", () => {
  given([added('u1')])
    .when(sub('u2'))
    .then([removed('u1', 'replaced'), added('u2')]);
});

test('unsubscribe: the owner only; dropped by the push service once', () => {
  given([added('u1')])
    .when({ type: 'Unsubscribe', subscription_id: ID, user_id: 'u1', at })
    .then([removed('u1', 'unsubscribed')]);
  given([added('u1')])
    .when({ type: 'Unsubscribe', subscription_id: ID, user_id: 'u2', at })
    .thenError('push_subscription_not_found');
  given([])
    .when({ type: 'Unsubscribe', subscription_id: ID, user_id: 'u1', at })
    .thenError('push_subscription_not_found');
  given([added('u1')])
    .when({ type: 'Drop', subscription_id: ID, status: 410, at })
    .then([removed('u1', 'gone', 410)]);
  given([added('u1'), removed('u1', 'gone', 410)])
    .when({ type: 'Drop', subscription_id: ID, status: 410, at })
    .then([]);
});

test('the id: a UUID from the endpoint, stable, different per endpoint', () => {
  assert.match(ID, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is(pushSubscriptionId('https://push.example/abc'), ID);
  assert.is.not(pushSubscriptionId('https://push.example/abd'), ID);
});

test.run();
