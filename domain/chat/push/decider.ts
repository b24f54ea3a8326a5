// A web-push subscription (`chat.push_subscription-<id>`). Its id is derived from the endpoint
// (pushSubscriptionId), so one browser's subscription is one stream whoever subscribes it: the
// same user again with the same keys changes nothing, new keys replace the old ones, another
// user takes it over (the previous owner's is removed first, reason `replaced`). The owner
// removes it (`unsubscribed`); the push service answering 404 or 410 drops it (`gone`).
//
// The endpoint and the keys are delivery secrets (they let anyone push to the browser): the
// events carry them sealed with the server key (bound to the subscription id), plus a hash of
// the keys (to tell a re-subscription with new keys) and the push service's origin, which is
// not secret. Nothing else about the browser is kept.

import { createHash } from 'node:crypto';
import { DomainError, type Decider } from '../../shared/decider.ts';
import type { PushSubscriptionEvent } from './events.ts';

export type PushSubscriptionCommand =
  | {
      type: 'Subscribe';
      subscription_id: string;
      user_id: string;
      origin: string;
      endpoint_sealed: string;
      keys_sealed: string;
      keys_hash: string;
      at: string;
    }
  | { type: 'Unsubscribe'; subscription_id: string; user_id: string; at: string }
  /** The push service said the subscription is gone (404/410). */
  | { type: 'Drop'; subscription_id: string; status: number; at: string };

export interface PushSubscriptionState {
  user_id: string | null;
  keys_hash: string | null;
}

export const pushSubscriptionDecider: Decider<PushSubscriptionState, PushSubscriptionCommand, PushSubscriptionEvent> = {
  initialState: () => ({ user_id: null, keys_hash: null }),
  evolve: (_state, event) =>
    event.type === 'PushSubscriptionAdded'
      ? { user_id: event.data.user_id, keys_hash: event.data.keys_hash }
      : { user_id: null, keys_hash: null },
  decide(command, state) {
    switch (command.type) {
      case 'Subscribe': {
        const { type: _type, ...data } = command;
        if (state.user_id === command.user_id && state.keys_hash === command.keys_hash) return [];
        const added: PushSubscriptionEvent = { type: 'PushSubscriptionAdded', data };
        if (state.user_id && state.user_id !== command.user_id) {
          return [
            {
              type: 'PushSubscriptionRemoved',
              data: {
                subscription_id: command.subscription_id,
                user_id: state.user_id,
                reason: 'replaced',
                status: null,
                at: command.at,
              },
            },
            added,
          ];
        }
        return [added];
      }
      case 'Unsubscribe':
        if (state.user_id !== command.user_id)
          throw new DomainError('not_found', 'push_subscription_not_found', 'no such push subscription');
        return [
          {
            type: 'PushSubscriptionRemoved',
            data: {
              subscription_id: command.subscription_id,
              user_id: command.user_id,
              reason: 'unsubscribed',
              status: null,
              at: command.at,
            },
          },
        ];
      case 'Drop':
        if (!state.user_id) return [];
        return [
          {
            type: 'PushSubscriptionRemoved',
            data: {
              subscription_id: command.subscription_id,
              user_id: state.user_id,
              reason: 'gone',
              status: command.status,
              at: command.at,
            },
          },
        ];
    }
  },
};

/** The subscription id of an endpoint: a UUID (version 8, RFC 9562) from its SHA-256. */
export function pushSubscriptionId(endpoint: string): string {
  const b = createHash('sha256').update(`push_endpoint:${endpoint}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Seal contexts: a sealed endpoint or key pair opens only as its own subscription's. */
export const endpointSealContext = (id: string) => `push_endpoint:${id}`;
export const keysSealContext = (id: string) => `push_keys:${id}`;
